/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A guest that enables only some of the queue pairs offered (vport_qp.c),
 * from a raw front-end: a queues=2 port, vrings 0/1 by vu_front, vrings
 * 2/3 set up by hand in the free guest memory between vu_front's ring and
 * buffer areas. Checks that the device starts with pair 1 disabled, what
 * vsw_vport_qp_state says, that a send for the disabled pair lands in pair
 * 0's RX ring (re-steered, not counted as a drop), and that run-time
 * enables and disables are followed; with no pair enabled a send counts as
 * not ready on the pair asked for.
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

#define Q_SIZE 64u

/* Vring q (2 or 3) laid out at VU_RING_AREA * q: NUM/BASE/ADDR/KICK/CALL. */
static void
extra_vring(struct vu_front *f, uint32_t q, int fds[2])
{
	struct vring vr;
	struct vu_msg m;

	memset(f->mem + q * VU_RING_AREA, 0, VU_RING_AREA);
	vring_init(&vr, Q_SIZE, f->mem + q * VU_RING_AREA, 4096);
	memset(&m, 0, sizeof(m));
	m.u.addr.index = q;
	m.u.addr.desc = (uint64_t)(uintptr_t)vr.desc;
	m.u.addr.avail = (uint64_t)(uintptr_t)vr.avail;
	m.u.addr.used = (uint64_t)(uintptr_t)vr.used;
	fds[0] = eventfd(0, EFD_NONBLOCK);
	fds[1] = eventfd(0, EFD_NONBLOCK);
	assert_true(fds[0] >= 0 && fds[1] >= 0);
	assert_int_equal(vu_send_state(f, VU_SET_VRING_NUM, q, Q_SIZE), 0);
	assert_int_equal(vu_send_state(f, VU_SET_VRING_BASE, q, 0), 0);
	assert_int_equal(vu_send(f, VU_SET_VRING_ADDR, &m.u.addr,
				 sizeof(m.u.addr), NULL, 0),
		0);
	assert_int_equal(vu_send_u64(f, VU_SET_VRING_KICK, q, fds[0]), 0);
	assert_int_equal(vu_send_u64(f, VU_SET_VRING_CALL, q, fds[1]), 0);
}

/* Wait until pair qp's state is this (messages are handled
 * asynchronously); enabled must then equal live. */
static void
wait_qp(struct vsw_vport *p, uint16_t qp, bool live, uint16_t tx_to,
	const char *why)
{
	struct vsw_vport_qp_state st;
	int i;

	for (i = 0; i < 500; i++) {
		assert_int_equal(vsw_vport_qp_state_get(p, qp, &st), 0);
		if (st.live == live && st.tx_to == tx_to &&
			strcmp(st.why, why) == 0)
			break;
		usleep(10000);
	}
	if (st.live != live || st.tx_to != tx_to || strcmp(st.why, why) != 0)
		fail_msg("pair %u: live %d tx_to %u (%s), want %d %u", qp,
			st.live, st.tx_to, st.why, live, tx_to);
	assert_int_equal(st.enabled, live);
}

/* n 100-byte packets sent to pair qp; how many the guest got. */
static uint16_t
send_to(struct vsw_vport *p, uint16_t qp, uint16_t n)
{
	struct rte_mbuf *m[32];
	uint16_t i, sent;

	assert_int_equal(rte_pktmbuf_alloc_bulk(vport_test_pool, m, n), 0);
	for (i = 0; i < n; i++)
		memset(rte_pktmbuf_append(m[i], 100), 0x5a, 100);
	rcu_thread_online();
	sent = vsw_vport_enqueue_burst(p, qp, m, n);
	rcu_quiescent_state();
	rcu_thread_offline();
	rte_pktmbuf_free_bulk(m, n);
	return sent;
}

static void
count_rx(void *ctx, const uint8_t *frame, uint32_t len)
{
	(void)frame;
	assert_int_equal(len, 100);
	(*(uint32_t *)ctx)++;
}

/* Returns once the back-end handled every message sent before: it
 * handles them in order, and answers this one (vport_dev.c's hook). */
static void
sync_backend(struct vu_front *f)
{
	struct vu_msg m;

	assert_int_equal(vu_send(f, VU_GET_QUEUE_NUM, NULL, 0, NULL, 0), 0);
	assert_int_equal(vu_recv(f, &m, 5000), 0);
	assert_int_equal(m.request, VU_GET_QUEUE_NUM);
}

static void
enable(struct vu_front *f, uint32_t first, uint32_t last, uint32_t on)
{
	for (uint32_t q = first; q <= last; q++)
		assert_int_equal(
			vu_send_state(f, VU_SET_VRING_ENABLE, q, on), 0);
	sync_backend(f);
}

void
test_vport_mq_subset(void **state)
{
	const uint64_t feat = (1ULL << VIRTIO_F_VERSION_1) |
			      (1ULL << VIRTIO_NET_F_MQ) |
			      (1ULL << VU_F_PROTOCOL_FEATURES);
	uint64_t s[VSW_VIRTQ_STAT__MAX];
	struct vsw_vport_info info;
	struct vsw_vport *p;
	struct vu_front f;
	int fds[2][2];
	uint32_t got = 0;
	char path[108];

	(void)state;
	p = vport_test_port_qps("mq.sock", path, sizeof(path), 2);
	rcu_register_thread();
	rcu_thread_offline();
	assert_int_equal(vu_start(&f, path, feat, Q_SIZE), 0);
	extra_vring(&f, 2, fds[0]);
	extra_vring(&f, 3, fds[1]);
	/* as a 1-vCPU Linux guest: pair 1 disabled */
	enable(&f, 2, 3, 0);
	wait_qp(p, 0, true, 0, "");
	wait_qp(p, 1, false, 0, "disabled by guest");
	vsw_vport_info_get(p, &info);
	assert_true(info.running);
	assert_int_equal(info.queues_live, 2);

	/* a send for pair 1 goes to pair 0's RX ring, none is dropped */
	assert_int_equal(vu_rx_post(&f, 8), 8);
	assert_int_equal(send_to(p, 1, 5), 5);
	assert_int_equal(vu_rx_poll(&f, count_rx, &got), 5);
	assert_int_equal(vsw_vport_queue_stats_get(p, 1, s), 0);
	assert_int_equal(s[VSW_VIRTQ_STAT_ENQ_PACKETS], 0);
	assert_int_equal(s[VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY], 0);
	assert_int_equal(vsw_vport_queue_stats_get(p, 0, s), 0);
	assert_int_equal(s[VSW_VIRTQ_STAT_ENQ_PACKETS], 5);

	/* run time: pair 1 on (ethtool -L combined 2), off again */
	enable(&f, 2, 3, 1);
	wait_qp(p, 1, true, 1, "");
	vsw_vport_info_get(p, &info);
	assert_int_equal(info.queues_live, 4);
	enable(&f, 2, 3, 0);
	wait_qp(p, 1, false, 0, "disabled by guest");
	wait_qp(p, 0, true, 0, "");

	/* pair 0 off too: nowhere to send, counted on the pair asked for */
	enable(&f, 0, 1, 0);
	wait_qp(p, 0, false, VSW_VPORT_QP_NONE, "disabled by guest");
	assert_int_equal(send_to(p, 1, 3), 0);
	assert_int_equal(vsw_vport_queue_stats_get(p, 1, s), 0);
	assert_int_equal(s[VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY], 3);
	assert_int_equal(vsw_vport_queue_stats_get(p, 0, s), 0);
	assert_int_equal(s[VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY], 0);

	vu_close(&f);
	for (int i = 0; i < 2; i++) {
		close(fds[i][0]);
		close(fds[i][1]);
	}
	wait_qp(p, 0, false, VSW_VPORT_QP_NONE, "not connected");
	rcu_thread_online();
	rcu_unregister_thread();
	vsw_vport_destroy(p);
	assert_int_equal(rte_mempool_avail_count(vport_test_pool),
		vport_test_pool->size);
}
