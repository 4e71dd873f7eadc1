/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the virtqueue fuzz targets: an input cursor, guest memory built
 * from the input (up to 4 regions, each at most 256 KiB, page-backed with
 * PROT_NONE guard pages around it and its unused tail ASan-poisoned, placed
 * in guest-physical space where the input says, overlaps removed since the
 * real region table is validated), a queue laid out from the input, guest
 * operations (raw descriptor / avail writes, well-formed direct or indirect
 * chains, avail index moves), and the counter checks both directions share.
 *
 * Input layout (every read past the end yields 0):
 *   u8 nregions, then per region: u8 placement, u8 pages (1..8, or 1..64
 *   with the top two bits set), u16 tail trim,
 *   u64 gpa; u8 log2 ring size, u8 feature/mode bits, u16 last_avail,
 *   u16 last_used, u16 max_pkt_len, three ring addresses; then operations
 *   (fz_op) until the input ends.
 */
#ifndef VSW_FUZZ_VIRTQ_H
#define VSW_FUZZ_VIRTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vsw/virtq.h>

struct rte_mempool;

#define FZ_REGIONS 4u
#define FZ_PAGE 4096u
#define FZ_SLOT_PAGES 64u /* 256 KiB per region, 1 MiB in all */

struct fz_in {
	const uint8_t *p;
	size_t n;
};

uint8_t fz_u8(struct fz_in *in);
uint16_t fz_u16(struct fz_in *in);
uint32_t fz_u32(struct fz_in *in);
uint64_t fz_u64(struct fz_in *in);

struct fz_guest {
	struct vsw_mem mem;
	uint8_t *host[FZ_REGIONS];
};

/* mode bits (byte after log2 size) beyond the feature bits */
#define FZ_M_MRG 0x01
#define FZ_M_INDIRECT 0x02
#define FZ_M_EVENT_IDX 0x04
#define FZ_M_VERSION_1 0x08
#define FZ_M_NO_DEQ_ALIGN 0x10
#define FZ_M_HDR_COALIGN 0x20
#define FZ_M_NOTIFY 0x40
#define FZ_M_SMALL_POOL 0x80

struct vring_desc;
struct vring_avail;
struct vring_used;

/* The guest's view of its queue. */
struct fz_q {
	struct vsw_virtq_config cfg;
	uint16_t avail_idx;  /* guest's next avail slot */
	uint16_t dir;        /* VRING_DESC_F_WRITE for enqueue, else 0 */
	uint8_t mode;
	bool ready;          /* vsw_virtq_create succeeded */
	unsigned notified;   /* notify callback calls */
	/* when ready: the rings through fz_translate, and what the contract
	 * says the queue derives from cfg (the reference's own values) */
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint32_t hdr_len;     /* 12 with MRG_RXBUF or VERSION_1, else 10 */
	uint32_t max_pkt_len; /* cfg.max_pkt_len, or 65535 + hdr_len */
};

/* Once per process: EAL (no hugepages, private prefix), two mbuf pools. */
void fz_env_init(void);
struct rte_mempool *fz_pool(const struct fz_q *q);

/*
 * Guest memory and the queue from the input's header. Returns the queue
 * (q->ready), or NULL when create refused the config, after checking that
 * the reference refuses it too and for the same reason. The caller
 * destroys the queue at the end of the input.
 */
struct vsw_virtq *fz_setup(struct fz_guest *g, struct fz_q *q,
	struct fz_in *in, uint16_t dir);

/* Reference translation (independent of vhost/virtq_mem.c). */
uint8_t *fz_translate(const struct fz_guest *g, uint64_t gpa, uint64_t len,
	uint64_t *contig);
/* 0 when every byte of [gpa, gpa+len) is guest memory, else -1. */
int fz_read(const struct fz_guest *g, uint64_t gpa, void *dst, uint64_t len);
/* Writes the bytes of [gpa, gpa+len) that are guest memory. */
void fz_write(const struct fz_guest *g, uint64_t gpa, const void *src,
	uint64_t len);

/*
 * One guest operation from the input. Returns -1 at the end of the input,
 * else the number of packets of a burst to run now (0: no burst; the
 * operation changed the ring).
 */
int fz_op(struct fz_guest *g, struct fz_q *q, struct fz_in *in);

/* Counter snapshot and the checks shared by both directions. */
struct fz_snap {
	uint64_t st[VSW_VIRTQ_STAT__MAX];
	uint16_t last_avail, last_used;
	bool broken;
	unsigned notified;
};
void fz_snap_take(struct fz_snap *s, const struct vsw_virtq *vq,
	const struct fz_q *q);
/* d(counter) since the snapshot */
uint64_t fz_delta(const struct fz_snap *s, const struct vsw_virtq *vq,
	enum vsw_virtq_stat c);
/* Used ring published consistently, ERR_* partition, notify accounting.
 * Returns how many used entries the burst published. */
uint16_t fz_check_common(const struct fz_snap *s, const struct vsw_virtq *vq,
	const struct fz_q *q, uint64_t bad_desc_drops);

/* With VSW_FUZZ_DEBUG set: one line of queue state and counters (vq may
 * be NULL: create failed). */
void fz_debug(const struct vsw_virtq *vq, const struct fz_q *q,
	const char *what);

#endif /* VSW_FUZZ_VIRTQ_H */
