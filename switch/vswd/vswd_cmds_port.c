/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Port commands that change things: port-add, port-del, tx-retries-set
 * (port-show is in vswd_cmds_port_show.c). Control thread. Arguments are
 * untrusted text: every value is range-checked before anything changes.
 *
 *   port-add NAME vhost-user [mode=server|client] [path=SOCK] [queues=N]
 *                            [sock-mode=OCTAL] [owner=UID] [group=GID]
 *                            [max-ring-size=N]
 *                            [offloads=on|off]
 *   port-add NAME dpdk devargs=DEVARGS [queues=N]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsw/port.h>
#include <vsw/vport.h>
#include <vsw/virtq.h>

#include "vswd_priv.h"

static bool
parse_ulong(const char *s, int base, unsigned long max, unsigned long *out)
{
	char *end;

	if (*s == '\0' || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*out = strtoul(s, &end, base);
	return errno == 0 && *end == '\0' && *out <= max;
}

static bool
valid_name(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len >= VSW_PORT_NAME_MAX)
		return false;
	for (const char *p = name; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				(*p >= '0' && *p <= '9') || *p == '-' ||
				*p == '_' || *p == '.'))
			return false;
	/* A number would be ambiguous in rules (in_port=3). */
	return strspn(name, "0123456789") != len;
}

static int
parse_type(const char *s, struct vswd_port_args *a)
{
	if (strcmp(s, "vhost-user") == 0 || strcmp(s, "dpdkvhostuser") == 0) {
		a->type = VSWD_PORT_VHOST;
	} else if (strcmp(s, "vhost-user-client") == 0 ||
			strcmp(s, "dpdkvhostuserclient") == 0) {
		a->type = VSWD_PORT_VHOST;
		a->client = true;
	} else if (strcmp(s, "dpdk") == 0) {
		a->type = VSWD_PORT_DPDK;
	} else {
		return -1;
	}
	return 0;
}

/* One key=value option; returns NULL or an error message. */
static const char *
parse_option(const char *opt, struct vswd_port_args *a)
{
	const char *eq = strchr(opt, '=');
	const char *v = eq ? eq + 1 : "";
	size_t klen = eq ? (size_t)(eq - opt) : strlen(opt);
	unsigned long n;

#define KEY(k) (klen == strlen(k) && strncmp(opt, k, klen) == 0)
	if (eq == NULL)
		return "expected key=value";
	if (KEY("mode") && a->type == VSWD_PORT_VHOST) {
		if (strcmp(v, "server") != 0 && strcmp(v, "client") != 0)
			return "mode must be server or client";
		a->client = strcmp(v, "client") == 0;
	} else if (KEY("path") && a->type == VSWD_PORT_VHOST) {
		if (*v == '\0' || strlen(v) >= sizeof(a->path))
			return "path empty or longer than 107 bytes";
		snprintf(a->path, sizeof(a->path), "%s", v);
	} else if (KEY("devargs") && a->type == VSWD_PORT_DPDK) {
		if (*v == '\0' || strlen(v) >= sizeof(a->devargs))
			return "devargs empty or too long";
		snprintf(a->devargs, sizeof(a->devargs), "%s", v);
	} else if (KEY("queues")) {
		if (!parse_ulong(v, 10, VSW_VPORT_QUEUE_PAIRS_MAX, &n) || !n)
			return "queues must be 1..16";
		a->queues = (uint16_t)n;
	} else if (KEY("offloads") && a->type == VSWD_PORT_VHOST) {
		if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
			return "offloads must be on or off";
		a->no_offloads = strcmp(v, "off") == 0;
	} else if (KEY("sock-mode") && a->type == VSWD_PORT_VHOST) {
		if (!parse_ulong(v, 8, 0777, &n) || n == 0)
			return "sock-mode must be octal 1..0777";
		a->sock_mode = (uint32_t)n;
	} else if (KEY("owner") && a->type == VSWD_PORT_VHOST) {
		if (!parse_ulong(v, 10, 0x7fffffff, &n))
			return "owner must be a numeric uid";
		a->owner = (uid_t)n;
	} else if (KEY("group") && a->type == VSWD_PORT_VHOST) {
		if (!parse_ulong(v, 10, 0x7fffffff, &n))
			return "group must be a numeric gid";
		a->group = (gid_t)n;
	} else if (KEY("max-ring-size") && a->type == VSWD_PORT_VHOST) {
		if (!parse_ulong(v, 10, VSW_VIRTQ_SIZE_MAX, &n) || n == 0 ||
			(n & (n - 1)))
			return "max-ring-size must be a power of two 1..32768";
		a->max_ring_size = (uint32_t)n;
	} else {
		return "unknown option for this port type";
	}
#undef KEY
	return NULL;
}

void
vswd_cmd_port_add(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	struct vswd_port_args a = {.queues = 1, .owner = (uid_t)-1,
		.group = (gid_t)-1};
	char err[256];

	if (!valid_name(argv[1])) {
		vsw_ctl_reply_error(r, "bad port name '%.40s' (1..31 of "
			"[A-Za-z0-9._-], not all digits)", argv[1]);
		return;
	}
	if (parse_type(argv[2], &a) < 0) {
		vsw_ctl_reply_error(r, "unknown port type '%.40s' (vhost-user, "
			"vhost-user-client, dpdk)", argv[2]);
		return;
	}
	for (int i = 3; i < argc; i++) {
		const char *msg = parse_option(argv[i], &a);

		if (msg != NULL) {
			vsw_ctl_reply_error(r, "'%.60s': %s", argv[i], msg);
			return;
		}
	}
	if (a.type == VSWD_PORT_DPDK && a.devargs[0] == '\0') {
		vsw_ctl_reply_error(r, "dpdk port needs devargs=");
		return;
	}
	if (a.type == VSWD_PORT_DPDK && !d->opts.allow_devargs_files &&
		vswd_devargs_named_key(a.devargs, err, sizeof(err)) != NULL) {
		vsw_ctl_reply_error(r, "devargs key '%.40s' makes vswd open a "
			"file, socket, interface or program as its user: "
			"refused (vswd --allow-devargs-files allows it)", err);
		return;
	}
	if (a.type == VSWD_PORT_VHOST && a.client && a.path[0] == '\0') {
		vsw_ctl_reply_error(r, "client mode needs path=");
		return;
	}
	if (vswd_port_add(d, argv[1], &a, err, sizeof(err)) < 0) {
		vsw_ctl_reply_error(r, "%s", err);
		return;
	}
	if (r->json) {
		struct vswd_port *p = vswd_port_find(d, argv[1]);

		vsw_ctl_reply_printf(r, "{\"port\": ");
		vsw_ctl_reply_json_str(r, argv[1]);
		vsw_ctl_reply_printf(r, ", \"number\": %u, \"path\": ",
			p->port_no);
		vsw_ctl_reply_json_str(r, p->path);
		vsw_ctl_reply_printf(r, "}\n");
	} else {
		vsw_ctl_reply_printf(r, "port %s added\n", argv[1]);
	}
}

void
vswd_cmd_port_del(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	(void)argc;
	if (vswd_port_del(ctx, argv[1]) < 0) {
		vsw_ctl_reply_error(r, "no port '%.40s'", argv[1]);
		return;
	}
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"deleted\": true}\n");
	else
		vsw_ctl_reply_printf(r, "port %s deleted\n", argv[1]);
}

/* tx-retries-set N [PORT]: every vhost-user port (and later ones) or one. */
void
vswd_cmd_tx_retries_set(
	void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	struct vswd_port *one = NULL;
	unsigned long n;

	if (!parse_ulong(argv[1], 10, VSW_PORT_VHOST_TX_RETRIES_MAX, &n)) {
		vsw_ctl_reply_error(r, "tx-retries-set takes 0..%u",
			VSW_PORT_VHOST_TX_RETRIES_MAX);
		return;
	}
	if (argc == 3) {
		one = vswd_port_find(d, argv[2]);
		if (one == NULL || one->type != VSWD_PORT_VHOST) {
			vsw_ctl_reply_error(
				r, "no vhost-user port '%.40s'", argv[2]);
			return;
		}
		vsw_port_vhost_set_tx_retries(&one->vhost, (unsigned)n);
	} else {
		d->tx_retries_set = true;
		d->tx_retries = (unsigned)n;
		for (struct vswd_port *p = d->ports; p != NULL; p = p->next)
			if (p->type == VSWD_PORT_VHOST)
				vsw_port_vhost_set_tx_retries(
					&p->vhost, (unsigned)n);
	}
	vsw_ctl_reply_printf(r,
		r->json ? "{\"tx_retries_max\": %lu}\n"
			: "tx retries: at most %lu per burst\n",
		n);
}
