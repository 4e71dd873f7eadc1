/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The call eventfd made blocking behind vsw's back (issue 10, the residual
 * of item 1): O_NONBLOCK belongs to the open file, which the front-end
 * shares. After the device is up, the front-end clears the flag on its own
 * copy and fills the counter (2^64 - 2): the PMD's next guest-interrupt
 * write blocks. The PMD watchdog must signal it out of the write; the PMD
 * gives that fd up (call_blocked) and the port is disconnected, while the
 * neighbours on the same PMD keep their rate.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hostile.h"

#define EVENT_IDX (1ull << 29)

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void
rx_drop(void *ctx, const uint8_t *frame, uint32_t len)
{
	(void)ctx;
	(void)frame;
	(void)len;
}

/* Empty the counter and fill it to the limit while the fd is still
 * non-blocking (vsw may add one between the two: retry). */
static int
saturate(int fd)
{
	const uint64_t full = 0xfffffffffffffffeull;
	uint64_t v;
	int i, fl;

	for (i = 0; i < 1000; i++) {
		if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			return -errno;
		if (write(fd, &full, sizeof(full)) == sizeof(full))
			break;
		if (errno != EAGAIN)
			return -errno;
	}
	if (i == 1000)
		return -EAGAIN;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
		return -errno;
	return 0;
}

/*
 * Both vrings' call fds; a guest without EVENT_IDX wants an interrupt per
 * used batch (h's RX gets the a -> b mirror, its TX what we send). The
 * front-end then keeps the rings moving until vswd closes the connection.
 */
static int
s_call_blocking_full(struct hs_ctx *c)
{
	unsigned char frame[64];
	unsigned long long seq = 0;
	long end;
	int q, rc = vu_open(&c->f, c->path);

	if (rc == 0)
		rc = vu_negotiate(&c->f, VU_FEATURES_DEFAULT & ~EVENT_IDX);
	if (rc == 0)
		rc = vu_mem_table(&c->f);
	for (q = 0; rc == 0 && q < 2; q++)
		rc = vu_vring_setup(&c->f, (uint32_t)q, 256);
	if (rc != 0) {
		hs_note("set-up failed: %s", strerror(-rc));
		return 1;
	}
	hs_sleep_ms(300); /* the device is up: vsw set O_NONBLOCK again */
	for (q = 0; q < 2; q++) {
		rc = saturate(c->f.call[q]);
		if (rc != 0) {
			hs_note("call fd %d not filled: %s", q, strerror(-rc));
			return 1;
		}
	}
	for (end = now_ms() + 3000; now_ms() < end;) {
		hs_frame(frame, sizeof(frame), seq++);
		vu_tx(&c->f, frame, sizeof(frame));
		vu_tx_reclaim(&c->f);
		vu_rx_poll(&c->f, rx_drop, NULL);
		vu_rx_refill(&c->f);
		if (vu_peer_closed(&c->f, 1))
			return 0;
	}
	hs_note("connection still open with blocking, full call fds");
	return 1;
}

const struct hs_scenario hs_callfd_scenarios[] = {
	{"callfd-blocking-full",
		"call_blocked,disconnects,pmd:watchdog_signals,"
		"metric:vsw_pmd_watchdog_signals_total",
		"call eventfd made blocking by the peer and filled (PMD "
		"watchdog)",
		s_call_blocking_full},
};
const size_t hs_n_callfd =
	sizeof(hs_callfd_scenarios) / sizeof(hs_callfd_scenarios[0]);
