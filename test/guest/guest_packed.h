/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The software guest's packed-ring driver (virtio 1.1, 2.8), on the same
 * guest memory as the split one (guest.h): lays out a descriptor ring and
 * the two event areas in region 0, posts TX and RX chains (direct, or one
 * indirect descriptor and its table) with buffer ids and wrap counters as
 * a driver does (head flags written last, after a release barrier), reads
 * used descriptors back and skips the slots of their chains. Hostile tests
 * write raw descriptors with tgp_desc_raw. With VIRTIO_F_IN_ORDER it is an
 * in-order driver, as DPDK's: a buffer's id is its head slot, and one used
 * descriptor may stand for a batch (the buffers from the used position up
 * to the one whose id it carries).
 *
 * Single-threaded: guest and device run in turns.
 */
#ifndef VSW_TEST_GUEST_PACKED_H
#define VSW_TEST_GUEST_PACKED_H

#include "guest.h"

#define TGP_F_AVAIL (1u << VRING_PACKED_DESC_F_AVAIL)
#define TGP_F_USED (1u << VRING_PACKED_DESC_F_USED)

/* A buffer the guest posted, by id. */
struct tgp_buf {
	bool busy;
	uint16_t nslots;      /* ring slots its chain took */
	uint16_t nbuf;
	uint64_t buf_gpa[TG_CHAIN_MAX];
	uint32_t buf_len[TG_CHAIN_MAX];
};

struct tgp_vq {
	struct tg_guest *g;
	uint32_t size;
	uint64_t features;
	uint32_t hdr_len;
	struct vring_packed_desc *desc;
	struct vring_packed_desc_event *driver_event; /* guest writes */
	struct vring_packed_desc_event *device_event; /* device writes */
	uint16_t next_avail;
	bool avail_wrap;
	uint16_t next_used;
	bool used_wrap;
	uint32_t free_slots;
	bool in_order;         /* VIRTIO_F_IN_ORDER: id = head slot */
	int32_t batch_end;     /* in_order: a batch's last id, -1 none */
	uint32_t nfree_id;
	uint16_t *free_id;     /* stack of free buffer ids */
	struct tgp_buf *buf;   /* [size], by id */
	struct vsw_virtq_config cfg;
};

/* size need not be a power of two; features gets RING_PACKED added. */
int tgp_vq_init(struct tgp_vq *q, struct tg_guest *g, uint32_t size,
	uint64_t features);
void tgp_vq_fini(struct tgp_vq *q);

/* As tg_tx_post / tg_rx_post; visible at once. id, or -1 (ring full). */
int tgp_tx_post(struct tgp_vq *q, const void *frame, uint32_t len,
	const uint32_t *pieces, uint32_t npieces, bool indirect);
int tgp_rx_post(struct tgp_vq *q, const uint32_t *lens, uint32_t nlens,
	bool indirect);

/* One used descriptor: 1 (id, len set, its slots and id freed), 0 none;
 * -2 when the device wrote an id the guest has not in flight. In order:
 * one buffer of a batch a call (id, len 0 for all but the last). */
int tgp_used_pop(struct tgp_vq *q, uint16_t *id, uint32_t *len);

/* As tg_rx_recv (same return codes). */
int tgp_rx_recv(struct tgp_vq *q, uint8_t *out, uint32_t cap, uint16_t *nbufs);

/* Flags that mark a descriptor available in the lap of wrap. */
static inline uint16_t
tgp_avail_flags(bool wrap)
{
	return wrap ? TGP_F_AVAIL : TGP_F_USED;
}

/* Hostile: writes one descriptor as is (flags last, release). */
void tgp_desc_raw(struct tgp_vq *q, uint16_t slot, uint64_t addr, uint32_t len,
	uint16_t id, uint16_t flags);

/* The device's ring position now (from the used side, after a flush). */
uint16_t tgp_pos(uint16_t idx, bool wrap);

#endif /* VSW_TEST_GUEST_PACKED_H */
