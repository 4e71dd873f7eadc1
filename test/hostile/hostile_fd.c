/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scenarios about what a front-end hands over and what it makes vswd's one
 * vhost-user event thread do (issue 10, items 1, 2, 3, 7): fds of the wrong
 * type, refused requests whose librte_vhost handler must not run, a memory
 * table refused with NEED_REPLY, a peer that stalls the event thread.
 * Each checks what the front-end can see; the driver checks the counters,
 * the fd count and the neighbours' forwarding rate.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hostile.h"

#define EVENT_IDX (1ull << 29)

static int
negotiated(struct hs_ctx *c, uint64_t features, bool reply_ack)
{
	int rc = vu_open(&c->f, c->path);

	if (rc == 0)
		rc = vu_negotiate(&c->f, features);
	if (rc == 0 && reply_ack)
		rc = vu_send_u64(&c->f, VU_SET_PROTOCOL_FEATURES,
			(1ull << VU_PROTOCOL_F_MQ) |
				(1ull << VU_PROTOCOL_F_REPLY_ACK),
			-1);
	if (rc != 0)
		hs_note("set-up failed: %s", strerror(-rc));
	return rc;
}

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/*
 * How long vswd's vhost-user event thread takes to deal with a new
 * connection to the same port: it answers GET_FEATURES, or closes it
 * (one connection per port). limit_ms when it did neither.
 */
static int
probe_ms(const char *path, int limit_ms)
{
	struct vu_front p;
	struct vu_msg r;
	long t0 = now_ms(), el = 0;
	int rc;

	memset(&p, 0, sizeof(p));
	if (vu_open(&p, path) != 0)
		return limit_ms;
	vu_send(&p, VU_GET_FEATURES, NULL, 0, NULL, 0);
	do {
		rc = vu_recv(&p, &r, 20);
		el = now_ms() - t0;
	} while (rc == -ETIMEDOUT && el < limit_ms);
	vu_close(&p);
	return rc == -ETIMEDOUT ? limit_ms : (int)el;
}

/* The event thread must serve another connection within 500 ms. */
static int
thread_free(struct hs_ctx *c, const char *what)
{
	int ms = probe_ms(c->path, 2000);

	hs_note("%s: another connection served after %d ms", what, ms);
	return ms >= 500;
}

static void
rx_drop(void *ctx, const uint8_t *frame, uint32_t len)
{
	(void)ctx;
	(void)frame;
	(void)len;
}

/* Send TX frames and keep RX posted for ms milliseconds. */
static void
run_traffic(struct hs_ctx *c, int ms)
{
	unsigned char frame[64];
	long end = now_ms() + ms;
	unsigned long long seq = 0;

	while (now_ms() < end) {
		hs_frame(frame, sizeof(frame), seq++);
		vu_tx(&c->f, frame, sizeof(frame));
		vu_tx_reclaim(&c->f);
		vu_rx_poll(&c->f, rx_drop, NULL);
		vu_rx_refill(&c->f);
		hs_sleep_ms(1);
	}
}

/*
 * The write end of a pipe nobody reads as both call fds, a guest without
 * EVENT_IDX that wants every interrupt: once the pipe is full, a blocking
 * write() would put the PMD to sleep for good (every port on it stops).
 * vsw must refuse the fd (not an eventfd).
 */
static int
s_call_pipe(struct hs_ctx *c)
{
	int p[2], q;

	if (pipe(p) != 0 ||
		negotiated(c, VU_FEATURES_DEFAULT & ~EVENT_IDX, false) != 0 ||
		vu_mem_table(&c->f) != 0)
		return 1;
	/* one page: full after 512 interrupts (a second or so) */
	fcntl(p[1], F_SETPIPE_SZ, 4096);
	for (q = 0; q < 2; q++) {
		close(c->f.call[q]);
		c->f.call[q] = dup(p[1]);
	}
	vu_vring_setup(&c->f, 0, 256);
	vu_vring_setup(&c->f, 1, 256);
	run_traffic(c, 2000);
	q = hs_closed(c);
	vu_close(&c->f);
	/* the pipe outlives the connection (a peer keeping it open) */
	hs_sleep_ms(300);
	close(p[0]);
	close(p[1]);
	return q;
}

/* A call fd that is a regular file (a write never blocks: still not an
 * eventfd, refused) and kick/err fds that are sockets or pipes. */
static int
wrong_fd(struct hs_ctx *c, uint32_t req)
{
	int p[2], fd;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, p) != 0 ||
		negotiated(c, VU_FEATURES_DEFAULT, false) != 0 ||
		vu_mem_table(&c->f) != 0)
		return 1;
	fd = req == VU_SET_VRING_CALL ? c->f.memfd : p[0];
	vu_send_state(&c->f, VU_SET_VRING_NUM, 0, 256);
	vu_send_u64(&c->f, req, 0, fd);
	fd = hs_closed(c);
	close(p[0]);
	close(p[1]);
	return fd;
}

static int
s_call_memfd(struct hs_ctx *c)
{
	return wrong_fd(c, VU_SET_VRING_CALL);
}

static int
s_kick_socket(struct hs_ctx *c)
{
	return wrong_fd(c, VU_SET_VRING_KICK);
}

static int
s_err_socket(struct hs_ctx *c)
{
	return wrong_fd(c, VU_SET_VRING_ERR);
}

/* Guest memory in a regular file on a disk file system (here /tmp): a
 * page fault there is I/O on the PMD. Only memfd/tmpfs/hugetlbfs. */
static int
s_mem_disk_file(struct hs_ctx *c)
{
	char name[] = "/tmp/vsw-hostile-mem-XXXXXX";
	struct vu_msg m;
	int fd = mkstemp(name), rc;

	if (fd < 0)
		return 1;
	unlink(name);
	if (ftruncate(fd, VU_MEM_SIZE) != 0 ||
		negotiated(c, VU_FEATURES_DEFAULT, false) != 0) {
		close(fd);
		return 1;
	}
	memset(&m, 0, sizeof(m));
	m.u.mem.nregions = 1;
	m.u.mem.r[0] = (struct vu_region){
		VU_GPA_BASE, VU_MEM_SIZE, (uint64_t)(uintptr_t)c->f.mem, 0};
	vu_send(&c->f, VU_SET_MEM_TABLE, &m.u.mem, 8 + 32, &fd, 1);
	rc = hs_closed(c);
	close(fd);
	return rc;
}

/*
 * SET_INFLIGHT_FD (not offered) whose mapping starts at the memfd's end:
 * librte_vhost's handler maps it and writes to it (SIGBUS in the
 * vhost-events thread) unless vsw's refusal stops it before.
 */
static int
s_inflight_past_end(struct hs_ctx *c)
{
	/* mmap_size, mmap_offset, num_queues 1 | queue_size 256 << 16 */
	uint64_t p[3] = {4096, VU_MEM_SIZE, 1 | (256ull << 16)};

	if (negotiated(c, VU_FEATURES_DEFAULT, false) != 0)
		return 1;
	vu_send(&c->f, VU_SET_INFLIGHT_FD, p, sizeof(p), &c->f.memfd, 1);
	return hs_closed(c);
}

/* GET_INFLIGHT_FD for 256 queues of 32768: librte_vhost would allocate
 * and zero 128 MiB, and answer with the area's fd. No answer allowed. */
static int
s_get_inflight_huge(struct hs_ctx *c)
{
	uint64_t p[3] = {0, 0, 256 | (32768ull << 16)};
	struct vu_msg r;

	if (negotiated(c, VU_FEATURES_DEFAULT, false) != 0)
		return 1;
	vu_send(&c->f, VU_GET_INFLIGHT_FD, p, sizeof(p), NULL, 0);
	if (vu_recv(&c->f, &r, 1000) == 0) {
		hs_note("GET_INFLIGHT_FD answered (request %u, mmap_size "
			"%llu): librte_vhost ran its handler",
			r.request, (unsigned long long)r.u.u64);
		return 1;
	}
	return hs_closed(c);
}

/* One message with NEED_REPLY; its reply-ack must be a nack. */
static int
send_nacked(struct hs_ctx *c, uint32_t req, const void *payload, uint32_t size,
	const int *fds, int nfds)
{
	struct vu_msg m = {.request = req,
		.flags = VU_FLAG_VERSION | VU_FLAG_NEED_REPLY,
		.size = size};
	struct vu_msg r;

	if (size != 0)
		memcpy(&m.u, payload, size);
	vu_send_raw(&c->f, &m, VU_HDR_SIZE + size, fds, nfds);
	if (vu_recv(&c->f, &r, 3000) != 0) {
		hs_note("no reply-ack");
		return 1;
	}
	if (r.request != req || r.u.u64 == 0) {
		hs_note("reply-ack %u says %llu, want a nack", r.request,
			(unsigned long long)r.u.u64);
		return 1;
	}
	return 0;
}

/*
 * POSTCOPY_LISTEN with NEED_REPLY: nacked. It must not take effect: in
 * librte_vhost a listening device answers the next SET_MEM_TABLE with
 * vswd's own mapping addresses and then blocks the event thread until the
 * front-end acks.
 */
static int
s_postcopy_listen(struct hs_ctx *c)
{
	struct vu_msg r;

	if (negotiated(c, VU_FEATURES_DEFAULT, true) != 0 ||
		send_nacked(c, VU_POSTCOPY_LISTEN, NULL, 0, NULL, 0) != 0)
		return 1;
	vu_mem_table(&c->f);
	if (vu_recv(&c->f, &r, 500) == 0) {
		hs_note("SET_MEM_TABLE answered (request %u): postcopy "
			"listening took effect",
			r.request);
		return 1;
	}
	return thread_free(c, "after SET_MEM_TABLE");
}

/*
 * SET_MEM_TABLE with NEED_REPLY: a 64 MiB region over the 8 MiB memfd.
 * Nacked, and nothing mapped: the rings that follow find no memory table
 * (librte_vhost closes the connection); a TX frame 16 MiB in would be a
 * SIGBUS on the PMD had the table been kept.
 */
static int
s_need_reply_past_file(struct hs_ctx *c)
{
	struct vu_msg m;
	unsigned char frame[64];

	if (negotiated(c, VU_FEATURES_DEFAULT, true) != 0)
		return 1;
	memset(&m, 0, sizeof(m));
	m.u.mem.nregions = 1;
	m.u.mem.r[0] = (struct vu_region){
		VU_GPA_BASE, 64u << 20, (uint64_t)(uintptr_t)c->f.mem, 0};
	if (send_nacked(
		    c, VU_SET_MEM_TABLE, &m.u.mem, 8 + 32, &c->f.memfd, 1) != 0)
		return 1;
	vu_vring_setup(&c->f, 0, 256);
	vu_vring_setup(&c->f, 1, 256);
	hs_frame(frame, sizeof(frame), 0);
	vu_tx(&c->f, frame, sizeof(frame));
	c->f.q[1].vr.desc[0].addr = VU_GPA_BASE + (16u << 20);
	return hs_closed(c);
}

/*
 * 4,000 GET_FEATURES and never a reply read: librte_vhost writes replies
 * with sendmsg() on its one event thread, which would block once the
 * socket buffer is full. vsw must drop the connection instead.
 */
static int
s_reply_flood(struct hs_ctx *c)
{
	int i, rc;

	if (negotiated(c, VU_FEATURES_DEFAULT, false) != 0)
		return 1;
	for (i = 0; i < 4000; i++)
		if (vu_send(&c->f, VU_GET_FEATURES, NULL, 0, NULL, 0) != 0)
			break;
	hs_note("%d requests sent before vswd closed", i);
	rc = thread_free(c, "replies never read");
	return rc | hs_closed(c);
}

/*
 * A header announcing 8 payload bytes, then silence, the connection kept:
 * librte_vhost would wait for them on its one event thread (every port's
 * control stalled). vsw makes the socket non-blocking: the connection goes
 * at once and another one is served.
 */
static int
s_stalled_payload(struct hs_ctx *c)
{
	struct vu_msg m = {.request = VU_SET_VRING_NUM,
		.flags = VU_FLAG_VERSION,
		.size = 8};
	int rc;

	if (negotiated(c, VU_FEATURES_DEFAULT, false) != 0 ||
		vu_mem_table(&c->f) != 0)
		return 1;
	vu_send_raw(&c->f, &m, VU_HDR_SIZE, NULL, 0);
	hs_sleep_ms(50);
	rc = thread_free(c, "header without payload");
	return rc | hs_closed(c);
}

const struct hs_scenario hs_fd_scenarios[] = {
	{"fd-call-pipe", "fd_rejected,msg_rejected,disconnects",
		"a full pipe as call fd, no EVENT_IDX (PMD must not block)",
		s_call_pipe},
	{"fd-call-memfd", "fd_rejected,msg_rejected,disconnects",
		"a regular file as call fd", s_call_memfd},
	{"fd-kick-socket", "fd_rejected,msg_rejected,disconnects",
		"a socket as kick fd", s_kick_socket},
	{"fd-err-socket", "fd_rejected,msg_rejected,disconnects",
		"a socket as error fd", s_err_socket},
	{"fd-mem-disk-file", "fd_rejected,msg_rejected,disconnects",
		"guest memory in a /tmp file (not memfd/tmpfs/hugetlbfs)",
		s_mem_disk_file},
	{"msg-inflight-past-end", "msg_rejected,disconnects",
		"SET_INFLIGHT_FD mapping at the memfd's end (handler: SIGBUS)",
		s_inflight_past_end},
	{"msg-get-inflight-huge", "msg_rejected,disconnects",
		"GET_INFLIGHT_FD 256 x 32768 (handler: 128 MiB, a reply)",
		s_get_inflight_huge},
	{"msg-postcopy-listen", "msg_rejected",
		"POSTCOPY_LISTEN + NEED_REPLY: nacked, must not take effect",
		s_postcopy_listen},
	{"mem-need-reply-past-file", "fd_rejected,msg_rejected,disconnects",
		"NEED_REPLY + 64 MiB region over 8 MiB memfd, TX 16 MiB in",
		s_need_reply_past_file},
	{"msg-reply-flood", "msg_rejected,disconnects",
		"4000 requests, replies never read (event thread)",
		s_reply_flood},
	{"msg-stalled-payload", "disconnects",
		"header promises 8 bytes, none follow (event thread)",
		s_stalled_payload},
};
const size_t hs_n_fd = sizeof(hs_fd_scenarios) / sizeof(hs_fd_scenarios[0]);
