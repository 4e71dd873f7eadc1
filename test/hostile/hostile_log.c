/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live-migration scenarios (issue 13): the dirty log a front-end hands
 * over with SET_LOG_BASE (payload: u64 mmap_size, u64 mmap_offset; one fd)
 * and LOG_ALL switched on and off on a running device. Guest memory is
 * VU_MEM_SIZE at VU_GPA_BASE: its log needs (end - 1) / 32 KiB + 1 bytes.
 */
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hostile.h"

#define LOG_ALL (1ull << 26)
#define LOG_NEED (((VU_GPA_BASE + VU_MEM_SIZE - 1) >> 15) + 1)

/* A memfd of len bytes (-1 on failure). */
static int
log_fd(uint64_t len)
{
	int fd = memfd_create("hostile-log", MFD_CLOEXEC);

	if (fd >= 0 && ftruncate(fd, (off_t)len) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* SET_LOG_BASE size/offset with fd; the fd is ours to close. */
static void
log_base(struct hs_ctx *c, uint64_t size, uint64_t off, int fd)
{
	uint64_t l[2] = {size, off};

	vu_send(&c->f, VU_SET_LOG_BASE, l, sizeof(l), &fd, 1);
	close(fd);
}

static int
s_log_offset_wrap(struct hs_ctx *c)
{
	if (hs_negotiated(c) != 0)
		return 1;
	log_base(c, LOG_NEED, UINT64_MAX - 0xfff, log_fd(LOG_NEED));
	return hs_closed(c);
}

/* A log of the right size in a memfd one page short of it. */
static int
s_log_fd_short(struct hs_ctx *c)
{
	if (hs_negotiated(c) != 0)
		return 1;
	log_base(c, 1 << 20, 0, log_fd((1 << 20) - 4096));
	return hs_closed(c);
}

/* One byte less than guest memory needs. */
static int
s_log_too_small(struct hs_ctx *c)
{
	if (hs_negotiated(c) != 0)
		return 1;
	log_base(c, LOG_NEED - 1, 0, log_fd(LOG_NEED));
	return hs_closed(c);
}

/* An eventfd where the log's shared memory belongs. */
static int
s_log_fd_type(struct hs_ctx *c)
{
	if (hs_negotiated(c) != 0)
		return 1;
	log_base(c, LOG_NEED, 0, eventfd(0, EFD_CLOEXEC));
	return hs_closed(c);
}

/*
 * Running device, frames flowing, a valid log; LOG_ALL on and off 40
 * times between frames. Every frame must come back used (none lost or
 * taken twice across the queue re-creations) and the connection stays.
 */
static int
s_log_toggle(struct hs_ctx *c)
{
	unsigned char frame[64];
	struct vu_msg m;
	uint16_t want = 0;
	int i, k;

	if (vu_start(&c->f, c->path, VU_FEATURES_DEFAULT, 256) != 0)
		return 1;
	log_base(c, LOG_NEED, 0, log_fd(LOG_NEED));
	if (vu_recv(&c->f, &m, 3000) != 0 || m.request != VU_SET_LOG_BASE) {
		hs_note("no SET_LOG_BASE reply");
		return 1;
	}
	for (i = 0; i < 40; i++) {
		for (k = 0; k < 8; k++) {
			hs_frame(frame, sizeof(frame), (unsigned)(i * 8 + k));
			if (vu_tx(&c->f, frame, sizeof(frame)) == 0)
				want++;
		}
		vu_send_u64(&c->f, VU_SET_FEATURES,
			VU_FEATURES_DEFAULT | (i % 2 == 0 ? LOG_ALL : 0), -1);
		if (!vu_wait_used(&c->f, 1, want, 3000)) {
			hs_note("round %d: %u of %u frames used", i,
				vu_used_idx(&c->f, 1), want);
			return 1;
		}
		vu_tx_reclaim(&c->f);
	}
	if (vu_peer_closed(&c->f, 200)) {
		hs_note("connection closed");
		return 1;
	}
	return 0;
}

const struct hs_scenario hs_log_scenarios[] = {
	{"log-offset-wrap", "msg_rejected,disconnects",
		"SET_LOG_BASE mmap_offset + mmap_size wraps 2^64",
		s_log_offset_wrap},
	{"log-fd-short", "msg_rejected,fd_rejected,disconnects",
		"a 1 MiB log in a memfd 4 KiB shorter", s_log_fd_short},
	{"log-too-small", "msg_rejected,disconnects",
		"a log 1 byte short of covering guest memory", s_log_too_small},
	{"log-fd-type", "msg_rejected,fd_rejected,disconnects",
		"an eventfd as the log's memory", s_log_fd_type},
	{"log-toggle-traffic", "log_pages",
		"LOG_ALL on/off 40 times while frames flow", s_log_toggle},
};
const size_t hs_n_log = sizeof(hs_log_scenarios) / sizeof(hs_log_scenarios[0]);
