/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The metrics HTTP endpoint: GET /metrics serves vswd_metrics_format()'s
 * page. HTTP parsing is libmicrohttpd's (an HTTP parser is attack surface;
 * we do not write one). MHD runs in external-polling epoll mode inside the
 * control thread's libev loop: one ev_io on MHD's epoll fd, one ev_timer on
 * MHD_get_timeout(). So the page is built on the control thread, like every
 * command reply, and reads the same data the same way (PMD counters: one
 * writer each, relaxed loads in vsw_switch_pmd_stats()).
 *
 * Trust: HTTP clients are untrusted. MHD enforces the limits: at most
 * CLIENTS_MAX connections (more are refused at accept), IDLE_SEC without
 * progress closes a connection (slow or silent clients), a connection's
 * request (line + headers) must fit in MEMORY_LIMIT (else 431/413 and
 * close). Only GET and HEAD are served (405 otherwise). Nothing a client
 * sends reaches a PMD; the worst a local client can do is hold the
 * CLIENTS_MAX slots for IDLE_SEC at a time. The listen backlog is
 * CLIENTS_MAX too: a connection whose request and FIN both wait in the
 * backlog is, once accepted, only closed by the idle timeout (MHD reads
 * it once), so a deep backlog would stretch a flood's after-effects to
 * backlog / CLIENTS_MAX * IDLE_SEC.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>
#include <microhttpd.h>

#include "vswd_priv.h"

#define CLIENTS_MAX 32u
#define IDLE_SEC 5u
#define MEMORY_LIMIT (32u * 1024)

struct vswd_metrics {
	struct vswd *d;
	struct ev_loop *loop;
	struct MHD_Daemon *mhd;
	ev_io io_w;
	ev_timer timer_w;
	char listen[80]; /* "ADDR:PORT" as bound */
	unsigned n_conns; /* after the last MHD_run() */
	uint64_t requests;
};

static enum MHD_Result
send_text(struct MHD_Connection *c, unsigned status, char *body, size_t len,
	enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *resp;
	enum MHD_Result rc;

	resp = MHD_create_response_from_buffer(len, body, mode);
	if (resp == NULL) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
		status == MHD_HTTP_OK && mode == MHD_RESPMEM_MUST_FREE ?
		VSWD_METRICS_CONTENT_TYPE : "text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
			"GET, HEAD");
	rc = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return rc;
}

static enum MHD_Result
send_static(struct MHD_Connection *c, unsigned status, const char *body)
{
	return send_text(c, status, (char *)(uintptr_t)body, strlen(body),
		MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
	const char *method, const char *version, const char *upload_data,
	size_t *upload_data_size, void **con_cls)
{
	struct vswd_metrics *m = cls;
	struct vsw_ctl_reply r;
	char *body;

	(void)version;
	(void)upload_data;
	(void)con_cls;
	/* A body (to any method) is not read: answer and let MHD close. */
	*upload_data_size = 0;
	m->requests++;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
			strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return send_static(c, MHD_HTTP_METHOD_NOT_ALLOWED,
			"only GET and HEAD\n");
	if (strcmp(url, "/") == 0)
		return send_static(c, MHD_HTTP_OK,
			"vswd: metrics are at /metrics\n");
	if (strcmp(url, "/metrics") != 0)
		return send_static(c, MHD_HTTP_NOT_FOUND, "not found\n");
	vsw_ctl_reply_init(&r, false);
	vswd_metrics_format(m->d, &r);
	if (r.oom || r.buf == NULL) {
		vsw_ctl_reply_free(&r);
		return send_static(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
			"out of memory\n");
	}
	body = r.buf; /* MHD frees it with free() */
	return send_text(c, MHD_HTTP_OK, body, r.len, MHD_RESPMEM_MUST_FREE);
}

/*
 * Run MHD, then wake up again when it says it needs to (timeouts, and
 * connections it still has work for: then the timeout is 0). One case it
 * does not say (0.9.75): at CLIENTS_MAX it takes its listen socket out of
 * its epoll set and puts it back only at the start of the next MHD_run(),
 * so after connections close nothing would wake us to accept again. Run it
 * once more at once when connections went away, and never sleep longer
 * than BACKSTOP_SEC.
 */
#define BACKSTOP_SEC 1.0

static unsigned
n_connections(struct vswd_metrics *m)
{
	const union MHD_DaemonInfo *i;

	i = MHD_get_daemon_info(m->mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	return i != NULL ? i->num_connections : 0;
}

static void
run_mhd(struct vswd_metrics *m)
{
	MHD_UNSIGNED_LONG_LONG ms;
	double after = BACKSTOP_SEC;
	unsigned n;

	MHD_run(m->mhd);
	n = n_connections(m);
	if (n < m->n_conns)
		after = 0;
	m->n_conns = n;
	if (MHD_get_timeout(m->mhd, &ms) == MHD_YES &&
			(double)ms / 1000.0 < after)
		after = (double)ms / 1000.0;
	ev_timer_stop(m->loop, &m->timer_w);
	ev_timer_set(&m->timer_w, after, 0.0);
	ev_timer_start(m->loop, &m->timer_w);
}

static void
io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	run_mhd(w->data);
}

static void
timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	run_mhd(w->data);
}

/*
 * "on" = 127.0.0.1:VSWD_METRICS_PORT_DEFAULT, "PORT" = 127.0.0.1:PORT,
 * "ADDR:PORT" (IPv4) or "[ADDR]:PORT" (IPv6). Port 0: any free port.
 */
static int
parse_listen(const char *s, struct sockaddr_storage *ss, char *err,
	size_t errlen)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	char addr[64] = "127.0.0.1";
	const char *colon = strrchr(s, ':');
	const char *port_s = colon != NULL ? colon + 1 : s;
	unsigned long port = VSWD_METRICS_PORT_DEFAULT;
	char *end;

	memset(ss, 0, sizeof(*ss));
	if (strcmp(s, "on") != 0) {
		port = strtoul(port_s, &end, 10);
		if (*port_s == '\0' || *end != '\0' || port > 65535)
			goto bad;
	}
	if (colon != NULL) {
		size_t n = (size_t)(colon - s);

		if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
			s++;
			n -= 2;
		}
		if (n == 0 || n >= sizeof(addr))
			goto bad;
		memcpy(addr, s, n);
		addr[n] = '\0';
	}
	if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		return 0;
	}
bad:
	snprintf(err, errlen, "bad metrics address '%.64s' (on, off, PORT, "
		"ADDR:PORT or [ADDR6]:PORT)", s);
	return -1;
}

static struct MHD_Daemon *
start_mhd(struct vswd_metrics *m, const struct sockaddr_storage *ss)
{
	unsigned flags = MHD_USE_EPOLL;

	if (ss->ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	return MHD_start_daemon(flags, 0, NULL, NULL, on_request, m,
		MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)ss,
		MHD_OPTION_CONNECTION_LIMIT, CLIENTS_MAX,
		MHD_OPTION_CONNECTION_TIMEOUT, IDLE_SEC,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MEMORY_LIMIT,
		MHD_OPTION_LISTEN_BACKLOG_SIZE, CLIENTS_MAX,
		MHD_OPTION_END);
}

static void
format_listen(struct vswd_metrics *m, const struct sockaddr_storage *ss)
{
	const union MHD_DaemonInfo *bi;
	char a[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	bi = MHD_get_daemon_info(m->mhd, MHD_DAEMON_INFO_BIND_PORT);
	if (bi != NULL)
		port = bi->port;
	if (ss->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr,
			a, sizeof(a));
		snprintf(m->listen, sizeof(m->listen), "[%s]:%u", a, port);
	} else {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr,
			a, sizeof(a));
		snprintf(m->listen, sizeof(m->listen), "%s:%u", a, port);
	}
}

void
vswd_metrics_stop(struct vswd *d)
{
	struct vswd_metrics *m = d->metrics;

	if (m == NULL)
		return;
	ev_io_stop(m->loop, &m->io_w);
	ev_timer_stop(m->loop, &m->timer_w);
	MHD_stop_daemon(m->mhd);
	VSWD_LOG(INFO, "metrics endpoint %s closed\n", m->listen);
	free(m);
	d->metrics = NULL;
}

int
vswd_metrics_start(struct vswd *d, const char *spec, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct vswd_metrics *m;
	const union MHD_DaemonInfo *ei;

	if (parse_listen(spec, &ss, err, errlen) < 0)
		return -1;
	vswd_metrics_stop(d);
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	m->d = d;
	m->loop = d->loop;
	m->mhd = start_mhd(m, &ss);
	ei = m->mhd != NULL ? MHD_get_daemon_info(m->mhd,
		MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (ei == NULL) {
		snprintf(err, errlen, "cannot serve metrics on %.64s: %s", spec,
			strerror(errno ? errno : EINVAL));
		if (m->mhd != NULL)
			MHD_stop_daemon(m->mhd);
		free(m);
		return -1;
	}
	format_listen(m, &ss);
	ev_io_init(&m->io_w, io_cb, ei->epoll_fd, EV_READ);
	ev_init(&m->timer_w, timer_cb);
	m->io_w.data = m->timer_w.data = m;
	ev_io_start(m->loop, &m->io_w);
	d->metrics = m;
	run_mhd(m);
	VSWD_LOG(NOTICE, "metrics on http://%s/metrics\n", m->listen);
	return 0;
}

/* metrics-endpoint [on|off|PORT|ADDR:PORT]: without an argument, show. */
void
vswd_cmd_metrics_endpoint(void *ctx, int argc, char **argv,
	struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	char err[160];

	if (argc == 2 && strcmp(argv[1], "off") == 0) {
		vswd_metrics_stop(d);
	} else if (argc == 2 && vswd_metrics_start(d, argv[1], err,
			sizeof(err)) < 0) {
		vsw_ctl_reply_error(r, "%s", err);
		return;
	}
	if (r->json) {
		vsw_ctl_reply_printf(r, "{\"enabled\": %s, \"listen\": ",
			d->metrics ? "true" : "false");
		vsw_ctl_reply_json_str(r, d->metrics ? d->metrics->listen : "");
		vsw_ctl_reply_printf(r, ", \"requests\": %" PRIu64 "}\n",
			d->metrics ? d->metrics->requests : 0);
	} else if (d->metrics != NULL) {
		vsw_ctl_reply_printf(r, "metrics on http://%s/metrics (%" PRIu64
			" requests)\n", d->metrics->listen,
			d->metrics->requests);
	} else {
		vsw_ctl_reply_printf(r, "metrics endpoint off\n");
	}
}
