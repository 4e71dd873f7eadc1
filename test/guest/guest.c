/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The software guest (see guest.h): guest memory with guard pages, split
 * rings, RX/TX posting and used-ring reading, as a virtio-net driver would.
 * Test code: it aborts on its own misuse; it trusts nothing the device
 * writes into the used ring (tg_rx_recv reports protocol errors).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest.h"

#define TG_DIE(...)                                                            \
	do {                                                                   \
		fprintf(stderr, "software guest: " __VA_ARGS__);               \
		fputc('\n', stderr);                                           \
		abort();                                                       \
	} while (0)

static const struct {
	uint64_t gpa, size;
} layout[TG_NREGIONS] = {
	{TG_RING_GPA, TG_RING_SIZE},
	{TG_DATA_GPA, TG_DATA_REGION},
	{TG_DATA_GPA + TG_DATA_REGION, TG_DATA_REGION},
	{TG_DATA_GPA + 2 * TG_DATA_REGION, TG_DATA_REGION},
	{TG_FAR_GPA, TG_FAR_SIZE},
};

int
tg_guest_init(struct tg_guest *g)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint32_t i;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < TG_NREGIONS; i++) {
		size_t len = layout[i].size + 2 * page;
		uint8_t *m = mmap(NULL, len, PROT_NONE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return -1;
		if (mprotect(m + page, layout[i].size,
			    PROT_READ | PROT_WRITE) != 0)
			return -1;
		g->reg[i].map = m;
		g->reg[i].map_len = len;
		g->reg[i].base = m + page;
		memset(g->reg[i].base, TG_FILL, layout[i].size);
		g->mem.regions[i].guest_phys_addr = layout[i].gpa;
		g->mem.regions[i].size = layout[i].size;
		g->mem.regions[i].host_user_addr = (uintptr_t)g->reg[i].base;
	}
	g->mem.nregions = TG_NREGIONS;
	g->ring_bump = TG_RING_GPA;
	g->data_bump = TG_DATA_GPA;
	g->far_bump = TG_FAR_GPA;
	return 0;
}

void
tg_guest_fini(struct tg_guest *g)
{
	uint32_t i;

	for (i = 0; i < TG_NREGIONS; i++)
		if (g->reg[i].map != NULL)
			munmap(g->reg[i].map, g->reg[i].map_len);
	memset(g, 0, sizeof(*g));
}

static uint64_t
bump(uint64_t *at, uint64_t end, uint64_t len, uint64_t align)
{
	uint64_t gpa = (*at + align - 1) & ~(align - 1);

	if (gpa + len > end)
		TG_DIE("out of guest memory (%llu bytes)",
			(unsigned long long)len);
	*at = gpa + len;
	return gpa;
}

uint64_t
tg_alloc_ring(struct tg_guest *g, uint64_t len, uint64_t align)
{
	return bump(&g->ring_bump, TG_RING_GPA + TG_RING_SIZE, len, align);
}

uint64_t
tg_alloc_data(struct tg_guest *g, uint64_t len, uint64_t align)
{
	return bump(&g->data_bump,
		TG_DATA_GPA + TG_DATA_REGIONS * TG_DATA_REGION, len, align);
}

uint64_t
tg_alloc_far(struct tg_guest *g, uint64_t len)
{
	return bump(&g->far_bump, TG_FAR_GPA + TG_FAR_SIZE, len, 1);
}

void
tg_data_reset(struct tg_guest *g)
{
	uint32_t i;

	for (i = 1; i < TG_NREGIONS; i++)
		memset(g->reg[i].base, TG_FILL, layout[i].size);
	g->data_bump = TG_DATA_GPA;
	g->far_bump = TG_FAR_GPA;
}

void
tg_data_near_boundary(struct tg_guest *g, uint64_t before)
{
	uint64_t b = TG_DATA_GPA + TG_DATA_REGION;

	while (b - before < g->data_bump)
		b += TG_DATA_REGION;
	if (b >= TG_DATA_GPA + TG_DATA_REGIONS * TG_DATA_REGION)
		TG_DIE("no region boundary left");
	g->data_bump = b - before;
}

/* Host address of gpa and how many bytes follow it in its region. */
static uint8_t *
host_span(struct tg_guest *g, uint64_t gpa, uint64_t *room)
{
	uint32_t i;

	for (i = 0; i < TG_NREGIONS; i++) {
		if (gpa >= layout[i].gpa &&
			gpa - layout[i].gpa < layout[i].size) {
			*room = layout[i].size - (gpa - layout[i].gpa);
			return g->reg[i].base + (gpa - layout[i].gpa);
		}
	}
	TG_DIE("gpa 0x%llx outside guest memory", (unsigned long long)gpa);
}

void *
tg_host(struct tg_guest *g, uint64_t gpa)
{
	uint64_t room;

	return host_span(g, gpa, &room);
}

void
tg_write(struct tg_guest *g, uint64_t gpa, const void *src, uint64_t len)
{
	const uint8_t *s = src;

	while (len > 0) {
		uint64_t room, k;
		uint8_t *d = host_span(g, gpa, &room);

		k = len < room ? len : room;
		memcpy(d, s, k);
		s += k;
		gpa += k;
		len -= k;
	}
}

void
tg_read(struct tg_guest *g, uint64_t gpa, void *dst, uint64_t len)
{
	uint8_t *d = dst;

	while (len > 0) {
		uint64_t room, k;
		const uint8_t *s = host_span(g, gpa, &room);

		k = len < room ? len : room;
		memcpy(d, s, k);
		d += k;
		gpa += k;
		len -= k;
	}
}

static bool
filled(const uint8_t *p, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (p[i] != TG_FILL)
			return false;
	return true;
}

bool
tg_untouched(struct tg_guest *g)
{
	uint64_t off = g->data_bump - TG_DATA_GPA;
	uint32_t i;

	for (i = 0; i < TG_DATA_REGIONS; i++) {
		uint64_t lo = off > i * TG_DATA_REGION ?
			off - i * TG_DATA_REGION : 0;

		if (lo < TG_DATA_REGION &&
			!filled(g->reg[1 + i].base + lo, TG_DATA_REGION - lo))
			return false;
	}
	off = g->far_bump - TG_FAR_GPA;
	return filled(g->reg[4].base + off, TG_FAR_SIZE - off);
}

int
tg_vq_init(struct tg_vq *q, struct tg_guest *g, uint32_t size,
	uint64_t features)
{
	uint64_t d, a, u;
	uint32_t i;

	memset(q, 0, sizeof(*q));
	q->g = g;
	q->size = size;
	q->features = features;
	q->hdr_len = (features & (1ull << VSW_VIRTIO_NET_F_MRG_RXBUF |
				  1ull << VSW_VIRTIO_F_VERSION_1)) ? 12 : 10;
	d = tg_alloc_ring(g, 16ull * size, 4096);
	a = tg_alloc_ring(g, 6 + 2ull * size, 2);
	u = tg_alloc_ring(g, 6 + 8ull * size, 4096);
	q->desc = tg_host(g, d);
	q->avail = tg_host(g, a);
	q->used = tg_host(g, u);
	memset(q->desc, 0, 16ull * size);
	memset(q->avail, 0, 6 + 2ull * size);
	memset(q->used, 0, 6 + 8ull * size);
	q->used_event = &q->avail->ring[size];
	q->free_desc = calloc(size, sizeof(*q->free_desc));
	q->chain = calloc(size, sizeof(*q->chain));
	if (q->free_desc == NULL || q->chain == NULL)
		return -1;
	for (i = 0; i < size; i++)
		q->free_desc[i] = (uint16_t)(size - 1 - i);
	q->nfree = size;
	q->cfg.desc_gpa = d;
	q->cfg.avail_gpa = a;
	q->cfg.used_gpa = u;
	q->cfg.size = size;
	q->cfg.features = features;
	q->cfg.mem = &g->mem;
	return 0;
}

void
tg_vq_fini(struct tg_vq *q)
{
	free(q->free_desc);
	free(q->chain);
	memset(q, 0, sizeof(*q));
}

/*
 * Builds a chain of n buffers (gpa/len) with the given flags: in the ring's
 * table, or in an indirect table that one ring descriptor points to.
 */
static int
post_chain(struct tg_vq *q, const uint64_t *gpa, const uint32_t *len,
	uint32_t n, uint16_t flags, bool indirect)
{
	uint32_t need = indirect ? 1 : n, i;
	struct tg_chain *c;
	uint16_t head;

	if (n == 0 || n > TG_CHAIN_MAX)
		TG_DIE("chain of %u buffers", n);
	if (q->nfree < need)
		return -1;
	head = q->free_desc[q->nfree - 1];
	c = &q->chain[head];
	memset(c, 0, sizeof(*c));
	for (i = 0; i < need; i++)
		c->desc[i] = q->free_desc[--q->nfree];
	c->ndesc = (uint16_t)need;
	c->nbuf = (uint16_t)n;
	if (indirect) {
		uint64_t t = tg_alloc_data(q->g, 16ull * n, 16);
		struct vring_desc d;

		for (i = 0; i < n; i++) {
			d.addr = gpa[i];
			d.len = len[i];
			d.flags = flags | (i + 1 < n ? VRING_DESC_F_NEXT : 0);
			d.next = (uint16_t)(i + 1 < n ? i + 1 : 0);
			tg_write(q->g, t + 16ull * i, &d, sizeof(d));
		}
		q->desc[head].addr = t;
		q->desc[head].len = 16 * n;
		q->desc[head].flags = VRING_DESC_F_INDIRECT;
		q->desc[head].next = 0;
	} else {
		for (i = 0; i < n; i++) {
			struct vring_desc *d = &q->desc[c->desc[i]];

			d->addr = gpa[i];
			d->len = len[i];
			d->flags = flags | (i + 1 < n ? VRING_DESC_F_NEXT : 0);
			d->next = i + 1 < n ? c->desc[i + 1] : 0;
		}
	}
	for (i = 0; i < n; i++) {
		c->buf_gpa[i] = gpa[i];
		c->buf_len[i] = len[i];
	}
	c->busy = true;
	tg_avail_push_raw(q, head);
	return head;
}

int
tg_tx_post(struct tg_vq *q, const void *frame, uint32_t len,
	const uint32_t *pieces, uint32_t npieces, bool indirect)
{
	uint64_t gpa[TG_CHAIN_MAX];
	uint32_t total = 0, i, off = 0;
	uint8_t hdr[12] = {0};

	for (i = 0; i < npieces; i++)
		total += pieces[i];
	if (npieces > TG_CHAIN_MAX || total != q->hdr_len + len)
		TG_DIE("tx pieces sum %u, want %u", total, q->hdr_len + len);
	for (i = 0; i < npieces; i++) {
		uint32_t k = pieces[i], h = 0;

		gpa[i] = tg_alloc_data(q->g, k, 1);
		if (off < q->hdr_len) {
			h = q->hdr_len - off < k ? q->hdr_len - off : k;
			tg_write(q->g, gpa[i], hdr + off, h);
		}
		if (k > h)
			tg_write(q->g, gpa[i] + h,
				(const uint8_t *)frame + (off + h - q->hdr_len),
				k - h);
		off += k;
	}
	return post_chain(q, gpa, pieces, npieces, 0, indirect);
}

int
tg_rx_post(struct tg_vq *q, const uint32_t *lens, uint32_t nlens,
	bool indirect)
{
	uint64_t gpa[TG_CHAIN_MAX];
	uint32_t i;

	if (nlens > TG_CHAIN_MAX)
		TG_DIE("rx chain of %u", nlens);
	for (i = 0; i < nlens; i++)
		gpa[i] = tg_alloc_data(q->g, lens[i], 1);
	return post_chain(q, gpa, lens, nlens, VRING_DESC_F_WRITE, indirect);
}

void
tg_avail_push_raw(struct tg_vq *q, uint16_t head)
{
	q->avail->ring[q->avail_idx & (q->size - 1)] = head;
	q->avail_idx++;
}

void
tg_kick(struct tg_vq *q)
{
	__atomic_store_n(&q->avail->idx, q->avail_idx, __ATOMIC_RELEASE);
}

int
tg_used_pop(struct tg_vq *q, uint16_t *id, uint32_t *len)
{
	uint16_t idx = __atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE);
	struct vring_used_elem *e;
	struct tg_chain *c;
	uint32_t i;

	if (idx == q->used_seen)
		return 0;
	e = &q->used->ring[q->used_seen & (q->size - 1)];
	q->used_seen++;
	*id = (uint16_t)e->id;
	*len = e->len;
	if (e->id >= q->size || !q->chain[e->id].busy)
		return 1; /* raw or bogus: nothing to free */
	c = &q->chain[e->id];
	for (i = 0; i < c->ndesc; i++)
		q->free_desc[q->nfree++] = c->desc[i];
	c->busy = false;
	return 1;
}

/* Copies up to len bytes of chain c, from byte off, into out. */
static void
chain_read(struct tg_vq *q, const struct tg_chain *c, uint32_t off,
	uint8_t *out, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < c->nbuf && len > 0; i++) {
		uint32_t k;

		if (off >= c->buf_len[i]) {
			off -= c->buf_len[i];
			continue;
		}
		k = c->buf_len[i] - off < len ? c->buf_len[i] - off : len;
		tg_read(q->g, c->buf_gpa[i] + off, out, k);
		out += k;
		len -= k;
		off = 0;
	}
}

static uint32_t
chain_cap(const struct tg_chain *c)
{
	uint32_t i, cap = 0;

	for (i = 0; i < c->nbuf; i++)
		cap += c->buf_len[i];
	return cap;
}

/* Pops one RX entry and appends its bytes (from off) to out. */
static int
rx_take(struct tg_vq *q, uint8_t *hdr, uint32_t off, uint8_t *out,
	uint32_t cap, uint32_t *got)
{
	uint16_t id;
	uint32_t len;
	struct tg_chain c;

	if (tg_used_pop(q, &id, &len) == 0)
		return -2; /* num_buffers promised more entries than are there */
	if (id >= q->size)
		return -2;
	c = q->chain[id]; /* freed by the pop, contents still valid */
	if (len == 0)
		return -4;
	if (len > chain_cap(&c) || len < off)
		return -2;
	if (hdr != NULL)
		chain_read(q, &c, 0, hdr, off);
	if (*got + (len - off) > cap)
		return -3;
	chain_read(q, &c, off, out + *got, len - off);
	*got += len - off;
	return 0;
}

int
tg_rx_recv(struct tg_vq *q, uint8_t *out, uint32_t cap, uint16_t *nbufs)
{
	uint16_t idx = __atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE);
	uint8_t hdr[12] = {0};
	uint32_t got = 0, i;
	uint16_t n = 1;
	int rc;

	if (idx == q->used_seen)
		return -1;
	rc = rx_take(q, hdr, q->hdr_len, out, cap, &got);
	if (rc < 0)
		return rc;
	if (q->hdr_len == 12)
		n = (uint16_t)(hdr[10] | hdr[11] << 8);
	*nbufs = n;
	for (i = 0; i < 10 && !(q->features & VSW_VIRTQ_F_ENQ_OFFLOADS); i++)
		if (hdr[i] != 0)
			return -2; /* no offloads negotiated: all zero */
	if (n == 0 || (n > 1 && !(q->features &
					   (1ull << VSW_VIRTIO_NET_F_MRG_RXBUF))))
		return -2;
	for (i = 1; i < n; i++) {
		rc = rx_take(q, NULL, 0, out, cap, &got);
		if (rc < 0)
			return rc;
	}
	return (int)got;
}
