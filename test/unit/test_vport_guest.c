/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost-user port against the test front-end test/hostile/vu_front.h (the
 * test is both the "QEMU" side and the poller): shared guest memory from a
 * memfd, the vhost-user set-up messages, split rings laid out by hand; the
 * wire format is vu_front's, an oracle independent of vhost/vport. Checks what
 * only a real connection shows: queues go live on new_device, guest
 * interrupts reach the call eventfd (EVENT_IDX decisions made by the virtq,
 * the write done by the port), GET_VRING_BASE returns the ring index our
 * data path reached (destroy_device hands it back), a vring the guest
 * disables gets nothing (counted not ready), a resumed queue
 * continues from the base the front-end sends back, and counters survive
 * the device's stop and restart.
 *
 * The test thread is a urcu-qsbr reader only around its bursts and goes
 * offline before every message (librte_vhost's thread waits for a grace
 * period inside some of them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cmocka.h>

#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <rte_mbuf.h>
#include <urcu-qsbr.h>

#include <vsw/vport.h>

#include "test_vport.h"
#include "vu_front.h"

#define Q_SIZE 256u

static void
wait_live(struct vsw_vport *p, uint16_t live)
{
	struct vsw_vport_info info;
	int i;

	for (i = 0; i < 500; i++) {
		vsw_vport_info_get(p, &info);
		if (info.queues_live == live && info.running == (live != 0))
			return;
		usleep(10000);
	}
	fail_msg("queues_live %u running %d, want %u", info.queues_live,
		info.running, live);
}

/* Connected, negotiated, memory table sent: no vring yet. */
static void
fe_connect(struct vu_front *f, const char *path, uint64_t features)
{
	assert_int_equal(vu_open(f, path), 0);
	assert_int_equal(vu_negotiate(f, features), 0);
	assert_int_equal(vu_mem_table(f), 0);
}

/* TX chains with frame bytes = their avail index, to check the copies. */
static void
fe_send_frames(struct vu_front *f, uint16_t n)
{
	uint8_t frame[60];
	uint16_t i;

	for (i = 0; i < n; i++) {
		memset(frame, (uint8_t)f->q[1].avail_idx, sizeof(frame));
		assert_int_equal(vu_tx(f, frame, sizeof(frame)), 0);
	}
}

static uint16_t
backend_dequeue(struct vsw_vport *p, uint16_t expect_first)
{
	struct rte_mbuf *m[32];
	uint16_t n, i;

	rcu_thread_online();
	n = vsw_vport_dequeue_burst(p, 0, vport_test_pool, m, 32);
	rcu_quiescent_state();
	rcu_thread_offline();
	for (i = 0; i < n; i++) {
		assert_int_equal(m[i]->pkt_len, 60);
		assert_int_equal(*rte_pktmbuf_mtod(m[i], uint8_t *),
			(uint8_t)(expect_first + i));
	}
	rte_pktmbuf_free_bulk(m, n);
	return n;
}

static uint16_t
backend_enqueue(struct vsw_vport *p, uint16_t n)
{
	struct rte_mbuf *m[32];
	uint16_t i, sent;

	assert_int_equal(rte_pktmbuf_alloc_bulk(vport_test_pool, m, n), 0);
	for (i = 0; i < n; i++)
		memset(rte_pktmbuf_append(m[i], 100), 0x5a, 100);
	rcu_thread_online();
	sent = vsw_vport_enqueue_burst(p, 0, m, n);
	rcu_quiescent_state();
	rcu_thread_offline();
	rte_pktmbuf_free_bulk(m, n);
	return sent;
}

static uint64_t
call_count(struct vu_front *f, uint32_t q)
{
	eventfd_t v = 0;

	return eventfd_read(f->call[q], &v) == 0 ? v : 0;
}

static uint32_t
get_vring_base(struct vu_front *f, uint32_t q)
{
	struct vu_msg m;

	assert_int_equal(vu_send_state(f, VU_GET_VRING_BASE, q, 0), 0);
	assert_int_equal(vu_recv(f, &m, 5000), 0);
	assert_int_equal(m.request, VU_GET_VRING_BASE);
	assert_int_equal(m.u.state.index, q);
	return m.u.state.num;
}

/* Device up: 5 TX frames, then RX with EVENT_IDX interrupt decisions. */
static void
first_lifetime(struct vsw_vport *p, struct vu_front *f)
{
	/* TX: 5 frames, in order, bytes intact; used ring published */
	fe_send_frames(f, 5);
	assert_int_equal(backend_dequeue(p, 0), 5);
	assert_int_equal(f->q[1].vr.used->idx, 5);

	/* RX with EVENT_IDX: the first publication always notifies ... */
	assert_int_equal(vu_rx_post(f, 8), 8);
	vring_used_event(&f->q[0].vr) = 0;
	assert_int_equal(backend_enqueue(p, 2), 2);
	assert_int_equal(call_count(f, 0), 1);
	/* ... then only when used crosses used_event (asked for idx 5) */
	vring_used_event(&f->q[0].vr) = 5;
	assert_int_equal(backend_enqueue(p, 2), 2); /* used 2 -> 4 */
	assert_int_equal(call_count(f, 0), 0);
	assert_int_equal(backend_enqueue(p, 2), 2); /* used 4 -> 6 */
	assert_int_equal(call_count(f, 0), 1);
	assert_int_equal(f->q[0].vr.used->idx, 6);
}

void
test_vport_guest_resume(void **state)
{
	const uint64_t feat = (1ULL << VIRTIO_F_VERSION_1) |
			      (1ULL << VIRTIO_NET_F_MRG_RXBUF) |
			      (1ULL << VIRTIO_RING_F_EVENT_IDX) |
			      (1ULL << VU_F_PROTOCOL_FEATURES);
	uint64_t s[VSW_VIRTQ_STAT__MAX];
	struct vsw_vport *p;
	struct vu_front f;
	char path[108];

	(void)state;
	p = vport_test_port("guest.sock", path, sizeof(path));
	rcu_register_thread();
	rcu_thread_offline();
	fe_connect(&f, path, feat);
	assert_int_equal(vu_vring_setup(&f, 0, Q_SIZE), 0);
	assert_int_equal(vu_vring_setup(&f, 1, Q_SIZE), 0);
	wait_live(p, 2);

	first_lifetime(p, &f);

	/* the guest disables its RX vring: nothing may be put there */
	assert_int_equal(vu_send_state(&f, VU_SET_VRING_ENABLE, 0, 0), 0);
	wait_live(p, 1);
	assert_int_equal(backend_enqueue(p, 1), 0);
	assert_int_equal(f.q[0].vr.used->idx, 6);
	vsw_vport_stats_get(p, s);
	assert_int_equal(s[VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY], 1);
	assert_int_equal(vu_send_state(&f, VU_SET_VRING_ENABLE, 0, 1), 0);
	wait_live(p, 2);

	/* stop: GET_VRING_BASE answers where our data path stopped */
	assert_int_equal(get_vring_base(&f, 1), 5);
	assert_int_equal(get_vring_base(&f, 0), 6);
	wait_live(p, 0);
	assert_int_equal(backend_dequeue(p, 0), 0); /* nothing polled */

	/* frames queued while stopped; resume from the bases handed back */
	fe_send_frames(&f, 3);
	assert_int_equal(vu_vring_resume(&f, 0, 6), 0);
	assert_int_equal(vu_vring_resume(&f, 1, 5), 0);
	wait_live(p, 2);
	assert_int_equal(backend_dequeue(p, 5), 3); /* not 8: resumed at 5 */
	assert_int_equal(f.q[1].vr.used->idx, 8);
	assert_int_equal(backend_enqueue(p, 2), 2); /* 2 buffers left */
	assert_int_equal(backend_enqueue(p, 1), 0); /* ring full */
	assert_int_equal(f.q[0].vr.used->idx, 8);

	/* counters add up over both device lifetimes */
	vsw_vport_stats_get(p, s);
	assert_int_equal(s[VSW_VIRTQ_STAT_DEQ_PACKETS], 8);
	assert_int_equal(s[VSW_VIRTQ_STAT_DEQ_BYTES], 8 * 60);
	assert_int_equal(s[VSW_VIRTQ_STAT_ENQ_PACKETS], 8);
	assert_int_equal(s[VSW_VIRTQ_STAT_ENQ_BYTES], 8 * 100);
	assert_int_equal(s[VSW_VIRTQ_STAT_ENQ_DROP_RING_FULL], 1);
	assert_int_equal(s[VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY], 1);
	assert_true(s[VSW_VIRTQ_STAT_NOTIFY_SENT] >= 2);

	vu_close(&f);
	wait_live(p, 0);
	rcu_thread_online();
	rcu_unregister_thread();
	vsw_vport_destroy(p);
	assert_int_equal(rte_mempool_avail_count(vport_test_pool),
		vport_test_pool->size);
}
