/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost-user port against a raw front-end written here (the test is both
 * the "QEMU" side and the poller): shared guest memory from a memfd, the
 * vhost-user set-up messages, split rings laid out by hand. Checks what
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
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include <linux/virtio_ring.h>
#include <rte_mbuf.h>
#include <rte_vhost.h>
#include <urcu-qsbr.h>

#include <vsw/vport.h>

#include "test_vport.h"

#define G_SIZE (2u << 20) /* guest memory */
#define G_GPA 0x100000ull /* its guest-physical base */
#define Q_SIZE 256u
#define BUF_LEN 2048u
#define HDR_LEN 12u

enum {
	VHU_GET_FEATURES = 1,
	VHU_SET_FEATURES = 2,
	VHU_SET_OWNER = 3,
	VHU_SET_MEM_TABLE = 5,
	VHU_SET_VRING_NUM = 8,
	VHU_SET_VRING_ADDR = 9,
	VHU_SET_VRING_BASE = 10,
	VHU_GET_VRING_BASE = 11,
	VHU_SET_VRING_KICK = 12,
	VHU_SET_VRING_CALL = 13,
	VHU_SET_PROTOCOL_FEATURES = 16,
	VHU_SET_VRING_ENABLE = 18,
};

struct vhu_msg {
	uint32_t request, flags, size;
	union {
		uint64_t u64;
		struct {
			uint32_t index, num;
		} state;
		struct {
			uint32_t index, flags;
			uint64_t desc, used, avail, log;
		} addr;
		struct {
			uint32_t nregions, padding;
			uint64_t gpa, size, uaddr, offset;
		} mem;
	} u;
} __attribute__((packed));

struct fe { /* the front-end */
	int sock, memfd;
	uint8_t *mem;
	int kick[2], call[2];
	struct vring vr[2]; /* 0: guest RX, 1: guest TX */
	uint16_t avail_idx[2];
};

static uint64_t
gpa_of(struct fe *f, const void *p)
{
	return G_GPA + (uint64_t)((const uint8_t *)p - f->mem);
}

static void
fe_send(struct fe *f, uint32_t req, const void *payload, uint32_t size, int fd)
{
	struct vhu_msg m = {.request = req, .flags = 1, .size = size};
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {&m, 12 + size};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (size != 0)
		memcpy(&m.u, payload, size);
	if (fd >= 0) {
		struct cmsghdr *c;

		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	assert_int_equal(sendmsg(f->sock, &mh, 0), (ssize_t)(12 + size));
}

static void
fe_reply(struct fe *f, uint32_t req, struct vhu_msg *m)
{
	ssize_t n = read(f->sock, m, sizeof(*m));

	assert_true(n >= 12);
	assert_int_equal(m->request, req);
}

static void
fe_state(struct fe *f, uint32_t req, uint32_t index, uint32_t num)
{
	struct {
		uint32_t index, num;
	} s = {index, num};

	fe_send(f, req, &s, sizeof(s), -1);
}

static void
fe_vring_setup(struct fe *f, uint32_t i, uint16_t base)
{
	struct vhu_msg m;
	uint64_t idx = i;

	fe_state(f, VHU_SET_VRING_NUM, i, Q_SIZE);
	fe_state(f, VHU_SET_VRING_BASE, i, base);
	m.u.addr.index = i;
	m.u.addr.flags = 0;
	/* ring addresses are front-end virtual: ours */
	m.u.addr.desc = (uint64_t)(uintptr_t)f->vr[i].desc;
	m.u.addr.used = (uint64_t)(uintptr_t)f->vr[i].used;
	m.u.addr.avail = (uint64_t)(uintptr_t)f->vr[i].avail;
	m.u.addr.log = 0;
	fe_send(f, VHU_SET_VRING_ADDR, &m.u.addr, sizeof(m.u.addr), -1);
	fe_send(f, VHU_SET_VRING_KICK, &idx, 8, f->kick[i]);
	fe_send(f, VHU_SET_VRING_CALL, &idx, 8, f->call[i]);
	fe_state(f, VHU_SET_VRING_ENABLE, i, 1);
}

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

static void
fe_connect(struct fe *f, const char *path, uint64_t features)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = 5};
	struct vhu_msg m;
	uint64_t pf = (1ULL << VHOST_USER_PROTOCOL_F_MQ);
	uint32_t i;

	memset(f, 0, sizeof(*f));
	f->memfd = memfd_create("vsw-test-guest", 0);
	assert_true(f->memfd >= 0);
	assert_int_equal(ftruncate(f->memfd, G_SIZE), 0);
	f->mem = mmap(
		NULL, G_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, f->memfd, 0);
	assert_true(f->mem != MAP_FAILED);
	for (i = 0; i < 2; i++) {
		vring_init(&f->vr[i], Q_SIZE, f->mem + i * 0x8000, 4096);
		f->kick[i] = eventfd(0, EFD_NONBLOCK);
		f->call[i] = eventfd(0, EFD_NONBLOCK);
	}
	f->sock = socket(AF_UNIX, SOCK_STREAM, 0);
	setsockopt(f->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	assert_int_equal(
		connect(f->sock, (struct sockaddr *)&sun, sizeof(sun)), 0);
	fe_send(f, VHU_GET_FEATURES, NULL, 0, -1);
	fe_reply(f, VHU_GET_FEATURES, &m);
	assert_int_equal(m.u.u64 & features, features);
	fe_send(f, VHU_SET_FEATURES, &features, 8, -1);
	fe_send(f, VHU_SET_PROTOCOL_FEATURES, &pf, 8, -1);
	fe_send(f, VHU_SET_OWNER, NULL, 0, -1);
	m.u.mem.nregions = 1;
	m.u.mem.padding = 0;
	m.u.mem.gpa = G_GPA;
	m.u.mem.size = G_SIZE;
	m.u.mem.uaddr = (uint64_t)(uintptr_t)f->mem;
	m.u.mem.offset = 0;
	fe_send(f, VHU_SET_MEM_TABLE, &m.u.mem, sizeof(m.u.mem), f->memfd);
}

static void
fe_close(struct fe *f)
{
	int i;

	close(f->sock);
	for (i = 0; i < 2; i++) {
		close(f->kick[i]);
		close(f->call[i]);
	}
	munmap(f->mem, G_SIZE);
	close(f->memfd);
}

/* Post one single-descriptor buffer (slot = descriptor index). */
static void
fe_post(struct fe *f, uint32_t q, uint16_t slot, uint32_t len, bool write)
{
	struct vring *vr = &f->vr[q];
	uint8_t *buf = f->mem + 0x20000 + (q * Q_SIZE + slot) * BUF_LEN;

	vr->desc[slot].addr = gpa_of(f, buf);
	vr->desc[slot].len = len;
	vr->desc[slot].flags = write ? VRING_DESC_F_WRITE : 0;
	vr->desc[slot].next = 0;
	vr->avail->ring[f->avail_idx[q] % Q_SIZE] = slot;
	__atomic_store_n(&vr->avail->idx, ++f->avail_idx[q], __ATOMIC_RELEASE);
}

/* TX chains with frame bytes = their index, for checking the copies. */
static void
fe_send_frames(struct fe *f, uint16_t n)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		uint16_t slot = f->avail_idx[1] % Q_SIZE;
		uint8_t *buf = f->mem + 0x20000 + (Q_SIZE + slot) * BUF_LEN;

		memset(buf, 0, HDR_LEN);
		memset(buf + HDR_LEN, (uint8_t)f->avail_idx[1], 60);
		fe_post(f, 1, slot, HDR_LEN + 60, false);
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
call_count(struct fe *f, uint32_t q)
{
	eventfd_t v = 0;

	return eventfd_read(f->call[q], &v) == 0 ? v : 0;
}

static uint32_t
get_vring_base(struct fe *f, uint32_t q)
{
	struct vhu_msg m;

	fe_state(f, VHU_GET_VRING_BASE, q, 0);
	fe_reply(f, VHU_GET_VRING_BASE, &m);
	assert_int_equal(m.u.state.index, q);
	return m.u.state.num;
}

/* Device up: 5 TX frames, then RX with EVENT_IDX interrupt decisions. */
static void
first_lifetime(struct vsw_vport *p, struct fe *f)
{
	uint16_t i;

	/* TX: 5 frames, in order, bytes intact; used ring published */
	fe_send_frames(f, 5);
	assert_int_equal(backend_dequeue(p, 0), 5);
	assert_int_equal(f->vr[1].used->idx, 5);

	/* RX with EVENT_IDX: the first publication always notifies ... */
	for (i = 0; i < 8; i++)
		fe_post(f, 0, i, BUF_LEN, true);
	vring_used_event(&f->vr[0]) = 0;
	assert_int_equal(backend_enqueue(p, 2), 2);
	assert_int_equal(call_count(f, 0), 1);
	/* ... then only when used crosses used_event (asked for idx 5) */
	vring_used_event(&f->vr[0]) = 5;
	assert_int_equal(backend_enqueue(p, 2), 2); /* used 2 -> 4 */
	assert_int_equal(call_count(f, 0), 0);
	assert_int_equal(backend_enqueue(p, 2), 2); /* used 4 -> 6 */
	assert_int_equal(call_count(f, 0), 1);
	assert_int_equal(f->vr[0].used->idx, 6);
}

void
test_vport_guest_resume(void **state)
{
	const uint64_t feat = (1ULL << VIRTIO_F_VERSION_1) |
			      (1ULL << VIRTIO_NET_F_MRG_RXBUF) |
			      (1ULL << VIRTIO_RING_F_EVENT_IDX) |
			      (1ULL << VHOST_USER_F_PROTOCOL_FEATURES);
	uint64_t s[VSW_VIRTQ_STAT__MAX];
	struct vsw_vport *p;
	struct fe f;
	char path[108];

	(void)state;
	p = vport_test_port("guest.sock", path, sizeof(path));
	rcu_register_thread();
	rcu_thread_offline();
	fe_connect(&f, path, feat);
	fe_vring_setup(&f, 0, 0);
	fe_vring_setup(&f, 1, 0);
	wait_live(p, 2);

	first_lifetime(p, &f);

	/* the guest disables its RX vring: nothing may be put there */
	fe_state(&f, VHU_SET_VRING_ENABLE, 0, 0);
	wait_live(p, 1);
	assert_int_equal(backend_enqueue(p, 1), 0);
	assert_int_equal(f.vr[0].used->idx, 6);
	vsw_vport_stats_get(p, s);
	assert_int_equal(s[VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY], 1);
	fe_state(&f, VHU_SET_VRING_ENABLE, 0, 1);
	wait_live(p, 2);

	/* stop: GET_VRING_BASE answers where our data path stopped */
	assert_int_equal(get_vring_base(&f, 1), 5);
	assert_int_equal(get_vring_base(&f, 0), 6);
	wait_live(p, 0);
	assert_int_equal(backend_dequeue(p, 0), 0); /* nothing polled */

	/* frames queued while stopped; resume from the bases handed back */
	fe_send_frames(&f, 3);
	fe_vring_setup(&f, 0, 6);
	fe_vring_setup(&f, 1, 5);
	wait_live(p, 2);
	assert_int_equal(backend_dequeue(p, 5), 3); /* not 8: resumed at 5 */
	assert_int_equal(f.vr[1].used->idx, 8);
	assert_int_equal(backend_enqueue(p, 2), 2); /* 2 buffers left */
	assert_int_equal(backend_enqueue(p, 1), 0); /* ring full */
	assert_int_equal(f.vr[0].used->idx, 8);

	/* counters add up over both device lifetimes */
	vsw_vport_stats_get(p, s);
	assert_int_equal(s[VSW_VIRTQ_STAT_DEQ_PACKETS], 8);
	assert_int_equal(s[VSW_VIRTQ_STAT_DEQ_BYTES], 8 * 60);
	assert_int_equal(s[VSW_VIRTQ_STAT_ENQ_PACKETS], 8);
	assert_int_equal(s[VSW_VIRTQ_STAT_ENQ_BYTES], 8 * 100);
	assert_int_equal(s[VSW_VIRTQ_STAT_ENQ_DROP_RING_FULL], 1);
	assert_int_equal(s[VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY], 1);
	assert_true(s[VSW_VIRTQ_STAT_NOTIFY_SENT] >= 2);

	fe_close(&f);
	wait_live(p, 0);
	rcu_thread_online();
	rcu_unregister_thread();
	vsw_vport_destroy(p);
	assert_int_equal(rte_mempool_avail_count(vport_test_pool),
		vport_test_pool->size);
}
