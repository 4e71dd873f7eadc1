/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Scenarios about guest memory that changes under vswd after its checks
 * (issue 10, item 4): a running guest truncates its memory file and posts
 * a TX descriptor past the new end (a SIGBUS on the PMD if nothing
 * guards it), for a memfd vsw could seal, one it cannot, and a tmpfs
 * file; and region fds of a type that cannot back guest RAM. Each checks
 * what the front-end can see; the driver checks the counters, the fd
 * count and the neighbours' forwarding rate.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hostile.h"

#define SHRUNK (4u << 20) /* the file after the guest shrinks it */
#define PAST (5u << 20)	  /* a TX buffer there: past the new end */

/* Frames sent and reclaimed over ms milliseconds (0: none came back). */
static unsigned
tx_for(struct hs_ctx *c, int ms, unsigned long long seq)
{
	unsigned char frame[64];
	unsigned done = 0;
	int i;

	for (i = 0; i < ms; i++) {
		hs_frame(frame, sizeof(frame), seq + (unsigned)i);
		vu_tx(&c->f, frame, sizeof(frame));
		done += vu_tx_reclaim(&c->f);
		vu_rx_refill(&c->f);
		hs_sleep_ms(1);
	}
	return done;
}

/* One TX chain whose buffer lies at guest offset off. */
static void
tx_at(struct hs_ctx *c, uint64_t off)
{
	struct vu_ring *r = &c->f.q[1];
	uint16_t slot = (uint16_t)(r->avail_idx % r->size);

	r->vr.desc[slot].addr = VU_GPA_BASE + off;
	r->vr.desc[slot].len = VU_HDR_LEN + 64;
	r->vr.desc[slot].flags = 0;
	vu_avail_push(&c->f, 1, slot);
}

static int
started(struct hs_ctx *c, int fd)
{
	int rc = vu_start_fd(
		&c->f, c->path, VU_FEATURES_DEFAULT, VU_QSIZE_DEFAULT, fd);

	if (rc != 0) {
		hs_note("set-up failed: %s", strerror(-rc));
		return 1;
	}
	if (tx_for(c, 200, 0) == 0) {
		hs_note("no TX frame came back before the attack");
		return 1;
	}
	return 0;
}

/*
 * Truncate the running guest's memory, then a TX buffer past the new
 * end: vswd must survive the fault, disconnect this port (and only this
 * one) and count it.
 */
static int
shrink_then_touch(struct hs_ctx *c, int fd)
{
	if (started(c, fd) != 0)
		return 1;
	if (ftruncate(c->f.memfd, SHRUNK) != 0) {
		hs_note("ftruncate: %s (want it to succeed here)",
			strerror(errno));
		return 1;
	}
	tx_at(c, PAST);
	if (!vu_peer_closed(&c->f, 3000)) {
		hs_note("connection still open after a fault past the end");
		return 1;
	}
	return 0;
}

/* A memfd without MFD_ALLOW_SEALING (what DPDK's EAL creates): no seal
 * possible, the SIGBUS guard must catch it. */
static int
s_unsealable_memfd(struct hs_ctx *c)
{
	return shrink_then_touch(c, -1);
}

/* A file on a tmpfs (/dev/shm): tmpfs files take no seals. */
static int
s_tmpfs_file(struct hs_ctx *c)
{
	char name[] = "/dev/shm/vsw-hostile-mem-XXXXXX";
	int fd = mkstemp(name);

	if (fd < 0) {
		hs_note("no /dev/shm: %s", strerror(errno));
		return 1;
	}
	unlink(name);
	if (ftruncate(fd, VU_MEM_SIZE) != 0) {
		close(fd);
		return 1;
	}
	return shrink_then_touch(c, fd);
}

/*
 * A memfd that takes seals: vswd sealed it against shrinking, so the
 * guest's ftruncate fails and the port keeps forwarding (the buffer at
 * 5 MiB is still memory).
 */
static int
s_sealed_memfd(struct hs_ctx *c)
{
	int fd = memfd_create("vu-guest", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, VU_MEM_SIZE) != 0 || started(c, fd) != 0)
		return 1;
	if (!(fcntl(fd, F_GET_SEALS) & F_SEAL_SHRINK)) {
		hs_note("vswd did not seal the memfd (seals 0x%x)",
			fcntl(fd, F_GET_SEALS));
		return 1;
	}
	if (ftruncate(fd, SHRUNK) == 0 || errno != EPERM) {
		hs_note("the guest could shrink its sealed memfd");
		return 1;
	}
	tx_at(c, PAST);
	if (tx_for(c, 300, 1000) == 0 || vu_peer_closed(&c->f, 10)) {
		hs_note("port stopped forwarding after a refused truncate");
		return 1;
	}
	return 0;
}

/* SET_MEM_TABLE whose region fd is fd: refused, connection closed. */
static int
region_refused(struct hs_ctx *c, int fd)
{
	struct vu_msg m;
	int rc = vu_open(&c->f, c->path);

	if (rc == 0)
		rc = vu_negotiate(&c->f, VU_FEATURES_DEFAULT);
	if (rc != 0) {
		hs_note("set-up failed: %s", strerror(-rc));
		return 1;
	}
	memset(&m, 0, sizeof(m));
	m.u.mem.nregions = 1;
	m.u.mem.r[0] = (struct vu_region){
		VU_GPA_BASE, VU_MEM_SIZE, (uint64_t)(uintptr_t)c->f.mem, 0};
	vu_send(&c->f, VU_SET_MEM_TABLE, &m.u.mem, 8 + 32, &fd, 1);
	if (!vu_peer_closed(&c->f, 3000)) {
		hs_note("connection still open after a bad region fd");
		return 1;
	}
	return 0;
}

static int
s_region_pipe(struct hs_ctx *c)
{
	int p[2], rc;

	if (pipe(p) != 0)
		return 1;
	rc = region_refused(c, p[0]);
	close(p[0]);
	close(p[1]);
	return rc;
}

static int
s_region_socket(struct hs_ctx *c)
{
	int p[2], rc;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, p) != 0)
		return 1;
	rc = region_refused(c, p[0]);
	close(p[0]);
	close(p[1]);
	return rc;
}

static int
s_region_eventfd(struct hs_ctx *c)
{
	int fd = eventfd(0, 0), rc;

	if (fd < 0)
		return 1;
	rc = region_refused(c, fd);
	close(fd);
	return rc;
}

const struct hs_scenario hs_mem_scenarios[] = {
	{"mem-shrink-unsealable", "mem_faults,disconnects",
		"running guest truncates its unsealable memfd, TX 5 MiB in",
		s_unsealable_memfd},
	{"mem-shrink-tmpfs", "mem_faults,disconnects",
		"running guest truncates its /dev/shm file, TX 5 MiB in",
		s_tmpfs_file},
	{"mem-shrink-sealed", "rx",
		"running guest tries to truncate its sealed memfd: EPERM",
		s_sealed_memfd},
	{"mem-region-pipe", "fd_rejected,msg_rejected,disconnects",
		"a pipe as memory region fd", s_region_pipe},
	{"mem-region-socket", "fd_rejected,msg_rejected,disconnects",
		"a socket as memory region fd", s_region_socket},
	{"mem-region-eventfd", "fd_rejected,msg_rejected,disconnects",
		"an eventfd as memory region fd", s_region_eventfd},
};
const size_t hs_n_mem = sizeof(hs_mem_scenarios) / sizeof(hs_mem_scenarios[0]);
