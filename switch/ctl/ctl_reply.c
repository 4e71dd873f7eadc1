/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control replies: a growable text buffer that command handlers fill, with
 * JSON string escaping. Control thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsw/ctl.h>

/* Replies larger than this are cut: a reply is for people and scripts. */
#define REPLY_MAX (16u << 20)

void
vsw_ctl_reply_init(struct vsw_ctl_reply *r, bool json)
{
	memset(r, 0, sizeof(*r));
	r->json = json;
}

void
vsw_ctl_reply_free(struct vsw_ctl_reply *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

static bool
reserve(struct vsw_ctl_reply *r, size_t extra)
{
	size_t cap;
	char *nb;

	if (r->oom)
		return false;
	if (r->len + extra + 1 <= r->cap)
		return true;
	if (r->len + extra + 1 > REPLY_MAX) {
		r->oom = true;
		return false;
	}
	cap = r->cap ? r->cap : 256;
	while (cap < r->len + extra + 1)
		cap *= 2;
	nb = realloc(r->buf, cap);
	if (nb == NULL) {
		r->oom = true;
		return false;
	}
	r->buf = nb;
	r->cap = cap;
	return true;
}

static void __attribute__((format(printf, 2, 0)))
vappend(struct vsw_ctl_reply *r, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || !reserve(r, (size_t)n))
		return;
	vsnprintf(r->buf + r->len, (size_t)n + 1, fmt, ap);
	r->len += (size_t)n;
}

void
vsw_ctl_reply_printf(struct vsw_ctl_reply *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vappend(r, fmt, ap);
	va_end(ap);
}

void
vsw_ctl_reply_json_str(struct vsw_ctl_reply *r, const char *s)
{
	vsw_ctl_reply_printf(r, "\"");
	for (; s != NULL && *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			vsw_ctl_reply_printf(r, "\\%c", c);
		else if (c == '\n')
			vsw_ctl_reply_printf(r, "\\n");
		else if (c < 0x20 || c == 0x7f)
			vsw_ctl_reply_printf(r, "\\u%04x", c);
		else
			vsw_ctl_reply_printf(r, "%c", c);
	}
	vsw_ctl_reply_printf(r, "\"");
}

void
vsw_ctl_reply_json_finish(struct vsw_ctl_reply *r)
{
	char field[32];
	size_t n, rest;
	bool empty;

	if (!r->json || r->oom || r->len == 0 || r->buf[0] != '{')
		return;
	empty = r->len >= 2 && r->buf[1 + strspn(r->buf + 1, " ")] == '}';
	n = (size_t)snprintf(field, sizeof(field), "\"schema\": %d%s",
		VSW_CTL_JSON_SCHEMA, empty ? "" : ", ");
	if (!reserve(r, n))
		return;
	rest = r->len - 1;
	memmove(r->buf + 1 + n, r->buf + 1, rest + 1);
	memcpy(r->buf + 1, field, n);
	r->len += n;
}

void
vsw_ctl_reply_error(struct vsw_ctl_reply *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* One printable ASCII line, whatever the message echoes back. */
	for (char *p = msg; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '\n' || c == '\r' || c == '\t')
			*p = ' ';
		else if (c < 0x20 || c >= 0x7f)
			*p = '?';
	}
	r->len = 0;
	r->oom = false;
	r->error = true;
	if (r->json) {
		vsw_ctl_reply_printf(r, "{\"error\": ");
		vsw_ctl_reply_json_str(r, msg);
		vsw_ctl_reply_printf(r, "}\n");
	} else {
		vsw_ctl_reply_printf(r, "error: %s\n", msg);
	}
}
