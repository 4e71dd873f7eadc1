/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packed-ring scenarios: a device set up with VIRTIO_F_RING_PACKED whose
 * guest then lies in its TX ring: wrap counters, a slot made available
 * twice, buffer ids out of range or reused while in flight, an indirect
 * table outside guest memory, a chain without an end; and event areas
 * outside guest memory at SET_VRING_ADDR. What the front-end checks
 * itself: a bad chain comes back used (len 0, its id) and the queue keeps
 * working; a lie is not consumed; a broken ring consumes nothing more; a
 * refused ring address closes the connection. The driver checks the
 * counters named in the table.
 */
#include <errno.h>
#include <string.h>

#include "hostile.h"

#define QS 256u
#define TXQ 1u
#define RXQ 0u
#define F_PACKED (1ull << 34)
#define NEXT VRING_DESC_F_NEXT
#define IND VRING_DESC_F_INDIRECT

static uint64_t
scratch_gpa(struct hs_ctx *c, uint32_t off)
{
	return vu_gpa(&c->f, vu_ptr(&c->f, VU_SCRATCH + off));
}

/* A 64-byte frame behind a zero header at scratch offset off. */
static uint64_t
frame_at(struct hs_ctx *c, uint32_t off, unsigned long long seq)
{
	uint8_t *p = vu_ptr(&c->f, VU_SCRATCH + off);

	memset(p, 0, VU_HDR_LEN);
	hs_frame(p + VU_HDR_LEN, 64, seq);
	return scratch_gpa(c, off);
}

/* A failed check: say why, return 1. */
static int
fail(const char *why)
{
	hs_note("%s", why);
	return 1;
}

/* Moves the guest's avail position on by one slot. */
static void
avail_step(struct vu_ring *r)
{
	if (++r->next_avail == r->size) {
		r->next_avail = 0;
		r->avail_wrap = !r->avail_wrap;
	}
}

/* Offers one slot (flags as given, id) at the avail position. */
static void
tx_offer(struct hs_ctx *c, uint16_t id, uint16_t flags, uint64_t addr,
	uint32_t len)
{
	struct vu_ring *r = &c->f.q[TXQ];

	vu_pdesc_set(&c->f, TXQ, r->next_avail, addr, len, id, flags);
	avail_step(r);
}

/* Waits for the next used descriptor; 1 with id/len, 0 on timeout. */
static int
tx_used(struct hs_ctx *c, uint16_t nslots, uint16_t *id, uint32_t *len,
	int ms)
{
	int i;

	for (i = 0; i <= ms; i++) {
		if (vu_pused_pop(&c->f, TXQ, nslots, id, len))
			return 1;
		hs_sleep_ms(1);
	}
	return 0;
}

/* A valid frame goes through: the packed TX queue is polled and healthy. */
static bool
tx_probe(struct hs_ctx *c)
{
	struct vu_ring *r = &c->f.q[TXQ];
	uint16_t id;
	uint32_t len;

	tx_offer(c, 7, vu_pavail(r->avail_wrap),
		frame_at(c, 0x8000, r->next_avail), VU_HDR_LEN + 64);
	return tx_used(c, 1, &id, &len, 3000) && id == 7 && len == 0;
}

static int
dev_up(struct hs_ctx *c)
{
	int rc = vu_open(&c->f, c->path);

	if (rc == 0 && ((rc = vu_negotiate(&c->f, VU_FEATURES_DEFAULT |
					F_PACKED)) ||
			       (rc = vu_mem_table(&c->f)) ||
			       (rc = vu_vring_setup_packed(&c->f, RXQ, QS)) ||
			       (rc = vu_vring_setup_packed(&c->f, TXQ, QS))))
		vu_close(&c->f);
	if (rc != 0) {
		hs_note("packed device set-up failed: %s", strerror(-rc));
		return -1;
	}
	if (!tx_probe(c)) {
		hs_note("a valid frame was never consumed (packed)");
		return -1;
	}
	return 0;
}

#define UP()                        \
	do {                        \
		if (dev_up(c) != 0) \
			return 1;   \
	} while (0)

/* The chain just offered must come back used with want_id, len 0. */
static int
tx_bad(struct hs_ctx *c, uint16_t nslots, uint16_t want_id)
{
	uint16_t id;
	uint32_t len;

	if (!tx_used(c, nslots, &id, &len, 3000)) {
		hs_note("bad chain never returned");
		return 1;
	}
	if (id != want_id || len != 0) {
		hs_note("bad chain returned as id %u len %u", id, len);
		return 1;
	}
	if (!tx_probe(c)) {
		hs_note("queue dead after one bad chain");
		return 1;
	}
	return 0;
}

/* Nothing consumed for 300 ms. */
static bool
tx_quiet(struct hs_ctx *c)
{
	uint16_t id;
	uint32_t len;

	return !tx_used(c, 1, &id, &len, 300);
}

static int
s_wrap_lie(struct hs_ctx *c)
{
	struct vu_ring *r = &c->f.q[TXQ];
	uint16_t at;
	uint64_t b;

	UP();
	at = r->next_avail;
	b = frame_at(c, 0, 1);
	/* looks used (to us too: so watch its length, which the device would
	 * set to 0); then available in the other lap */
	vu_pdesc_set(&c->f, TXQ, at, b, VU_HDR_LEN + 64, 1,
		vu_pavail(r->avail_wrap) | vu_pavail(!r->avail_wrap));
	hs_sleep_ms(300);
	if (__atomic_load_n(&r->pdesc[at].len, __ATOMIC_ACQUIRE) !=
		VU_HDR_LEN + 64)
		return fail("a used-looking slot was consumed");
	vu_pdesc_set(&c->f, TXQ, at, b, VU_HDR_LEN + 64, 1,
		vu_pavail(!r->avail_wrap));
	if (!tx_quiet(c))
		return fail("a slot of the wrong lap was consumed");
	return tx_probe(c) ? 0 : fail("queue dead after the lies");
}

static int
s_avail_twice(struct hs_ctx *c)
{
	struct vu_ring *r = &c->f.q[TXQ];
	uint16_t prev;

	UP();
	/* the slot the probe used, made available again in its old lap */
	prev = (uint16_t)((r->next_avail + r->size - 1) % r->size);
	vu_pdesc_set(&c->f, TXQ, prev, frame_at(c, 0, 2), VU_HDR_LEN + 64, 7,
		vu_pavail(prev == r->size - 1 ? !r->avail_wrap :
						r->avail_wrap));
	if (!tx_quiet(c))
		return fail("a slot made available twice was consumed");
	return tx_probe(c) ? 0 : fail("queue dead");
}

static int
s_id_range(struct hs_ctx *c)
{
	UP();
	tx_offer(c, QS + 44, vu_pavail(c->f.q[TXQ].avail_wrap),
		frame_at(c, 0, 3), VU_HDR_LEN + 64);
	return tx_bad(c, 1, QS + 44);
}

static int
s_id_reuse(struct hs_ctx *c)
{
	struct vu_ring *r = &c->f.q[TXQ];
	uint16_t at, id, second;
	uint32_t len;
	bool w;

	UP();
	at = r->next_avail;
	w = r->avail_wrap;
	/* two buffers with id 9, the second written first: one burst */
	second = (uint16_t)((at + 1) % r->size);
	vu_pdesc_set(&c->f, TXQ, second, frame_at(c, 0x100, 5),
		VU_HDR_LEN + 64, 9, vu_pavail(second == 0 ? !w : w));
	vu_pdesc_set(&c->f, TXQ, at, frame_at(c, 0, 4), VU_HDR_LEN + 64, 9,
		vu_pavail(w));
	avail_step(r);
	avail_step(r);
	if (!tx_used(c, 1, &id, &len, 3000) || id != 9)
		return fail("first buffer 9 not returned");
	return tx_bad(c, 1, 9);
}

static int
s_indirect_outside(struct hs_ctx *c)
{
	UP();
	tx_offer(c, 11, IND | vu_pavail(c->f.q[TXQ].avail_wrap),
		VU_GPA_BASE + VU_MEM_SIZE + 4096, 32);
	return tx_bad(c, 1, 11);
}

static int
s_no_end(struct hs_ctx *c)
{
	struct vu_ring *r = &c->f.q[TXQ];

	UP();
	/* NEXT into a slot never made available */
	tx_offer(c, 12, NEXT | vu_pavail(r->avail_wrap), frame_at(c, 0, 6),
		VU_HDR_LEN + 64);
	if (!tx_quiet(c))
		return fail("a chain without an end was returned");
	tx_offer(c, 13, vu_pavail(r->avail_wrap), frame_at(c, 0x100, 7),
		VU_HDR_LEN + 64);
	return tx_quiet(c) ? 0 : fail("broken ring still consumed");
}

/* Driver event area of the TX ring beyond guest memory. */
static int
s_event_outside(struct hs_ctx *c)
{
	struct vu_msg m;
	int rc = vu_open(&c->f, c->path);

	if (rc == 0 && ((rc = vu_negotiate(&c->f, VU_FEATURES_DEFAULT |
					F_PACKED)) ||
			       (rc = vu_mem_table(&c->f)) ||
			       (rc = vu_send_state(&c->f, VU_SET_VRING_NUM,
					TXQ, QS))))
		return fail(strerror(-rc));
	memset(&m, 0, sizeof(m));
	m.u.addr.index = TXQ;
	m.u.addr.desc = (uint64_t)(uintptr_t)c->f.mem;
	m.u.addr.avail = (uint64_t)(uintptr_t)(c->f.mem + VU_MEM_SIZE - 2);
	m.u.addr.used = (uint64_t)(uintptr_t)(c->f.mem + 16 * QS);
	vu_send(&c->f, VU_SET_VRING_ADDR, &m.u.addr, sizeof(m.u.addr), NULL,
		0);
	if (!vu_peer_closed(&c->f, 3000))
		return fail("event area outside memory accepted");
	return 0;
}

const struct hs_scenario hs_packed_scenarios[] = {
	{"packed-wrap-lie", "deq_packets",
		"packed TX slot that looks used, then available in the other "
		"lap: not consumed", s_wrap_lie},
	{"packed-avail-twice", "deq_packets",
		"packed TX slot made available again after use: not consumed",
		s_avail_twice},
	{"packed-id-range", "err_desc_id,deq_drop_bad_desc",
		"packed TX buffer id beyond the ring", s_id_range},
	{"packed-id-reuse", "err_desc_id,deq_drop_bad_desc",
		"packed TX buffer id reused while in flight", s_id_reuse},
	{"packed-indirect-outside", "err_desc_addr,deq_drop_bad_desc",
		"packed indirect table outside guest memory",
		s_indirect_outside},
	{"packed-no-end", "err_desc_not_avail,err_ring_broken",
		"packed chain running into an unavailable slot", s_no_end},
	{"packed-event-outside", "msg_rejected,disconnects",
		"packed driver event area outside guest memory",
		s_event_outside},
};
const size_t hs_n_packed = sizeof(hs_packed_scenarios) /
	sizeof(hs_packed_scenarios[0]);
