/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where vswd's log lines go, and how no PMD ever waits for them.
 *
 * Every rte_log line (vsw.* types, DPDK's own) goes through one stdio
 * stream whose write function only copies the line into a slot of a
 * preallocated pool and enqueues it on a lock-free ring (multi-producer
 * RTS, safe for the preemptible vhost-user thread): no I/O, no allocation.
 * The control thread drains the ring (after each loop iteration, on a
 * 0.2 s timer, before a reopen and at exit) and writes to the destination:
 * stderr (the default: systemd's journal captures it), syslog (openlog/
 * syslog, priority = rte_log level - 1), syslog:PATH (RFC 3164 datagrams
 * to a unix socket, non-blocking) or a file (O_APPEND, timestamped lines).
 * So a slow disk or a stuck journal stalls only the control thread; a
 * PMD's line (rate-limited, include/vsw/log.h) costs a format and a copy
 * under the stream's stdio lock, which is never held across I/O. When the
 * pool is empty (the control thread is behind by LOG_SLOTS lines) a line
 * is dropped and counted (log-show shows lines_dropped), never waited for.
 *
 * log-reopen (for logrotate): open the path again, dup2() the new file
 * over the old fd and close the new one, so the fd number never closes.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>
#include <rte_ring.h>

#include "vswd_priv.h"

#define LOG_SLOTS 1024u   /* lines in flight between writers and drain */
#define LOG_RING 2048u    /* power of two holding every slot */
#define LOG_SLOT_TEXT 480u /* a longer write takes several slots */
#define LOG_DRAIN_SEC 0.2

/* The modules' log types (include/vsw/log.h), registered here too so a
 * level can be set before a module's first line. */
const char *const vswd_log_types[] = {
	"vsw.copy", "vsw.virtq", "vsw.vport", "vsw.switch", "vsw.flow",
	"vsw.ports", "vsw.ctl", "vsw.vswd", NULL,
};

struct log_slot {
	struct timespec ts;
	uint16_t len;
	uint8_t level;  /* rte_log level, 1 (emergency) .. 8 (debug) */
	bool cont;      /* continues the previous slot's write */
	char text[LOG_SLOT_TEXT];
};

static struct {
	enum vswd_log_dest dest;
	char path[256];
	int fd;                  /* file, or the syslog:PATH socket */
	struct rte_ring *full;   /* writers -> drain */
	struct rte_ring *free;   /* drain -> writers */
	struct log_slot *slots;
	FILE *stream;
	atomic_ulong dropped;
	unsigned long written;
	unsigned long write_errors;
	ev_prepare prepare_w;
	ev_timer timer_w;
	struct ev_loop *loop;
} g = {.fd = -1};

static struct rte_ring *
ring_new(const char *name, unsigned flags)
{
	ssize_t sz = rte_ring_get_memsize(LOG_RING);
	struct rte_ring *r = sz > 0 ? aligned_alloc(RTE_CACHE_LINE_SIZE,
		RTE_ALIGN_CEIL((size_t)sz, RTE_CACHE_LINE_SIZE)) : NULL;

	if (r != NULL && rte_ring_init(r, name, LOG_RING, flags) < 0) {
		free(r);
		r = NULL;
	}
	return r;
}

/* The stream's write: copy into slots, never block. */
static ssize_t
stream_write(void *cookie, const char *buf, size_t size)
{
	int level = rte_log_cur_msg_loglevel();
	struct timespec ts;
	size_t done = 0;

	(void)cookie;
	clock_gettime(CLOCK_REALTIME, &ts); /* vDSO: no system call */
	while (done < size) {
		struct log_slot *s;
		size_t n = RTE_MIN(size - done, (size_t)LOG_SLOT_TEXT);

		if (rte_ring_dequeue(g.free, (void **)&s) != 0) {
			atomic_fetch_add_explicit(&g.dropped, 1,
				memory_order_relaxed);
			break;
		}
		s->ts = ts;
		s->level = (uint8_t)(level >= 1 && level <= 8 ? level : 6);
		s->cont = done > 0;
		s->len = (uint16_t)n;
		memcpy(s->text, buf + done, n);
		/* cannot fail: the ring holds every slot */
		rte_ring_enqueue(g.full, s);
		done += n;
	}
	return (ssize_t)size;
}

static int
write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* "<PRI>vswd[pid]: text" to the syslog:PATH socket, never waiting. */
static int
send_syslog_dgram(const struct log_slot *s, size_t len)
{
	char msg[LOG_SLOT_TEXT + 64];
	int n = snprintf(msg, sizeof(msg), "<%d>vswd[%ld]: %.*s",
		LOG_DAEMON | (s->level - 1), (long)getpid(), (int)len, s->text);

	return send(g.fd, msg, (size_t)RTE_MIN(n, (int)sizeof(msg) - 1),
		MSG_DONTWAIT | MSG_NOSIGNAL) < 0 ? -1 : 0;
}

static int
emit_file(const struct log_slot *s)
{
	char stamp[48];
	struct tm tm;

	if (s->cont)
		return write_all(g.fd, s->text, s->len);
	gmtime_r(&s->ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(stamp + strlen(stamp), sizeof(stamp) - strlen(stamp),
		".%03ldZ ", s->ts.tv_nsec / 1000000);
	if (write_all(g.fd, stamp, strlen(stamp)) < 0)
		return -1;
	return write_all(g.fd, s->text, s->len);
}

static int
emit(const struct log_slot *s)
{
	size_t len = s->len;

	/* syslog takes a message, not a line */
	if (g.dest == VSWD_LOG_SYSLOG || g.dest == VSWD_LOG_SYSLOG_PATH)
		while (len > 0 && s->text[len - 1] == '\n')
			len--;
	switch (g.dest) {
	case VSWD_LOG_SYSLOG:
		syslog(s->level - 1, "%.*s", (int)len, s->text);
		return 0;
	case VSWD_LOG_SYSLOG_PATH:
		return send_syslog_dgram(s, len);
	case VSWD_LOG_FILE:
		return emit_file(s);
	default:
		return write_all(STDERR_FILENO, s->text, s->len);
	}
}

void
vswd_log_drain(void)
{
	struct log_slot *burst[32];
	unsigned n;

	if (g.full == NULL)
		return;
	while ((n = rte_ring_dequeue_burst(g.full, (void **)burst, 32,
			NULL)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			if (emit(burst[i]) < 0)
				g.write_errors++;
			else
				g.written++;
		}
		rte_ring_enqueue_bulk(g.free, (void **)burst, n, NULL);
	}
}

static void
prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	vswd_log_drain();
}

static void
timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	vswd_log_drain();
}

static int
open_file(const char *path)
{
	return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
}

static int
open_dgram(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t len = strlen(path);
	int fd;

	/* a truncated path would name another socket */
	if (len >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path, path, len + 1);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		fd = -1;
	}
	return fd;
}

int
vswd_log_parse_dest(const char *spec, enum vswd_log_dest *dest,
	const char **path)
{
	*path = NULL;
	if (strcmp(spec, "stderr") == 0) {
		*dest = VSWD_LOG_STDERR;
	} else if (strcmp(spec, "syslog") == 0) {
		*dest = VSWD_LOG_SYSLOG;
	} else if (strncmp(spec, "syslog:", 7) == 0 && spec[7] != '\0' &&
			strlen(spec + 7) < sizeof(((struct sockaddr_un *)0)->
				sun_path)) {
		*dest = VSWD_LOG_SYSLOG_PATH;
		*path = spec + 7;
	} else if (strncmp(spec, "file:", 5) == 0 && spec[5] != '\0' &&
			strlen(spec + 5) < sizeof(g.path)) {
		*dest = VSWD_LOG_FILE;
		*path = spec + 5;
	} else {
		return -1;
	}
	return 0;
}

/* exit() elsewhere (rte_exit, a library): what is queued still goes out */
static void
drain_at_exit(void)
{
	if (g.stream != NULL)
		vswd_log_drain();
}

int
vswd_log_open(enum vswd_log_dest dest, const char *path)
{
	static cookie_io_functions_t fns = {.write = stream_write};

	g.dest = dest;
	snprintf(g.path, sizeof(g.path), "%s", path ? path : "");
	if (dest == VSWD_LOG_FILE)
		g.fd = open_file(path);
	else if (dest == VSWD_LOG_SYSLOG_PATH)
		g.fd = open_dgram(path);
	else if (dest == VSWD_LOG_SYSLOG)
		openlog("vswd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	if ((dest == VSWD_LOG_FILE || dest == VSWD_LOG_SYSLOG_PATH) &&
			g.fd < 0) {
		fprintf(stderr, "vswd: cannot open log %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	g.slots = calloc(LOG_SLOTS, sizeof(*g.slots));
	g.full = ring_new("vswd_log_full", RING_F_MP_RTS_ENQ | RING_F_SC_DEQ);
	g.free = ring_new("vswd_log_free", RING_F_SP_ENQ | RING_F_MC_RTS_DEQ);
	g.stream = fopencookie(NULL, "w", fns);
	if (g.slots == NULL || g.full == NULL || g.free == NULL ||
			g.stream == NULL) {
		fprintf(stderr, "vswd: cannot set up the log: out of memory\n");
		return -1;
	}
	for (unsigned i = 0; i < LOG_SLOTS; i++) {
		void *s = &g.slots[i];

		rte_ring_enqueue(g.free, s);
	}
	/* a library's own registration (earlier, in a constructor) keeps
	 * its default; vswd's lines stay at INFO as before */
	for (const char *const *t = vswd_log_types; *t != NULL; t++)
		rte_log_register_type_and_pick_level(*t,
			strcmp(*t, "vsw.vswd") == 0 ? RTE_LOG_INFO :
			RTE_LOG_NOTICE);
	rte_openlog_stream(g.stream);
	atexit(drain_at_exit);
	return 0;
}

void
vswd_log_start(struct ev_loop *loop)
{
	g.loop = loop;
	ev_prepare_init(&g.prepare_w, prepare_cb);
	ev_prepare_start(loop, &g.prepare_w);
	ev_timer_init(&g.timer_w, timer_cb, LOG_DRAIN_SEC, LOG_DRAIN_SEC);
	ev_timer_start(loop, &g.timer_w);
}

int
vswd_log_reopen(char *err, size_t errlen)
{
	int fd;

	if (g.dest != VSWD_LOG_FILE && g.dest != VSWD_LOG_SYSLOG_PATH) {
		snprintf(err, errlen, "the log is not a file (log-reopen is "
			"for --log-file)");
		return -1;
	}
	vswd_log_drain(); /* what was logged before goes to the old file */
	fd = g.dest == VSWD_LOG_FILE ? open_file(g.path) : open_dgram(g.path);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", g.path,
			strerror(errno));
		return -1;
	}
	if (dup2(fd, g.fd) < 0) {
		snprintf(err, errlen, "cannot reopen %s: %s", g.path,
			strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

void
vswd_log_get_stats(struct vswd_log_stats *st)
{
	st->dest = g.dest;
	st->path = g.path;
	st->written = g.written;
	st->write_errors = g.write_errors;
	st->dropped = atomic_load_explicit(&g.dropped, memory_order_relaxed);
}

void
vswd_log_close(void)
{
	if (g.stream == NULL)
		return;
	vswd_log_drain();
	if (g.loop != NULL) {
		ev_prepare_stop(g.loop, &g.prepare_w);
		ev_timer_stop(g.loop, &g.timer_w);
	}
	/* later lines (DPDK's cleanup) go straight to stderr */
	rte_openlog_stream(stderr);
	fclose(g.stream);
	g.stream = NULL;
	if (g.fd >= 0)
		close(g.fd);
	g.fd = -1;
	if (g.dest == VSWD_LOG_SYSLOG)
		closelog();
}

/* Does pattern name at least one vsw log type (or a non-vsw one, which
 * rte_log knows better)? */
bool
vswd_log_pattern_known(const char *pattern)
{
	if (strncmp(pattern, "vsw.", 4) != 0 && strcmp(pattern, "vsw*") != 0)
		return true;
	for (const char *const *t = vswd_log_types; *t != NULL; t++)
		if (fnmatch(pattern, *t, 0) == 0)
			return true;
	return false;
}
