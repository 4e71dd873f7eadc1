/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the control-request tokenizer and dispatcher
 * (vsw_ctl_split, vsw_ctl_execute) on arbitrary request lines, against a
 * small dummy command table. Input: byte 0 picks the word limit for a
 * direct vsw_ctl_split call; the rest is the line (cut at the first NUL,
 * at most VSW_CTL_LINE_MAX bytes, like the server does).
 *
 * Checks: split words are NUL-terminated, lie inside the line, in order,
 * without overlap, and carry no control byte but tab (the header promises
 * such lines are refused); the count respects the limit; execute agrees with
 * split on success/failure; every reply is one header-less body that ends in
 * a newline, an error reply is one printable line, and a --json reply is
 * well-formed JSON.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsw/ctl.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* echo: every argument back (JSON: a string array). */
static void
cmd_echo(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	(void)ctx;
	if (r->json) {
		vsw_ctl_reply_printf(r, "{\"args\": [");
		for (int i = 1; i < argc; i++) {
			vsw_ctl_reply_printf(r, "%s", i > 1 ? ", " : "");
			vsw_ctl_reply_json_str(r, argv[i]);
		}
		vsw_ctl_reply_printf(r, "]}\n");
		return;
	}
	for (int i = 1; i < argc; i++)
		vsw_ctl_reply_printf(r, "%s%s", i > 1 ? " " : "", argv[i]);
	vsw_ctl_reply_printf(r, "\n");
}

/* set KEY VALUE: fails on an empty key, echoing the value in the error. */
static void
cmd_set(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	(void)ctx;
	FZ_CHECK(argc == 3);
	if (argv[1][0] == '\0') {
		vsw_ctl_reply_error(r, "empty key for value '%s'", argv[2]);
		return;
	}
	vsw_ctl_reply_printf(r, r->json ? "{}\n" : "ok\n");
}

static void
cmd_fail(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	(void)ctx;
	vsw_ctl_reply_error(r, "%s failed with %d words", argv[0], argc);
}

static const struct vsw_ctl_command cmds[] = {
	{"echo", "[WORD...]", 0, -1, cmd_echo, "print the words back"},
	{"set", "KEY VALUE", 2, 2, cmd_set, "set a key"},
	{"fail", "[X]", 0, 1, cmd_fail, "always fails"},
	{"port-show", "[PORT]", 0, 1, cmd_echo, "like echo"},
};

/* A tiny JSON validator: one value, then only whitespace. */
static const char *json_value(const char *p, const char *end, int depth);

static const char *
json_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
		p++;
	return p;
}

static const char *
json_string(const char *p, const char *end)
{
	if (p >= end || *p != '"')
		return NULL;
	for (p++; p < end; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '"')
			return p + 1;
		if (c < 0x20)
			return NULL;
		if (c != '\\')
			continue;
		if (++p >= end)
			return NULL;
		if (*p == 'u') {
			for (int i = 0; i < 4; i++)
				if (++p >= end || !strchr("0123456789abcdefABCDEF",
							*p))
					return NULL;
		} else if (!strchr("\"\\/bfnrt", *p)) {
			return NULL;
		}
	}
	return NULL;
}

static const char *
json_list(const char *p, const char *end, int depth, char close, bool obj)
{
	p = json_ws(p + 1, end);
	if (p < end && *p == close)
		return p + 1;
	for (;;) {
		if (obj) {
			p = json_string(json_ws(p, end), end);
			if (p == NULL)
				return NULL;
			p = json_ws(p, end);
			if (p >= end || *p != ':')
				return NULL;
			p++;
		}
		p = json_value(p, end, depth + 1);
		if (p == NULL)
			return NULL;
		p = json_ws(p, end);
		if (p < end && *p == close)
			return p + 1;
		if (p >= end || *p != ',')
			return NULL;
		p++;
	}
}

static const char *
json_value(const char *p, const char *end, int depth)
{
	p = json_ws(p, end);
	if (p >= end || depth > 16)
		return NULL;
	if (*p == '"')
		return json_string(p, end);
	if (*p == '{')
		return json_list(p, end, depth, '}', true);
	if (*p == '[')
		return json_list(p, end, depth, ']', false);
	if (*p >= '0' && *p <= '9') { /* an integer: the "schema" number */
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		return p;
	}
	return NULL; /* the dummy handlers produce nothing else */
}

static void
check_split(const char *orig, size_t len, unsigned max)
{
	char line[VSW_CTL_LINE_MAX + 1];
	char *argv[VSW_CTL_ARGS_MAX + 1];
	const char *err;
	int n;

	memcpy(line, orig, len + 1);
	argv[max] = (char *)(uintptr_t)0x1; /* must stay untouched */
	n = vsw_ctl_split(line, argv, max, &err);
	FZ_CHECK(argv[max] == (char *)(uintptr_t)0x1);
	if (n < 0) {
		FZ_CHECK(n == -EINVAL || n == -E2BIG);
		FZ_CHECK(err != NULL && err[0] != '\0');
		return;
	}
	FZ_CHECK((unsigned)n <= max);
	for (int i = 0; i < n; i++) {
		size_t wl = strlen(argv[i]);

		FZ_CHECK(argv[i] >= line && argv[i] + wl <= line + len);
		if (i > 0)
			FZ_CHECK(argv[i] > argv[i - 1] + strlen(argv[i - 1]));
		/* a word never holds more bytes than its source span */
		for (size_t k = 0; k < wl; k++) {
			unsigned char c = (unsigned char)argv[i][k];

			FZ_CHECK(c >= 0x20 || c == '\t');
		}
	}
}

static void
check_reply(const struct vsw_ctl_reply *r, int rc)
{
	FZ_CHECK(!r->oom);
	FZ_CHECK((rc == 0) == !r->error);
	FZ_CHECK(r->len > 0 && r->buf != NULL && r->buf[r->len] == '\0');
	FZ_CHECK(strlen(r->buf) == r->len);
	FZ_CHECK(r->buf[r->len - 1] == '\n');
	if (r->error) {
		/* one printable line */
		for (size_t i = 0; i + 1 < r->len; i++) {
			unsigned char c = (unsigned char)r->buf[i];

			FZ_CHECK(c >= 0x20 && c < 0x7f);
		}
	}
	if (r->json) {
		const char *end = r->buf + r->len;
		const char *e = json_value(r->buf, end, 0);

		FZ_CHECK(e != NULL && json_ws(e, end) == end);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[VSW_CTL_LINE_MAX + 1], orig[VSW_CTL_LINE_MAX + 1];
	char *argv[VSW_CTL_ARGS_MAX];
	struct vsw_ctl_reply r;
	const char *err;
	unsigned max;
	size_t len;
	int rc, n;

	if (size == 0)
		return 0;
	max = data[0] % (VSW_CTL_ARGS_MAX + 1);
	data++;
	size--;
	len = size < VSW_CTL_LINE_MAX ? size : VSW_CTL_LINE_MAX;
	memcpy(orig, data, len);
	orig[len] = '\0';
	len = strlen(orig);

	check_split(orig, len, max);

	memcpy(line, orig, len + 1);
	n = vsw_ctl_split(line, argv, VSW_CTL_ARGS_MAX, &err);
	memcpy(line, orig, len + 1);
	vsw_ctl_reply_init(&r, false);
	rc = vsw_ctl_execute(cmds, sizeof(cmds) / sizeof(cmds[0]), NULL, line,
		&r);
	if (n <= 0)
		FZ_CHECK(rc == -1 && r.error);
	check_reply(&r, rc);
	vsw_ctl_reply_free(&r);
	return 0;
}
