/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Guest memory, queue layout, guest operations and shared checks for the
 * virtqueue fuzz targets (see fuzz_virtq.h). Single-threaded; trusts only
 * itself: every guest address from the input goes through fz_translate.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/virtio_ring.h>

#include <sanitizer/asan_interface.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fuzz_check.h"
#include "fuzz_virtq.h"

static struct rte_mempool *pool_big, *pool_small;
static uint8_t *arena;          /* FZ_REGIONS slots, guard page before each */
static uint32_t slot_rw[FZ_REGIONS]; /* pages currently read-write */

#define SLOT_STRIDE ((size_t)(FZ_SLOT_PAGES + 1) * FZ_PAGE)

uint8_t
fz_u8(struct fz_in *in)
{
	uint8_t v = 0;

	if (in->n > 0) {
		v = in->p[0];
		in->p++;
		in->n--;
	}
	return v;
}

uint16_t
fz_u16(struct fz_in *in)
{
	return (uint16_t)(fz_u8(in) | fz_u8(in) << 8);
}

uint32_t
fz_u32(struct fz_in *in)
{
	return fz_u16(in) | (uint32_t)fz_u16(in) << 16;
}

uint64_t
fz_u64(struct fz_in *in)
{
	return fz_u32(in) | (uint64_t)fz_u32(in) << 32;
}

void
fz_env_init(void)
{
	static char prefix[64];
	char *argv[] = {"vsw-fuzz", "--no-huge", "-m", "128", "--no-pci",
		"--no-shconf", prefix, "--lcores=0@(0-1)",
		"--log-level=*:emergency", NULL};

	snprintf(prefix, sizeof(prefix), "--file-prefix=vswfuzz%d",
		(int)getpid());
	FZ_CHECK(rte_eal_init((int)RTE_DIM(argv) - 1, argv) >= 0);
	pool_big = rte_pktmbuf_pool_create("fz_big", 4095, 0, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	pool_small = rte_pktmbuf_pool_create("fz_small", 47, 0, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	FZ_CHECK(pool_big != NULL && pool_small != NULL);
	/* slots start and end on PROT_NONE pages; opened per input */
	arena = mmap(NULL, SLOT_STRIDE * FZ_REGIONS + FZ_PAGE, PROT_NONE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	FZ_CHECK(arena != MAP_FAILED);
}

struct rte_mempool *
fz_pool(const struct fz_q *q)
{
	return (q->mode & FZ_M_SMALL_POOL) ? pool_small : pool_big;
}

static uint8_t *
slot_base(unsigned i)
{
	return arena + FZ_PAGE + i * SLOT_STRIDE;
}

/* Makes slot i exactly `pages` read-write (the rest PROT_NONE). */
static void
slot_open(unsigned i, uint32_t pages)
{
	uint8_t *b = slot_base(i);

	if (pages > slot_rw[i])
		FZ_CHECK(mprotect(b + (size_t)slot_rw[i] * FZ_PAGE,
				  (size_t)(pages - slot_rw[i]) * FZ_PAGE,
				  PROT_READ | PROT_WRITE) == 0);
	else if (pages < slot_rw[i])
		FZ_CHECK(mprotect(b + (size_t)pages * FZ_PAGE,
				  (size_t)(slot_rw[i] - pages) * FZ_PAGE,
				  PROT_NONE) == 0);
	slot_rw[i] = pages;
	ASAN_UNPOISON_MEMORY_REGION(b, (size_t)pages * FZ_PAGE);
}

/* Deterministic, position-dependent fill (64-bit stores: cheap). */
static void
fill(uint8_t *p, uint64_t len, uint64_t seed)
{
	uint64_t *w = (uint64_t *)(void *)p;

	for (uint64_t i = 0; i < len / 8; i++)
		w[i] = (seed + i) * 0x9e3779b97f4a7c15ull;
	for (uint64_t i = len & ~7ull; i < len; i++)
		p[i] = (uint8_t)(seed + i);
}

static bool
overlaps(const struct vsw_mem *m, uint64_t gpa, uint64_t size)
{
	for (uint32_t i = 0; i < m->nregions; i++) {
		const struct vsw_mem_region *r = &m->regions[i];

		if (gpa <= r->guest_phys_addr + (r->size - 1) &&
			r->guest_phys_addr <= gpa + (size - 1))
			return true;
	}
	return false;
}

/* Region placement: 0 fixed spread, 1 right after the previous region (a
 * buffer can span both), 2 anywhere (input), 3 at the top of the space. */
static uint64_t
region_gpa(const struct vsw_mem *m, uint8_t how, uint64_t raw, uint64_t size,
	unsigned i)
{
	uint64_t gpa;

	switch (how % 4) {
	case 0:
		return 0x100000ull * (i + 1);
	case 1:
		if (m->nregions == 0)
			return 0x100000ull;
		gpa = m->regions[m->nregions - 1].guest_phys_addr +
		      m->regions[m->nregions - 1].size;
		return gpa;
	case 2:
		return raw;
	default:
		return 0 - size - (raw & 0xff0);
	}
}

static void
setup_memory(struct fz_guest *g, struct fz_in *in)
{
	unsigned want = 1 + fz_u8(in) % FZ_REGIONS;

	memset(&g->mem, 0, sizeof(g->mem));
	for (unsigned i = 0; i < FZ_REGIONS; i++) {
		uint8_t how = 0, pg = 0;
		uint16_t trim = 0;
		uint64_t raw = 0, size, gpa;
		uint32_t pages;

		if (i < want) {
			how = fz_u8(in);
			pg = fz_u8(in);
			trim = fz_u16(in);
			raw = fz_u64(in);
		}
		/* mostly small (the fill costs per byte); big when asked */
		pages = i >= want ? 0 :
			(pg & 0xc0) == 0xc0 ? 1 + pg % FZ_SLOT_PAGES : 1 + pg % 8;
		slot_open(i, pages);
		if (pages == 0)
			continue;
		size = (uint64_t)pages * FZ_PAGE - trim % FZ_PAGE;
		gpa = region_gpa(&g->mem, how, raw, size, i);
		/* a validated table has no wrapping or overlapping regions */
		if (gpa + (size - 1) < gpa || overlaps(&g->mem, gpa, size))
			continue;
		/* the region ends where the trimmed tail (poisoned) starts;
		 * its last page is followed by a PROT_NONE page */
		g->host[g->mem.nregions] = slot_base(i);
		fill(slot_base(i), size, gpa >> 3);
		ASAN_POISON_MEMORY_REGION(slot_base(i) + size,
			(size_t)pages * FZ_PAGE - size);
		g->mem.regions[g->mem.nregions].guest_phys_addr = gpa;
		g->mem.regions[g->mem.nregions].size = size;
		g->mem.regions[g->mem.nregions].host_user_addr =
			(uint64_t)(uintptr_t)slot_base(i);
		g->mem.nregions++;
	}
}

uint8_t *
fz_translate(const struct fz_guest *g, uint64_t gpa, uint64_t len,
	uint64_t *contig)
{
	if (len == 0 || gpa + (len - 1) < gpa)
		return NULL;
	for (uint32_t i = 0; i < g->mem.nregions; i++) {
		const struct vsw_mem_region *r = &g->mem.regions[i];

		if (gpa < r->guest_phys_addr ||
			gpa - r->guest_phys_addr >= r->size)
			continue;
		*contig = r->size - (gpa - r->guest_phys_addr);
		if (*contig > len)
			*contig = len;
		return g->host[i] + (gpa - r->guest_phys_addr);
	}
	return NULL;
}

int
fz_read(const struct fz_guest *g, uint64_t gpa, void *dst, uint64_t len)
{
	uint8_t *out = dst;
	uint64_t c;

	while (len > 0) {
		const uint8_t *p = fz_translate(g, gpa, len, &c);

		if (p == NULL)
			return -1;
		memcpy(out, p, c);
		out += c;
		gpa += c;
		len -= c;
	}
	return 0;
}

void
fz_write(const struct fz_guest *g, uint64_t gpa, const void *src, uint64_t len)
{
	const uint8_t *s = src;
	uint64_t c;

	while (len > 0) {
		uint8_t *p = fz_translate(g, gpa, len, &c);

		if (p == NULL) /* a hole, or the range wraps: byte by byte */
			p = fz_translate(g, gpa, 1, &c);
		if (p != NULL)
			memcpy(p, s, c);
		else
			c = 1;
		gpa += c;
		s += c;
		len -= c;
	}
}

/*
 * A guest address from the input: inside a region at an aligned offset
 * (mostly), anywhere around a region (edges, just past the end), or raw.
 */
static uint64_t
input_gpa(const struct fz_guest *g, struct fz_in *in, uint64_t align)
{
	uint8_t sel = fz_u8(in);
	uint32_t v = fz_u32(in);
	const struct vsw_mem_region *r;

	if (g->mem.nregions == 0 || sel >= 0xf0)
		return (uint64_t)v << 32 | fz_u32(in);
	r = &g->mem.regions[sel % g->mem.nregions];
	if (sel < 0x80)
		return r->guest_phys_addr + (v * align) % r->size;
	return r->guest_phys_addr + v % (r->size + 64);
}

static void
fz_notify(void *ctx)
{
	((struct fz_q *)ctx)->notified++;
}

/* The reference's ring area check: inside one region, aligned. */
static void *
ring_ref(const struct fz_guest *g, uint64_t gpa, uint64_t len, uint64_t align)
{
	uint64_t contig = 0;
	uint8_t *p = fz_translate(g, gpa, len, &contig);

	if (p == NULL || contig != len || (gpa & (align - 1)) ||
		((uintptr_t)p & (align - 1)))
		return NULL;
	return p;
}

/* create's verdict against the reference's: same refusals, same reason. */
static void
check_create(struct fz_guest *g, struct fz_q *q, const struct vsw_virtq *vq,
	int err)
{
	const struct vsw_virtq_config *c = &q->cfg;
	uint64_t ev = (q->mode & FZ_M_EVENT_IDX) ? 2 : 0;
	bool size_ok = c->size != 0 && c->size <= VSW_VIRTQ_SIZE_MAX &&
		(c->size & (c->size - 1)) == 0;

	if (!size_ok) {
		FZ_CHECK(vq == NULL && err == EINVAL);
		return;
	}
	q->desc = ring_ref(g, c->desc_gpa, 16ull * c->size, 16);
	q->avail = ring_ref(g, c->avail_gpa, 4 + 2ull * c->size + ev, 2);
	q->used = ring_ref(g, c->used_gpa, 4 + 8ull * c->size + ev, 4);
	if (q->desc == NULL || q->avail == NULL || q->used == NULL) {
		FZ_CHECK(vq == NULL && err == EFAULT);
		return;
	}
	FZ_CHECK(vq != NULL);
}

struct vsw_virtq *
fz_setup(struct fz_guest *g, struct fz_q *q, struct fz_in *in, uint16_t dir)
{
	struct vsw_virtq_config *c = &q->cfg;
	struct vsw_virtq *vq;
	uint8_t log2;
	uint64_t ev;

	setup_memory(g, in);
	log2 = fz_u8(in);
	memset(q, 0, sizeof(*q));
	q->dir = dir;
	q->mode = fz_u8(in);
	/* sizes up to 4096 mostly; 8192..32768 when asked (bit 4) */
	c->size = 1u << ((log2 & 0x10) ? 13 + log2 % 3 : log2 % 13);
	if (log2 >= 0xf0) /* invalid sizes too */
		c->size = log2 == 0xff ? 0 : (log2 == 0xfe ? 3 : 65536);
	c->features = ((q->mode & FZ_M_MRG) ? 1ull << VSW_VIRTIO_NET_F_MRG_RXBUF : 0) |
		((q->mode & FZ_M_INDIRECT) ? 1ull << VSW_VIRTIO_RING_F_INDIRECT_DESC : 0) |
		((q->mode & FZ_M_EVENT_IDX) ? 1ull << VSW_VIRTIO_RING_F_EVENT_IDX : 0) |
		((q->mode & FZ_M_VERSION_1) ? 1ull << VSW_VIRTIO_F_VERSION_1 : 0);
	c->last_avail_idx = fz_u16(in);
	c->last_used_idx = fz_u16(in);
	c->max_pkt_len = fz_u16(in); /* 0: the default, 65535 + hdr_len */
	c->desc_gpa = input_gpa(g, in, 16);
	c->avail_gpa = input_gpa(g, in, 2);
	c->used_gpa = input_gpa(g, in, 4);
	c->mem = &g->mem;
	c->notify = (q->mode & FZ_M_NOTIFY) ? fz_notify : NULL;
	c->notify_ctx = q;
	c->name = "fuzz";
	c->no_deq_align = (q->mode & FZ_M_NO_DEQ_ALIGN) != 0;
	c->hdr_coalign = (q->mode & FZ_M_HDR_COALIGN) != 0;
	rte_errno = 0;
	vq = vsw_virtq_create(c);
	check_create(g, q, vq, rte_errno);
	q->ready = vq != NULL;
	if (!q->ready)
		return NULL;
	q->hdr_len = (q->mode & (FZ_M_MRG | FZ_M_VERSION_1)) ? 12 : 10;
	q->max_pkt_len = c->max_pkt_len != 0 ? c->max_pkt_len :
		65535 + q->hdr_len;
	/* a fresh ring: descriptors zero, nothing available, nothing used */
	ev = (q->mode & FZ_M_EVENT_IDX) ? 2 : 0;
	memset(q->desc, 0, (size_t)c->size * 16);
	memset(q->avail, 0, 4 + 2 * (size_t)c->size + ev);
	memset(q->used, 0, 4 + 8 * (size_t)c->size + ev);
	q->avail->idx = c->last_avail_idx;
	q->used->idx = c->last_used_idx;
	q->avail_idx = c->last_avail_idx;
	return vq;
}

static void
put_desc(const struct fz_guest *g, uint64_t gpa, uint64_t addr, uint32_t len,
	uint16_t flags, uint16_t next)
{
	struct vring_desc d = {addr, len, flags, next};

	fz_write(g, gpa, &d, sizeof(d));
}

static void
avail_push(const struct fz_guest *g, struct fz_q *q, uint16_t head)
{
	uint16_t idx;

	fz_write(g, q->cfg.avail_gpa + 4 + 2ull * (q->avail_idx % q->cfg.size),
		&head, 2);
	q->avail_idx++;
	idx = q->avail_idx;
	fz_write(g, q->cfg.avail_gpa + 2, &idx, 2);
}

/* A well-formed chain of k buffers, direct or through an indirect table. */
static void
op_chain(const struct fz_guest *g, struct fz_q *q, struct fz_in *in)
{
	uint8_t b = fz_u8(in);
	uint8_t k = 1 + b % 8;
	bool indirect = b & 0x80;
	uint16_t base = fz_u16(in) % q->cfg.size;
	uint64_t table = indirect ? input_gpa(g, in, 16) : 0;

	for (unsigned i = 0; i < k; i++) {
		uint64_t addr = input_gpa(g, in, 1);
		uint32_t len = 1 + fz_u16(in) % 4096;
		uint16_t more = i + 1 < k ? VRING_DESC_F_NEXT : 0;

		if (indirect)
			put_desc(g, table + 16ull * i, addr, len, q->dir | more,
				(uint16_t)(i + 1));
		else
			put_desc(g, q->cfg.desc_gpa +
					16ull * ((base + i) % q->cfg.size),
				addr, len, q->dir | more,
				(uint16_t)((base + i + 1) % q->cfg.size));
	}
	if (indirect)
		put_desc(g, q->cfg.desc_gpa + 16ull * base, table, 16u * k,
			VRING_DESC_F_INDIRECT, 0);
	avail_push(g, q, base);
}

int
fz_op(struct fz_guest *g, struct fz_q *q, struct fz_in *in)
{
	uint16_t v16;
	uint8_t op;

	if (in->n == 0)
		return -1;
	op = fz_u8(in);
	switch (op % 8) {
	case 0: /* raw descriptor */ {
		uint16_t idx = fz_u16(in) % q->cfg.size;
		uint64_t addr = input_gpa(g, in, 1);
		uint32_t len = fz_u32(in);
		uint16_t flags = fz_u16(in);

		put_desc(g, q->cfg.desc_gpa + 16ull * idx, addr, len, flags,
			fz_u16(in));
		return 0;
	}
	case 1: /* raw avail ring entry (no index move) */
		v16 = fz_u16(in);
		fz_write(g, q->cfg.avail_gpa + 4 + 2ull * (v16 % q->cfg.size),
			(uint16_t[]){fz_u16(in)}, 2);
		return 0;
	case 2: /* avail index: move by any amount (may break the ring) */
		q->avail_idx = (uint16_t)(q->avail_idx + fz_u16(in));
		fz_write(g, q->cfg.avail_gpa + 2, &q->avail_idx, 2);
		return 0;
	case 3:
	case 4:
		op_chain(g, q, in);
		return 0;
	case 5: /* raw bytes anywhere (indirect tables, headers, rings) */ {
		uint64_t gpa = input_gpa(g, in, 1);
		uint8_t n = fz_u8(in) % 64;
		uint8_t b[64];

		for (unsigned i = 0; i < n; i++)
			b[i] = fz_u8(in);
		fz_write(g, gpa, b, n);
		return 0;
	}
	case 6: /* avail flags and used_event */
		v16 = fz_u16(in);
		fz_write(g, q->cfg.avail_gpa, &v16, 2);
		v16 = fz_u16(in);
		fz_write(g, q->cfg.avail_gpa + 4 + 2ull * q->cfg.size, &v16, 2);
		return 0;
	default: /* a burst of 1..32 */
		return 1 + (op >> 3);
	}
}

void
fz_snap_take(struct fz_snap *s, const struct vsw_virtq *vq,
	const struct fz_q *q)
{
	vsw_virtq_stats_read(vq, s->st);
	s->last_avail = vsw_virtq_last_avail_idx(vq);
	s->last_used = vsw_virtq_last_used_idx(vq);
	s->broken = vsw_virtq_broken(vq);
	s->notified = q->notified;
}

uint64_t
fz_delta(const struct fz_snap *s, const struct vsw_virtq *vq,
	enum vsw_virtq_stat c)
{
	return vsw_virtq_stat(vq, c) - s->st[c];
}

void
fz_debug(const struct vsw_virtq *vq, const struct fz_q *q, const char *what)
{
	static int on = -1;

	if (on < 0)
		on = getenv("VSW_FUZZ_DEBUG") != NULL;
	if (!on)
		return;
	if (vq == NULL) {
		fprintf(stderr, "%s: size %u, no queue (%s)\n", what,
			q->cfg.size, rte_strerror(rte_errno));
		return;
	}
	fprintf(stderr, "%s: ready %d size %u broken %d avail %u used %u:",
		what, q->ready, q->cfg.size, vsw_virtq_broken(vq),
		vsw_virtq_last_avail_idx(vq), vsw_virtq_last_used_idx(vq));
	for (int c = 0; c < VSW_VIRTQ_STAT__MAX; c++)
		if (vsw_virtq_stat(vq, (enum vsw_virtq_stat)c) != 0)
			fprintf(stderr, " %s=%lu",
				vsw_virtq_stat_name((enum vsw_virtq_stat)c),
				(unsigned long)vsw_virtq_stat(vq,
					(enum vsw_virtq_stat)c));
	fprintf(stderr, "\n");
}

uint16_t
fz_check_common(const struct fz_snap *s, const struct vsw_virtq *vq,
	const struct fz_q *q, uint64_t bad_desc_drops)
{
	uint16_t used_idx = vsw_virtq_last_used_idx(vq);
	uint16_t published = (uint16_t)(used_idx - s->last_used);
	uint64_t errs = 0, brk;

	FZ_CHECK(published <= q->cfg.size);
	/* a burst publishes everything it took (the callers check published
	 * == taken, so no used entry waits for a later burst) */
	if (published > 0) {
		FZ_CHECK(q->used->idx == used_idx);
		for (uint16_t i = 0; i < published; i++)
			FZ_CHECK(q->used->ring[(uint16_t)(s->last_used + i) &
					       (q->cfg.size - 1)].id <
				 q->cfg.size);
	}
	/* every bad chain moves one ERR_*; a ring that broke moves its own
	 * ERR_* and ERR_RING_BROKEN once */
	for (int c = VSW_VIRTQ_STAT_ERR_DESC_INDEX;
		c <= VSW_VIRTQ_STAT_ERR_AVAIL_IDX; c++)
		errs += fz_delta(s, vq, (enum vsw_virtq_stat)c);
	brk = fz_delta(s, vq, VSW_VIRTQ_STAT_ERR_RING_BROKEN);
	FZ_CHECK(brk == (uint64_t)(vsw_virtq_broken(vq) && !s->broken));
	FZ_CHECK(errs == bad_desc_drops + brk);
	FZ_CHECK(vsw_virtq_stat(vq, VSW_VIRTQ_STAT_ERR_RING_BROKEN) <= 1);
	/* one notify decision per burst that published */
	FZ_CHECK(fz_delta(s, vq, VSW_VIRTQ_STAT_NOTIFY_SENT) +
			 fz_delta(s, vq, VSW_VIRTQ_STAT_NOTIFY_SUPPRESSED) ==
		 (published > 0));
	FZ_CHECK(q->notified - s->notified ==
		 fz_delta(s, vq, VSW_VIRTQ_STAT_NOTIFY_SENT));
	return published;
}
