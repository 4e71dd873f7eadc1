/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Message-level scenarios: malformed, out-of-range and out-of-order
 * vhost-user messages over the real socket (memory tables and vrings set
 * up wrong: hostile_vring.c). The front-end checks what it can see (vswd
 * closed the connection, or the device still works); the driver checks
 * the counters and that no fd stayed behind in vswd.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hostile.h"

static int
s_short_header(struct hs_ctx *c)
{
	static const unsigned char b[6] = {VU_SET_OWNER, 0, 0, 0, 1, 0};

	if (hs_opened(c) != 0)
		return 1;
	vu_send_raw(&c->f, b, sizeof(b), NULL, 0);
	shutdown(c->f.sock, SHUT_WR);
	return hs_closed(c);
}

static int
s_truncated_payload(struct hs_ctx *c)
{
	struct vu_msg m = {.request = VU_SET_VRING_ADDR,
		.flags = VU_FLAG_VERSION,
		.size = 40};

	if (hs_negotiated(c) != 0)
		return 1;
	vu_send_raw(&c->f, &m, VU_HDR_SIZE + 20, NULL, 0);
	shutdown(c->f.sock, SHUT_WR);
	return hs_closed(c);
}

static int
s_oversize(struct hs_ctx *c)
{
	struct vu_msg m = {.request = VU_SET_MEM_TABLE,
		.flags = VU_FLAG_VERSION,
		.size = 0x10000};

	if (hs_opened(c) != 0)
		return 1;
	vu_send_raw(&c->f, &m, sizeof(m), NULL, 0);
	return hs_closed(c);
}

static int
s_unknown_request(struct hs_ctx *c)
{
	uint64_t v = 0;

	return hs_sent_closes(c, 99, &v, sizeof(v), 0);
}

/* SET_VRING_NUM with only the index: the size is whatever was there. */
static int
s_size_vring_num(struct hs_ctx *c)
{
	uint32_t idx = 0;

	return hs_sent_closes(c, VU_SET_VRING_NUM, &idx, sizeof(idx), 0);
}

static int
s_size_features(struct hs_ctx *c)
{
	uint16_t v = 0;

	if (hs_opened(c) != 0)
		return 1;
	vu_send(&c->f, VU_SET_FEATURES, &v, sizeof(v), NULL, 0);
	return hs_closed(c);
}

static int
s_size_vring_addr(struct hs_ctx *c)
{
	uint32_t a[4] = {0, 0, 0, 0};

	return hs_sent_closes(c, VU_SET_VRING_ADDR, a, sizeof(a), 0);
}

/* Three fds on a message that takes none. */
static int
s_fds_on_fdless(struct hs_ctx *c)
{
	uint32_t s[2] = {0, 256};

	return hs_sent_closes(c, VU_SET_VRING_NUM, s, sizeof(s), 3);
}

/* A one-region memory table carrying 12 fds (the limit is 8). */
static int
s_too_many_fds(struct hs_ctx *c)
{
	struct vu_msg m;
	int fds[12], i;

	if (hs_opened(c) != 0 || vu_negotiate(&c->f, VU_FEATURES_DEFAULT) != 0)
		return 1;
	for (i = 0; i < 12; i++)
		fds[i] = c->f.memfd;
	memset(&m, 0, sizeof(m));
	m.u.mem.nregions = 1;
	m.u.mem.r[0] = (struct vu_region){
		VU_GPA_BASE, VU_MEM_SIZE, (uint64_t)(uintptr_t)c->f.mem, 0};
	vu_send(&c->f, VU_SET_MEM_TABLE, &m.u.mem, 8 + 32, fds, 12);
	return hs_closed(c);
}


/* Legal order variation: size, base, kick and call before the memory
 * table, ring addresses after it (as QEMU may send call fds early). */
static int
s_kick_before_mem(struct hs_ctx *c)
{
	unsigned char frame[64];
	uint32_t q;

	if (hs_opened(c) != 0 || vu_negotiate(&c->f, VU_FEATURES_DEFAULT) != 0)
		return 1;
	for (q = 0; q < 2; q++) {
		vu_send_state(&c->f, VU_SET_VRING_NUM, q, 256);
		vu_send_state(&c->f, VU_SET_VRING_BASE, q, 0);
		vu_send_u64(&c->f, VU_SET_VRING_KICK, q, c->f.kick[q]);
		vu_send_u64(&c->f, VU_SET_VRING_CALL, q, c->f.call[q]);
	}
	if (vu_mem_table(&c->f) != 0 || vu_vring_setup(&c->f, 0, 256) != 0 ||
		vu_vring_setup(&c->f, 1, 256) != 0)
		return 1;
	hs_frame(frame, sizeof(frame), 0);
	vu_tx(&c->f, frame, sizeof(frame));
	if (!vu_wait_used(&c->f, 1, 1, 3000)) {
		hs_note("device never came up");
		return 1;
	}
	return 0;
}

/* Ring addresses before any memory table: librte_vhost refuses. */
static int
s_addr_before_mem(struct hs_ctx *c)
{
	if (hs_opened(c) != 0 || vu_negotiate(&c->f, VU_FEATURES_DEFAULT) != 0)
		return 1;
	vu_vring_setup(&c->f, 1, 256);
	return hs_closed(c);
}

/* A request of a protocol feature vsw does not offer, with fds. */
static int
not_offered(struct hs_ctx *c, uint32_t req, uint32_t size, int nfds)
{
	/* inflight: mmap_size 1 TiB, offset 0, num_queues 1, size 256 */
	uint64_t p[8] = {1ull << 40, 0, 1 | (256ull << 16), 0, 0, 0, 0, 0};

	return hs_sent_closes(c, req, p, size, nfds);
}

/* num_queues 1: reaches vsw's check, which refuses the request. */
static int
s_inflight_fd(struct hs_ctx *c)
{
	return not_offered(c, VU_SET_INFLIGHT_FD, 24, 1);
}

/*
 * num_queues 0: librte_vhost 22.11 computes vring index num_queues - 1,
 * refuses it in its queue allocation before any hook runs, and never
 * closes the fds the message carried (one leaked fd per message: fd
 * exhaustion, and vsw cannot intervene).
 */
static int
s_inflight_idx(struct hs_ctx *c)
{
	uint64_t p[3] = {1 << 20, 0, 0}; /* size, offset, num_queues 0 */

	return hs_sent_closes(c, VU_SET_INFLIGHT_FD, p, sizeof(p), 1);
}

static int
s_backend_req_fd(struct hs_ctx *c)
{
	return not_offered(c, VU_SET_BACKEND_REQ_FD, 8, 1);
}

static int
s_iotlb(struct hs_ctx *c)
{
	return not_offered(c, VU_IOTLB_MSG, 32, 0);
}

static int
s_set_config(struct hs_ctx *c)
{
	return not_offered(c, VU_SET_CONFIG, 24, 0);
}

static int
s_postcopy(struct hs_ctx *c)
{
	return not_offered(c, VU_POSTCOPY_ADVISE, 0, 0);
}

/*
 * With REPLY_ACK negotiated and NEED_REPLY set, a refused message is
 * answered with a nack (payload != 0) and the connection stays: the
 * front-end is told, the vring stays unusable.
 */
static int
s_need_reply(struct hs_ctx *c)
{
	struct vu_msg m = {.request = VU_SET_VRING_NUM,
		.flags = VU_FLAG_VERSION | VU_FLAG_NEED_REPLY,
		.size = 8};
	struct vu_msg r;

	if (hs_opened(c) != 0 || vu_negotiate(&c->f, VU_FEATURES_DEFAULT) != 0)
		return 1;
	vu_send_u64(&c->f, VU_SET_PROTOCOL_FEATURES,
		(1ull << VU_PROTOCOL_F_MQ) | (1ull << VU_PROTOCOL_F_REPLY_ACK),
		-1);
	if (vu_mem_table(&c->f) != 0)
		return 1;
	m.u.state.index = 1;
	m.u.state.num = 100;
	vu_send_raw(&c->f, &m, VU_HDR_SIZE + 8, NULL, 0);
	if (vu_recv(&c->f, &r, 3000) != 0) {
		hs_note("no reply-ack");
		return 1;
	}
	if (r.request != VU_SET_VRING_NUM || r.u.u64 == 0) {
		hs_note("reply-ack %u says %llu, want a nack", r.request,
			(unsigned long long)r.u.u64);
		return 1;
	}
	return 0;
}

/* NET_SET_MTU with NEED_REPLY (as QEMU sends host_mtu=): one below 68,
 * one above 65535 and one with the high word set are nacked, 1500 acked;
 * the connection stays. */
static int
s_net_mtu(struct hs_ctx *c)
{
	static const uint64_t bad[] = {67, 65536, (1ull << 32) | 1500};
	struct vu_msg m = {.request = VU_NET_SET_MTU,
		.flags = VU_FLAG_VERSION | VU_FLAG_NEED_REPLY,
		.size = 8};
	struct vu_msg r;

	if (hs_opened(c) != 0 || vu_negotiate(&c->f, VU_FEATURES_DEFAULT) != 0)
		return 1;
	vu_send_u64(&c->f, VU_SET_PROTOCOL_FEATURES,
		(1ull << VU_PROTOCOL_F_REPLY_ACK) |
			(1ull << VU_PROTOCOL_F_NET_MTU),
		-1);
	for (unsigned i = 0; i <= 3; i++) {
		m.u.u64 = i < 3 ? bad[i] : 1500;
		vu_send_raw(&c->f, &m, VU_HDR_SIZE + 8, NULL, 0);
		if (vu_recv(&c->f, &r, 3000) != 0 ||
			r.request != VU_NET_SET_MTU ||
			(r.u.u64 == 0) != (i == 3)) {
			hs_note("NET_SET_MTU %llu: no reply or a wrong one",
				(unsigned long long)m.u.u64);
			return 1;
		}
	}
	return 0;
}

/* Running device, then SET_FEATURES with EVENT_IDX dropped. */
static int
s_features_running(struct hs_ctx *c)
{
	unsigned char frame[64];

	if (vu_start(&c->f, c->path, VU_FEATURES_DEFAULT, 256) != 0)
		return 1;
	hs_frame(frame, sizeof(frame), 0);
	vu_tx(&c->f, frame, sizeof(frame));
	if (!vu_wait_used(&c->f, 1, 1, 3000)) {
		hs_note("device never came up");
		return 1;
	}
	vu_send_u64(&c->f, VU_SET_FEATURES, VU_FEATURES_DEFAULT & ~(1ull << 29),
		-1);
	return hs_closed(c);
}

/* 200 connections: closed at once, after SET_OWNER, after the memory
 * table, after a full start. */
static int
s_flood(struct hs_ctx *c)
{
	int i;

	for (i = 0; i < 200; i++) {
		if (vu_open(&c->f, c->path) != 0) {
			hs_note("connect %d failed", i);
			return 1;
		}
		if (i % 4 >= 1)
			vu_negotiate(&c->f, VU_FEATURES_DEFAULT);
		if (i % 4 >= 2)
			vu_mem_table(&c->f);
		if (i % 4 == 3) {
			vu_vring_setup(&c->f, 0, 256);
			vu_vring_setup(&c->f, 1, 256);
		}
		vu_close(&c->f);
	}
	return 0;
}

const struct hs_scenario hs_msg_scenarios[] = {
	{"msg-short-header", "disconnects",
		"6 of the 12 header bytes, then EOF", s_short_header},
	{"msg-truncated-payload", "disconnects",
		"SET_VRING_ADDR header says 40 bytes, 20 follow, EOF",
		s_truncated_payload},
	{"msg-oversize", "disconnects", "header size 65536 (> any payload)",
		s_oversize},
	{"msg-unknown-request", "disconnects", "request code 99",
		s_unknown_request},
	{"msg-size-vring-num", "msg_rejected,disconnects",
		"SET_VRING_NUM with a 4-byte payload", s_size_vring_num},
	{"msg-size-features", "msg_rejected,disconnects",
		"SET_FEATURES with a 2-byte payload", s_size_features},
	{"msg-size-vring-addr", "msg_rejected,disconnects",
		"SET_VRING_ADDR with a 16-byte payload", s_size_vring_addr},
	{"msg-fds-on-fdless", "disconnects", "SET_VRING_NUM carrying 3 fds",
		s_fds_on_fdless},
	{"msg-too-many-fds", "disconnects",
		"SET_MEM_TABLE carrying 12 fds (max 8)", s_too_many_fds},
	{"order-kick-before-mem", "deq_packets",
		"NUM/BASE/KICK/CALL before SET_MEM_TABLE (legal: works)",
		s_kick_before_mem},
	{"order-addr-before-mem", "disconnects",
		"SET_VRING_ADDR before SET_MEM_TABLE", s_addr_before_mem},
	{"msg-inflight-fd", "msg_rejected,disconnects",
		"SET_INFLIGHT_FD (not offered), 1 TiB mmap_size, an fd",
		s_inflight_fd},
	{"msg-inflight-idx", "disconnects,!fdleak=1",
		"SET_INFLIGHT_FD num_queues 0 + an fd (librte_vhost leaks it)",
		s_inflight_idx},
	{"msg-backend-req-fd", "msg_rejected,disconnects",
		"SET_BACKEND_REQ_FD (not offered) with an fd",
		s_backend_req_fd},
	{"msg-iotlb", "msg_rejected,disconnects",
		"IOTLB_MSG without IOMMU_PLATFORM", s_iotlb},
	{"msg-set-config", "msg_rejected,disconnects",
		"SET_CONFIG (not offered)", s_set_config},
	{"msg-postcopy-advise", "msg_rejected,disconnects",
		"POSTCOPY_ADVISE (not offered)", s_postcopy},
	{"msg-need-reply-nack", "msg_rejected",
		"SET_VRING_NUM 100 with NEED_REPLY: nack, connection kept",
		s_need_reply},
	{"msg-net-mtu-range", "msg_rejected",
		"NET_SET_MTU 67, 65536, 2^32 + 1500: nacked; 1500 acked",
		s_net_mtu},
	{"order-features-running", "disconnects",
		"SET_FEATURES changes bits while running", s_features_running},
	{"connect-flood", "disconnects",
		"200 connects, closed at 4 different set-up stages", s_flood},
};
const size_t hs_n_msg = sizeof(hs_msg_scenarios) / sizeof(hs_msg_scenarios[0]);
