/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Offload header scenarios: a device that negotiated CSUM and HOST_TSO4/6
 * sends TCP/IPv4 frames whose virtio-net header lies about them (gso_size
 * 0, hdr_len or the checksum field past the frame, offsets that wrap 16
 * bits, a GSO type the packet contradicts, UDP GSO that was never offered,
 * NEEDS_CSUM on ICMP, more segments than vsw segments). Each must come back
 * used (len 0), be counted under its own deq_drop_hdr_* reason, and leave
 * the queue working; the driver checks the counters and the neighbours.
 */
#include <string.h>

#include "hostile.h"

#define QS 256u
#define TXQ 1u
#define HEAD 100u
#define PAYLOAD 1000u
#define F_OFFL                                                   \
	((1ull << 0) /* CSUM */ | (1ull << 11) /* HOST_TSO4 */ | \
		(1ull << 12) /* HOST_TSO6 */)

struct net_hdr {
	uint8_t flags, gso_type;
	uint16_t hdr_len, gso_size, csum_start, csum_offset, num_buffers;
} __attribute__((packed));

/* Ethernet + IPv4 (proto) + 20 bytes of TCP (or ICMP) + PAYLOAD. */
static uint32_t
tcp_frame(uint8_t *d, uint8_t proto)
{
	uint32_t tot = 20 + 20 + PAYLOAD;

	memset(d, 0, 14 + tot);
	memset(d, 0x02, 6);
	memset(d + 6, 0x0a, 6);
	d[12] = 0x08;
	d[14] = 0x45;
	d[16] = (uint8_t)(tot >> 8);
	d[17] = (uint8_t)tot;
	d[22] = 64;
	d[23] = proto;
	d[26] = 10, d[29] = 1, d[30] = 10, d[33] = 2;
	d[34 + 12] = 0x50;
	d[34 + 13] = 0x10;
	return 14 + tot;
}

static bool
tx_probe(struct hs_ctx *c)
{
	unsigned char frame[64];
	uint16_t want = c->f.q[TXQ].avail_idx + 1;

	hs_frame(frame, sizeof(frame), 0);
	if (vu_tx(&c->f, frame, sizeof(frame)) != 0)
		return false;
	return vu_wait_used(&c->f, TXQ, want, 3000);
}

/* Up with offloads, send one frame with header h: it must come back used
 * with length 0, and the queue must still take a good frame. */
static int
tx_hdr(struct hs_ctx *c, const struct net_hdr *h, uint8_t proto)
{
	struct vu_ring *r;
	uint8_t *buf;
	const struct vring_used_elem *e;
	uint32_t len;
	uint16_t want;
	int rc = vu_start(&c->f, c->path, VU_FEATURES_DEFAULT | F_OFFL, QS);

	if (rc != 0 || !tx_probe(c)) {
		hs_note("device with offloads did not come up (%d)", rc);
		return 1;
	}
	r = &c->f.q[TXQ];
	buf = vu_ptr(&c->f, VU_SCRATCH); /* guest memory exists from here */
	memcpy(buf, h, sizeof(*h));
	len = tcp_frame(buf + sizeof(*h), proto);
	r->vr.desc[HEAD].addr = vu_gpa(&c->f, buf);
	r->vr.desc[HEAD].len = (uint32_t)sizeof(*h) + len;
	r->vr.desc[HEAD].flags = 0;
	r->vr.desc[HEAD].next = 0;
	want = r->avail_idx + 1;
	vu_avail_push(&c->f, TXQ, HEAD);
	if (!vu_wait_used(&c->f, TXQ, want, 3000)) {
		hs_note("frame with a hostile header never returned");
		return 1;
	}
	e = &r->vr.used->ring[(uint16_t)(want - 1) % r->size];
	if (e->id != HEAD || e->len != 0) {
		hs_note("returned as id %u len %u", e->id, e->len);
		return 1;
	}
	if (!tx_probe(c)) {
		hs_note("queue dead after a hostile header");
		return 1;
	}
	return 0;
}

#define L4 34u /* where TCP starts in tcp_frame */
#define FRAME_LEN (L4 + 20u + PAYLOAD)

static int
s_gso_size_0(struct hs_ctx *c)
{
	struct net_hdr h = {1, 1, L4 + 20, 0, L4, 16, 0};

	return tx_hdr(c, &h, 6);
}

static int
s_gso_tiny(struct hs_ctx *c)
{
	struct net_hdr h = {1, 1, L4 + 20, 1, L4, 16, 0}; /* 1000 segments */

	return tx_hdr(c, &h, 6);
}

static int
s_hdr_len_past(struct hs_ctx *c)
{
	struct net_hdr h = {1, 1, FRAME_LEN + 1, 1448, L4, 16, 0};

	return tx_hdr(c, &h, 6);
}

static int
s_csum_past(struct hs_ctx *c)
{
	struct net_hdr h = {1, 0, 0, 0, FRAME_LEN - 17, 16, 0};

	return tx_hdr(c, &h, 6);
}

static int
s_csum_wrap(struct hs_ctx *c)
{
	struct net_hdr h = {1, 0, 0, 0, 0xffff, 0xffff, 0};

	return tx_hdr(c, &h, 6);
}

static int
s_gso_mismatch(struct hs_ctx *c)
{
	struct net_hdr h = {1, 4 /* TCPV6 */, L4 + 20, 1448, L4, 16, 0};

	return tx_hdr(c, &h, 6);
}

static int
s_gso_udp(struct hs_ctx *c)
{
	struct net_hdr h = {
		1, 3 /* UDP: not offered */, L4 + 8, 1448, L4, 6, 0};

	return tx_hdr(c, &h, 17);
}

static int
s_csum_icmp(struct hs_ctx *c)
{
	struct net_hdr h = {1, 0, 0, 0, L4, 2, 0};

	return tx_hdr(c, &h, 1);
}

const struct hs_scenario hs_hdr_scenarios[] = {
	{"hdr-gso-size-0", "deq_drop_hdr_gso_size", "TSO frame with gso_size 0",
		s_gso_size_0},
	{"hdr-gso-tiny-mss", "deq_drop_hdr_gso_size",
		"TSO frame of 1000 one-byte segments", s_gso_tiny},
	{"hdr-len-past-end", "deq_drop_hdr_len",
		"hdr_len one byte past the frame", s_hdr_len_past},
	{"hdr-csum-past-end", "deq_drop_hdr_csum_range",
		"checksum field one byte past the frame", s_csum_past},
	{"hdr-csum-wrap", "deq_drop_hdr_csum_range",
		"csum_start + csum_offset wraps 16 bits", s_csum_wrap},
	{"hdr-gso-type-mismatch", "deq_drop_hdr_gso_type",
		"GSO TCPV6 on a TCP/IPv4 frame", s_gso_mismatch},
	{"hdr-gso-udp", "deq_drop_hdr_gso_type", "UDP GSO (never offered)",
		s_gso_udp},
	{"hdr-csum-icmp", "deq_drop_hdr_csum_l4", "NEEDS_CSUM on an ICMP frame",
		s_csum_icmp},
};
const size_t hs_n_hdr = sizeof(hs_hdr_scenarios) / sizeof(hs_hdr_scenarios[0]);
