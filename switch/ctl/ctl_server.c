/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control server: the unix socket vswctl talks to, served from vswd's libev
 * loop (control thread only). Owns the listening socket and every client
 * connection. Clients are untrusted: each has a bounded input line, an idle
 * timeout and one reply in flight; the number of clients is bounded; no
 * client can block the loop (all sockets are non-blocking).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <ev.h>

#include <vsw/ctl.h>

struct ctl_client {
	struct vsw_ctl_server *srv;
	ev_io io;
	ev_timer idle;
	int fd;
	size_t in_len;
	char in[VSW_CTL_LINE_MAX + 1];
	char *out;        /* reply being written */
	size_t out_len;
	size_t out_off;
	bool close_after; /* close once the reply is out */
	struct ctl_client *next;
};

struct vsw_ctl_server {
	struct ev_loop *loop;
	ev_io listen_io;
	int listen_fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	const struct vsw_ctl_command *table;
	size_t ncmds;
	void *ctx;
	unsigned nclients;
	struct ctl_client *clients;
	struct vsw_ctl_server_stats st;
};

static void client_io_cb(struct ev_loop *loop, ev_io *w, int revents);

static void
client_close(struct ctl_client *c)
{
	struct vsw_ctl_server *srv = c->srv;
	struct ctl_client **pp;

	ev_io_stop(srv->loop, &c->io);
	ev_timer_stop(srv->loop, &c->idle);
	close(c->fd);
	for (pp = &srv->clients; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	srv->nclients--;
	free(c->out);
	free(c);
}

/* Queue "<status> <len>\n<body>" and switch the watcher to writing. */
static void
client_send(struct ctl_client *c, int status, const char *body, size_t len)
{
	char hdr[32];
	int hl = snprintf(hdr, sizeof(hdr), "%d %zu\n", status, len);

	free(c->out);
	c->out = malloc((size_t)hl + len);
	if (c->out == NULL) {
		c->close_after = true;
		c->out_len = c->out_off = 0;
		return;
	}
	memcpy(c->out, hdr, (size_t)hl);
	if (len > 0)
		memcpy(c->out + hl, body, len);
	c->out_len = (size_t)hl + len;
	c->out_off = 0;
	ev_io_stop(c->srv->loop, &c->io);
	ev_io_set(&c->io, c->fd, EV_WRITE);
	ev_io_start(c->srv->loop, &c->io);
}

static void
client_send_error(struct ctl_client *c, const char *msg)
{
	struct vsw_ctl_reply r;

	vsw_ctl_reply_init(&r, false);
	vsw_ctl_reply_error(&r, "%s", msg);
	client_send(c, 1, r.buf, r.len);
	vsw_ctl_reply_free(&r);
}

static void
client_run_line(struct ctl_client *c, char *line)
{
	struct vsw_ctl_server *srv = c->srv;
	struct vsw_ctl_reply r;
	int rc;

	srv->st.requests++;
	vsw_ctl_reply_init(&r, false);
	rc = vsw_ctl_execute(srv->table, srv->ncmds, srv->ctx, line, &r);
	if (r.oom)
		vsw_ctl_reply_error(&r, "reply too large or out of memory");
	if (rc != 0 || r.error)
		srv->st.errors++;
	client_send(c, (rc != 0 || r.error) ? 1 : 0, r.buf, r.len);
	vsw_ctl_reply_free(&r);
}

/* A complete line is in c->in[0..nl]: run it, keep what follows. */
static void
client_take_line(struct ctl_client *c, size_t nl)
{
	char line[VSW_CTL_LINE_MAX + 1];

	memcpy(line, c->in, nl + 1);
	line[nl + 1] = '\0';
	memmove(c->in, c->in + nl + 1, c->in_len - nl - 1);
	c->in_len -= nl + 1;
	if (memchr(line, '\0', nl) != NULL) {
		c->srv->st.requests++;
		c->srv->st.errors++;
		client_send_error(c, "NUL byte in request");
		return;
	}
	client_run_line(c, line);
}

static void
client_read(struct ctl_client *c)
{
	ssize_t n;
	char *nl;

	n = read(c->fd, c->in + c->in_len, VSW_CTL_LINE_MAX - c->in_len);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		client_close(c);
		return;
	}
	if (n < 0)
		return;
	c->in_len += (size_t)n;
	ev_timer_again(c->srv->loop, &c->idle);
	nl = memchr(c->in, '\n', c->in_len);
	if (nl != NULL) {
		client_take_line(c, (size_t)(nl - c->in));
		return;
	}
	if (c->in_len >= VSW_CTL_LINE_MAX) {
		c->srv->st.closed_oversize++;
		c->close_after = true;
		client_send_error(c, "request line too long (limit 4096 bytes)");
	}
}

static void
client_write(struct ctl_client *c)
{
	ssize_t n;

	if (c->out_off < c->out_len) {
		n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
			MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n < 0) {
			client_close(c);
			return;
		}
		c->out_off += (size_t)n;
		if (c->out_off < c->out_len)
			return;
	}
	free(c->out);
	c->out = NULL;
	c->out_len = c->out_off = 0;
	if (c->close_after) {
		client_close(c);
		return;
	}
	ev_io_stop(c->srv->loop, &c->io);
	ev_io_set(&c->io, c->fd, EV_READ);
	ev_io_start(c->srv->loop, &c->io);
	/* A pipelined request may already be buffered. */
	char *nl = memchr(c->in, '\n', c->in_len);
	if (nl != NULL)
		client_take_line(c, (size_t)(nl - c->in));
}

static void
client_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct ctl_client *c = w->data;

	(void)loop;
	if (revents & EV_WRITE)
		client_write(c);
	else if (revents & EV_READ)
		client_read(c);
}

static void
client_idle_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct ctl_client *c = w->data;

	(void)loop;
	(void)revents;
	c->srv->st.closed_idle++;
	client_close(c);
}

static void
reject_busy(int fd)
{
	static const char body[] = "error: too many control connections\n";
	char msg[64];
	int n = snprintf(msg, sizeof(msg), "1 %zu\n%s", sizeof(body) - 1, body);

	/* Best effort: the socket is non-blocking and the reply is tiny. */
	if (send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		(void)0;
	close(fd);
}

static void
listen_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct vsw_ctl_server *srv = w->data;
	struct ctl_client *c;
	int fd;

	(void)revents;
	fd = accept4(srv->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (srv->nclients >= VSW_CTL_CLIENTS_MAX) {
		srv->st.rejected_busy++;
		reject_busy(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		close(fd);
		return;
	}
	c->srv = srv;
	c->fd = fd;
	ev_io_init(&c->io, client_io_cb, fd, EV_READ);
	c->io.data = c;
	ev_init(&c->idle, client_idle_cb);
	c->idle.repeat = VSW_CTL_IDLE_SEC;
	c->idle.data = c;
	ev_io_start(loop, &c->io);
	ev_timer_again(loop, &c->idle);
	c->next = srv->clients;
	srv->clients = c;
	srv->nclients++;
	srv->st.accepted++;
}

static int
listen_unix(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat stt;
	mode_t old;
	int fd, rc;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* Replace a stale socket, never any other kind of file. */
	if (lstat(path, &stt) == 0) {
		if (!S_ISSOCK(stt.st_mode)) {
			errno = EEXIST;
			return -1;
		}
		unlink(path);
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* created 0660 by bind itself: no chmod by name afterwards, which
	 * would follow a symlink swapped in meanwhile */
	old = umask(0117);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0 || listen(fd, 128) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

struct vsw_ctl_server *
vsw_ctl_server_create(struct ev_loop *loop, const char *path,
	const struct vsw_ctl_command *table, size_t n, void *ctx)
{
	struct vsw_ctl_server *srv = calloc(1, sizeof(*srv));

	if (srv == NULL)
		return NULL;
	srv->listen_fd = listen_unix(path);
	if (srv->listen_fd < 0) {
		int e = errno;

		free(srv);
		errno = e;
		return NULL;
	}
	snprintf(srv->path, sizeof(srv->path), "%s", path);
	srv->loop = loop;
	srv->table = table;
	srv->ncmds = n;
	srv->ctx = ctx;
	ev_io_init(&srv->listen_io, listen_cb, srv->listen_fd, EV_READ);
	srv->listen_io.data = srv;
	ev_io_start(loop, &srv->listen_io);
	return srv;
}

/* At shutdown: give a pending reply (e.g. to "shutdown") a last chance. */
static void
client_flush_blocking(struct ctl_client *c)
{
	struct timeval tv = {.tv_sec = 1};

	if (c->out_off >= c->out_len)
		return;
	if (fcntl(c->fd, F_SETFL, 0) < 0 ||
			setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
				sizeof(tv)) < 0)
		return;
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off,
			c->out_len - c->out_off, MSG_NOSIGNAL);

		if (n <= 0)
			return;
		c->out_off += (size_t)n;
	}
}

void
vsw_ctl_server_destroy(struct vsw_ctl_server *srv)
{
	if (srv == NULL)
		return;
	while (srv->clients != NULL) {
		client_flush_blocking(srv->clients);
		client_close(srv->clients);
	}
	ev_io_stop(srv->loop, &srv->listen_io);
	close(srv->listen_fd);
	unlink(srv->path);
	free(srv);
}

void
vsw_ctl_server_get_stats(const struct vsw_ctl_server *srv,
	struct vsw_ctl_server_stats *st)
{
	*st = srv->st;
}
