/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The software guest: a virtio-net driver in a test process, for unit
 * tests, benchmarks and fuzzers of the virtqueue data path. It owns "guest
 * memory" (several mmap'd regions, each fenced by PROT_NONE guard pages,
 * some adjacent in guest-physical space so buffers span regions, some with
 * gaps), lays out split rings in it, posts RX buffers, sends TX chains
 * (direct or through an indirect table) and reads used entries back. It can
 * also write any descriptor at all, for hostile-guest tests.
 *
 * Single-threaded: the guest and the device run in turns in one thread.
 */
#ifndef VSW_TEST_GUEST_H
#define VSW_TEST_GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/virtio_ring.h>

#include <vsw/virtq.h>

/* Guest-physical layout (fixed, so tests can aim at gaps and edges). */
#define TG_RING_GPA 0x00100000ull   /* region 0: rings, indirect tables */
#define TG_RING_SIZE 0x00100000ull
#define TG_DATA_GPA 0x10000000ull   /* regions 1..3: adjacent, data */
#define TG_DATA_REGION 0x00100000ull
#define TG_DATA_REGIONS 3u
#define TG_FAR_GPA 0x40000000ull    /* region 4: after a gap, data */
#define TG_FAR_SIZE 0x00040000ull
#define TG_NREGIONS (2u + TG_DATA_REGIONS)
#define TG_FILL 0xa5                /* what untouched guest memory holds */

struct tg_guest {
	struct vsw_mem mem;
	struct {
		uint8_t *map;   /* mapping incl. guard pages */
		size_t map_len;
		uint8_t *base;  /* region start (host) */
	} reg[TG_NREGIONS];
	uint64_t ring_bump; /* next free gpa in region 0 */
	uint64_t data_bump; /* next free gpa in regions 1..3 */
	uint64_t far_bump;  /* next free gpa in region 4 */
};

int tg_guest_init(struct tg_guest *g);
void tg_guest_fini(struct tg_guest *g);

/* Guest memory. Allocation is a bump; tg_data_reset frees all data. */
uint64_t tg_alloc_ring(struct tg_guest *g, uint64_t len, uint64_t align);
uint64_t tg_alloc_data(struct tg_guest *g, uint64_t len, uint64_t align);
uint64_t tg_alloc_far(struct tg_guest *g, uint64_t len);
void tg_data_reset(struct tg_guest *g);
/* Moves the data bump to `before` bytes short of a region boundary. */
void tg_data_near_boundary(struct tg_guest *g, uint64_t before);
void tg_write(struct tg_guest *g, uint64_t gpa, const void *src, uint64_t len);
void tg_read(struct tg_guest *g, uint64_t gpa, void *dst, uint64_t len);
void *tg_host(struct tg_guest *g, uint64_t gpa);
/* true when no byte of guest data memory beyond the bumps changed. */
bool tg_untouched(struct tg_guest *g);

/* A chain the guest posted, for freeing and reading it back. */
struct tg_chain {
	bool busy;
	uint16_t ndesc;
	uint16_t desc[64];    /* ring descriptors used (head first) */
	uint16_t nbuf;
	uint64_t buf_gpa[64]; /* buffers in chain order */
	uint32_t buf_len[64];
};
#define TG_CHAIN_MAX 64u

struct tg_vq {
	struct tg_guest *g;
	uint32_t size;
	uint64_t features;
	uint32_t hdr_len;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t *used_event;  /* avail->ring[size] */
	uint16_t avail_idx;    /* guest's next avail slot (published on tg_kick) */
	uint16_t used_seen;    /* next used entry to read */
	uint32_t nfree;
	uint16_t *free_desc;   /* stack of free descriptor indices */
	struct tg_chain *chain; /* [size], by head */
	struct vsw_virtq_config cfg;
};

/* Lays out a queue of `size` in region 0; cfg is ready for create. */
int tg_vq_init(struct tg_vq *q, struct tg_guest *g, uint32_t size,
	uint64_t features);
void tg_vq_fini(struct tg_vq *q);

/*
 * TX: the header (hdr_len zero bytes) followed by frame[0..len) forms one
 * byte stream cut into npieces descriptors of the given lengths (their sum
 * must be hdr_len + len), direct or through an indirect table. Posts it to
 * the avail ring (visible after tg_kick). Returns the head, -1 when out of
 * descriptors.
 */
int tg_tx_post(struct tg_vq *q, const void *frame, uint32_t len,
	const uint32_t *pieces, uint32_t npieces, bool indirect);

/* RX: posts one write-only chain of buffers of the given lengths. */
int tg_rx_post(struct tg_vq *q, const uint32_t *lens, uint32_t nlens,
	bool indirect);

/* Publishes avail->idx (release), like a driver before it kicks. */
void tg_kick(struct tg_vq *q);

/* Pops one used entry: 1 (id, len set, the chain freed), 0 when none. */
int tg_used_pop(struct tg_vq *q, uint16_t *id, uint32_t *len);

/*
 * RX: receives one packet (1 or num_buffers used entries) into out.
 * Returns the frame length; -1 when no used entry; -2 on a protocol error
 * (used len below the header or beyond what the chain holds, num_buffers
 * 0 or more than the used entries there, unknown id); -3 when out is
 * short; -4 when the entry had len 0 (a buffer the device dropped: one
 * entry consumed). *nbufs gets num_buffers.
 */
int tg_rx_recv(struct tg_vq *q, uint8_t *out, uint32_t cap, uint16_t *nbufs);

/* Hostile: posts a head without any bookkeeping (the test wrote descs). */
void tg_avail_push_raw(struct tg_vq *q, uint16_t head);

#endif /* VSW_TEST_GUEST_H */
