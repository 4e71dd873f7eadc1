/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Descriptor-level and behaviour scenarios: a correctly set-up device
 * whose guest then writes hostile descriptors, indirect tables, avail
 * indices and RX buffers. What the front-end can check itself: a bad TX
 * chain comes back used with length 0 and the queue keeps working; a bad
 * RX buffer comes back with length 0; a ring made inconsistent stops.
 * The driver checks the counters named in the table.
 */
#include <errno.h>
#include <string.h>

#include "hostile.h"

#define QS 256u
#define TXQ 1u
#define RXQ 0u

static struct vring_desc *
desc(struct hs_ctx *c, uint32_t q, uint32_t i)
{
	return &c->f.q[q].vr.desc[i];
}

static void
desc_set(struct hs_ctx *c, uint32_t q, uint32_t i, uint64_t addr, uint32_t len,
	uint16_t flags, uint16_t next)
{
	struct vring_desc *d = desc(c, q, i);

	d->addr = addr;
	d->len = len;
	d->flags = flags;
	d->next = next;
}

static uint64_t
scratch_gpa(struct hs_ctx *c, uint32_t off)
{
	return vu_gpa(&c->f, vu_ptr(&c->f, VU_SCRATCH + off));
}

/* A valid frame goes through: the TX queue is polled and healthy. */
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

static int
dev_up(struct hs_ctx *c)
{
	int rc = vu_start(&c->f, c->path, VU_FEATURES_DEFAULT, QS);

	if (rc != 0) {
		hs_note("device set-up failed: %s", strerror(-rc));
		return -1;
	}
	if (!tx_probe(c)) {
		hs_note("a valid frame was never consumed");
		return -1;
	}
	return 0;
}

/* Offer head on TX: it must come back used, len 0; the queue must live. */
static int
tx_bad(struct hs_ctx *c, uint16_t head)
{
	struct vu_ring *r = &c->f.q[TXQ];
	uint16_t want = r->avail_idx + 1;
	const struct vring_used_elem *e;

	vu_avail_push(&c->f, TXQ, head);
	if (!vu_wait_used(&c->f, TXQ, want, 3000)) {
		hs_note("bad chain %u never returned", head);
		return 1;
	}
	e = &r->vr.used->ring[(uint16_t)(want - 1) % r->size];
	if (e->id != head || e->len != 0) {
		hs_note("bad chain returned as id %u len %u", e->id, e->len);
		return 1;
	}
	if (!tx_probe(c)) {
		hs_note("queue dead after one bad chain");
		return 1;
	}
	return 0;
}

/* Offer head; the ring is inconsistent: nothing may be consumed any more. */
static int
tx_breaks(struct hs_ctx *c)
{
	uint16_t used = vu_used_idx(&c->f, TXQ);

	hs_sleep_ms(300);
	if (vu_used_idx(&c->f, TXQ) != used) {
		hs_note("broken ring still consumed");
		return 1;
	}
	return 0;
}

#define UP()                        \
	do {                        \
		if (dev_up(c) != 0) \
			return 1;   \
	} while (0)

static int
s_loop(struct hs_ctx *c)
{
	UP();
	desc_set(c, TXQ, 100, scratch_gpa(c, 0), 64, VRING_DESC_F_NEXT, 101);
	desc_set(c, TXQ, 101, scratch_gpa(c, 64), 64, VRING_DESC_F_NEXT, 100);
	return tx_bad(c, 100);
}

static int
s_self_loop(struct hs_ctx *c)
{
	UP();
	desc_set(c, TXQ, 100, scratch_gpa(c, 0), 64, VRING_DESC_F_NEXT, 100);
	return tx_bad(c, 100);
}

static int
s_next_oob(struct hs_ctx *c)
{
	UP();
	desc_set(c, TXQ, 100, scratch_gpa(c, 0), 64, VRING_DESC_F_NEXT, QS + 5);
	return tx_bad(c, 100);
}

static int
s_head_oob(struct hs_ctx *c)
{
	UP();
	vu_avail_push(&c->f, TXQ, QS + 7);
	return tx_breaks(c);
}

static int
s_avail_jump(struct hs_ctx *c)
{
	struct vu_ring *r = &c->f.q[TXQ];

	UP();
	r->avail_idx += QS + 10;
	__atomic_store_n(&r->vr.avail->idx, r->avail_idx, __ATOMIC_RELEASE);
	return tx_breaks(c);
}

static int
s_addr_outside(struct hs_ctx *c)
{
	UP();
	desc_set(c, TXQ, 100, 0x7f0000000000ull, 64, 0, 0);
	return tx_bad(c, 100);
}

static int
s_addr_wrap(struct hs_ctx *c)
{
	UP();
	desc_set(c, TXQ, 100, UINT64_MAX - 0xfff, 0x2000, 0, 0);
	return tx_bad(c, 100);
}

static int
s_addr_past_end(struct hs_ctx *c)
{
	UP();
	desc_set(c, TXQ, 100, VU_GPA_BASE + VU_MEM_SIZE - 64, 1024, 0, 0);
	return tx_bad(c, 100);
}

static int
s_addr_below(struct hs_ctx *c)
{
	UP();
	desc_set(c, TXQ, 100, VU_GPA_BASE - 2048, 1024, 0, 0);
	return tx_bad(c, 100);
}

static int
s_zero_len(struct hs_ctx *c)
{
	UP();
	desc_set(c, TXQ, 100, scratch_gpa(c, 0), VU_HDR_LEN, VRING_DESC_F_NEXT,
		101);
	desc_set(c, TXQ, 101, scratch_gpa(c, 64), 0, 0, 0);
	return tx_bad(c, 100);
}

static int
s_write_only_tx(struct hs_ctx *c)
{
	UP();
	desc_set(c, TXQ, 100, scratch_gpa(c, 0), 128, VRING_DESC_F_WRITE, 0);
	return tx_bad(c, 100);
}

/* An indirect table at scratch offset 0x10000 with n entries. */
static struct vring_desc *
itable(struct hs_ctx *c)
{
	return vu_ptr(&c->f, VU_SCRATCH + 0x10000);
}

static void
ind_head(struct hs_ctx *c, uint32_t len, uint16_t extra_flags)
{
	desc_set(c, TXQ, 100, scratch_gpa(c, 0x10000), len,
		VRING_DESC_F_INDIRECT | extra_flags, 0);
}

static int
s_ind_nested(struct hs_ctx *c)
{
	struct vring_desc *t;

	UP();
	t = itable(c);
	t[0] = (struct vring_desc){
		scratch_gpa(c, 0x10000), 32, VRING_DESC_F_INDIRECT, 0};
	t[1] = (struct vring_desc){scratch_gpa(c, 0), 64, 0, 0};
	ind_head(c, 32, 0);
	return tx_bad(c, 100);
}

static int
s_ind_too_large(struct hs_ctx *c)
{
	struct vring_desc *t;
	uint32_t i;

	UP();
	t = itable(c);
	for (i = 0; i <= QS; i++)
		t[i] = (struct vring_desc){scratch_gpa(c, 0), 64,
			VRING_DESC_F_NEXT, (uint16_t)(i + 1)};
	t[QS].flags = 0;
	ind_head(c, (QS + 1) * 16, 0);
	return tx_bad(c, 100);
}

static int
s_ind_not_multiple(struct hs_ctx *c)
{
	struct vring_desc *t;

	UP();
	t = itable(c);
	t[0] = (struct vring_desc){scratch_gpa(c, 0), 64, VRING_DESC_F_NEXT, 1};
	t[1] = (struct vring_desc){scratch_gpa(c, 64), 64, 0, 0};
	ind_head(c, 40, 0);
	return tx_bad(c, 100);
}

static int
s_ind_zero(struct hs_ctx *c)
{
	UP();
	ind_head(c, 0, 0);
	return tx_bad(c, 100);
}

static int
s_ind_next(struct hs_ctx *c)
{
	struct vring_desc *t;

	UP();
	t = itable(c);
	t[0] = (struct vring_desc){scratch_gpa(c, 0), 64, 0, 0};
	ind_head(c, 16, VRING_DESC_F_NEXT);
	desc(c, TXQ, 100)->next = 101;
	desc_set(c, TXQ, 101, scratch_gpa(c, 64), 64, 0, 0);
	return tx_bad(c, 100);
}

static int
s_ind_outside(struct hs_ctx *c)
{
	UP();
	desc_set(c, TXQ, 100, VU_GPA_BASE + VU_MEM_SIZE + 4096, 64,
		VRING_DESC_F_INDIRECT, 0);
	return tx_bad(c, 100);
}

/* Table starts in guest memory, its second entry lies past the end. */
static int
s_ind_straddle(struct hs_ctx *c)
{
	struct vring_desc *t;

	UP();
	t = vu_ptr(&c->f, VU_MEM_SIZE - 16);
	t[0] = (struct vring_desc){scratch_gpa(c, 0), 64, VRING_DESC_F_NEXT, 1};
	desc_set(c, TXQ, 100, VU_GPA_BASE + VU_MEM_SIZE - 16, 32,
		VRING_DESC_F_INDIRECT, 0);
	return tx_bad(c, 100);
}

static int
s_ind_loop(struct hs_ctx *c)
{
	struct vring_desc *t;
	uint16_t i;

	UP();
	t = itable(c);
	for (i = 0; i < 4; i++)
		t[i] = (struct vring_desc){scratch_gpa(c, 0), 64,
			VRING_DESC_F_NEXT, (uint16_t)((i + 1) % 4)};
	ind_head(c, 4 * 16, 0);
	return tx_bad(c, 100);
}

static int
s_ind_index_oob(struct hs_ctx *c)
{
	struct vring_desc *t;

	UP();
	t = itable(c);
	t[0] = (struct vring_desc){scratch_gpa(c, 0), 64, VRING_DESC_F_NEXT, 9};
	t[1] = (struct vring_desc){scratch_gpa(c, 64), 64, 0, 0};
	ind_head(c, 2 * 16, 0);
	return tx_bad(c, 100);
}

static int
s_short_hdr(struct hs_ctx *c)
{
	UP();
	desc_set(c, TXQ, 100, scratch_gpa(c, 0), VU_HDR_LEN - 4, 0, 0);
	return tx_bad(c, 100);
}

static int
s_hdr_only(struct hs_ctx *c)
{
	UP();
	desc_set(c, TXQ, 100, scratch_gpa(c, 0), VU_HDR_LEN, 0, 0);
	return tx_bad(c, 100);
}

/* Header spread one byte per descriptor, then the frame: legal, taken. */
static int
s_hdr_split(struct hs_ctx *c)
{
	uint16_t i, want;
	unsigned char *p;

	UP();
	p = vu_ptr(&c->f, VU_SCRATCH);
	memset(p, 0, VU_HDR_LEN);
	hs_frame(p + VU_HDR_LEN, 64, 7);
	for (i = 0; i < VU_HDR_LEN; i++)
		desc_set(c, TXQ, 100 + i, scratch_gpa(c, i), 1,
			VRING_DESC_F_NEXT, 101 + i);
	desc_set(
		c, TXQ, 100 + VU_HDR_LEN, scratch_gpa(c, VU_HDR_LEN), 64, 0, 0);
	want = c->f.q[TXQ].avail_idx + 1;
	vu_avail_push(&c->f, TXQ, 100);
	if (!vu_wait_used(&c->f, TXQ, want, 3000)) {
		hs_note("split-header chain never consumed");
		return 1;
	}
	return tx_probe(c) ? 0 : 1;
}

/* 34 x 2 KiB = 68 KiB chain: more than a frame may be. */
static int
s_too_large(struct hs_ctx *c)
{
	uint16_t i;

	UP();
	for (i = 0; i < 34; i++)
		desc_set(c, TXQ, 100 + i, scratch_gpa(c, i * 2048u), 2048,
			i < 33 ? VRING_DESC_F_NEXT : 0, 101 + i);
	return tx_bad(c, 100);
}

/* --- RX side: the mirror rule sends the peer's traffic here too --- */

/* Offer RX buffer slot (already written); wait for it to come back. */
static int
rx_bad(struct hs_ctx *c, uint16_t slot)
{
	struct vu_ring *r = &c->f.q[RXQ];
	uint16_t want = r->avail_idx + 1;
	const struct vring_used_elem *e;

	vu_avail_push(&c->f, RXQ, slot);
	if (!vu_wait_used(&c->f, RXQ, want, 5000)) {
		hs_note("bad RX buffer never returned (no traffic?)");
		return 1;
	}
	e = &r->vr.used->ring[(uint16_t)(want - 1) % r->size];
	if (e->id != slot || e->len != 0) {
		hs_note("bad RX buffer returned as id %u len %u", e->id,
			e->len);
		return 1;
	}
	/* good buffers from here on: frames must arrive again */
	r->used_seen = vu_used_idx(&c->f, RXQ);
	vu_rx_refill(&c->f);
	for (int i = 0; i < 300; i++) {
		hs_sleep_ms(10);
		vu_rx_poll(&c->f, NULL, NULL);
		if (c->f.rx_frames > 0)
			return 0;
	}
	hs_note("RX queue dead after a bad buffer");
	return 1;
}

static int
s_rx_read_only(struct hs_ctx *c)
{
	UP();
	desc_set(c, RXQ, 0, scratch_gpa(c, 0), 2048, 0, 0);
	return rx_bad(c, 0);
}

static int
s_rx_short(struct hs_ctx *c)
{
	UP();
	desc_set(c, RXQ, 0, scratch_gpa(c, 0), VU_HDR_LEN - 4,
		VRING_DESC_F_WRITE, 0);
	return rx_bad(c, 0);
}

static int
s_rx_outside(struct hs_ctx *c)
{
	UP();
	desc_set(c, RXQ, 0, 0x7f0000000000ull, 2048, VRING_DESC_F_WRITE, 0);
	return rx_bad(c, 0);
}

/* Behaviour: 32 buffers, then the guest never refills. */
static int
s_rx_no_refill(struct hs_ctx *c)
{
	uint16_t i;

	UP();
	for (i = 0; i < 32; i++) {
		desc_set(c, RXQ, i, vu_gpa(&c->f, vu_buf(&c->f, RXQ, i)),
			VU_BUF_LEN, VRING_DESC_F_WRITE, 0);
		vu_avail_push(&c->f, RXQ, i);
	}
	if (!vu_wait_used(&c->f, RXQ, 32, 5000)) {
		hs_note("the 32 buffers were never filled");
		return 1;
	}
	hs_sleep_ms(500);
	return 0;
}

/* Behaviour: full RX ring and 256 TX frames in flight, then gone. */
static int
s_vanish(struct hs_ctx *c)
{
	unsigned char frame[64];
	int i;

	UP();
	vu_rx_refill(&c->f);
	hs_frame(frame, sizeof(frame), 1);
	for (i = 0; i < (int)QS; i++)
		if (vu_tx(&c->f, frame, sizeof(frame)) != 0)
			break;
	vu_close(&c->f); /* mid-burst: no GET_VRING_BASE, no goodbye */
	hs_sleep_ms(300);
	return 0;
}

const struct hs_scenario hs_desc_scenarios[] = {
	{"tx-desc-loop", "err_desc_loop,deq_drop_bad_desc",
		"TX chain 100 -> 101 -> 100", s_loop},
	{"tx-desc-self-loop", "err_desc_loop,deq_drop_bad_desc",
		"TX descriptor chained to itself", s_self_loop},
	{"tx-desc-next-oob", "err_desc_index,deq_drop_bad_desc",
		"next index >= ring size", s_next_oob},
	{"tx-avail-head-oob", "err_desc_index,err_ring_broken",
		"avail ring entry >= ring size", s_head_oob},
	{"tx-avail-idx-jump", "err_avail_idx,err_ring_broken",
		"avail idx moved by more than the ring size", s_avail_jump},
	{"tx-addr-outside", "err_desc_addr,deq_drop_bad_desc",
		"address in no memory region", s_addr_outside},
	{"tx-addr-wrap", "err_desc_addr,deq_drop_bad_desc",
		"address + length wraps 2^64", s_addr_wrap},
	{"tx-addr-past-end", "err_desc_addr,deq_drop_bad_desc",
		"buffer starts in the region, ends past it", s_addr_past_end},
	{"tx-addr-below", "err_desc_addr,deq_drop_bad_desc",
		"buffer below the first region", s_addr_below},
	{"tx-zero-len", "err_desc_zero_len,deq_drop_bad_desc",
		"zero-length descriptor in a chain", s_zero_len},
	{"tx-write-only", "err_desc_wrong_dir,deq_drop_bad_desc",
		"device-writable descriptor on TX", s_write_only_tx},
	{"tx-indirect-nested", "err_indirect_nested,deq_drop_bad_desc",
		"indirect table entry is itself indirect", s_ind_nested},
	{"tx-indirect-too-large", "err_indirect_len,deq_drop_bad_desc",
		"indirect table of ring size + 1 entries", s_ind_too_large},
	{"tx-indirect-not-multiple", "err_indirect_len,deq_drop_bad_desc",
		"indirect table length 40 (not n * 16)", s_ind_not_multiple},
	{"tx-indirect-zero", "err_indirect_len,deq_drop_bad_desc",
		"indirect table length 0", s_ind_zero},
	{"tx-indirect-next", "err_indirect_next,deq_drop_bad_desc",
		"INDIRECT together with NEXT", s_ind_next},
	{"tx-indirect-outside", "err_desc_addr,deq_drop_bad_desc",
		"indirect table past the end of guest memory", s_ind_outside},
	{"tx-indirect-straddle", "err_desc_addr,deq_drop_bad_desc",
		"indirect table runs off the end of guest memory",
		s_ind_straddle},
	{"tx-indirect-loop", "err_desc_loop,deq_drop_bad_desc",
		"loop inside an indirect table", s_ind_loop},
	{"tx-indirect-index-oob", "err_desc_index,deq_drop_bad_desc",
		"indirect next index >= table size", s_ind_index_oob},
	{"tx-short-header", "deq_drop_short_hdr",
		"chain shorter than the virtio-net header", s_short_hdr},
	{"tx-header-only", "deq_drop_short_hdr",
		"chain holds the header and no frame", s_hdr_only},
	{"tx-header-split", "deq_packets",
		"header over 12 one-byte descriptors (legal: taken)",
		s_hdr_split},
	{"tx-too-large", "deq_drop_too_large",
		"68 KiB chain (> 65535 + header)", s_too_large},
	{"rx-read-only", "err_desc_wrong_dir,enq_drop_bad_desc",
		"RX buffer not device-writable", s_rx_read_only},
	{"rx-short-buffer", "enq_drop_short_hdr",
		"RX buffer shorter than the header", s_rx_short},
	{"rx-addr-outside", "err_desc_addr,enq_drop_bad_desc",
		"RX buffer in no memory region", s_rx_outside},
	{"rx-no-refill", "enq_drop_ring_full",
		"guest stops refilling RX buffers", s_rx_no_refill},
	{"vanish-mid-burst", "enq_drop_not_ready",
		"guest closes the socket with 256 TX frames in flight",
		s_vanish},
};
const size_t hs_n_desc =
	sizeof(hs_desc_scenarios) / sizeof(hs_desc_scenarios[0]);
