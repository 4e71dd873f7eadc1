/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The software guest's packed-ring driver (see guest_packed.h). Test code:
 * it aborts on its own misuse; it trusts nothing the device writes (a used
 * id not in flight, a length beyond the buffer are reported).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_packed.h"

#define TGP_DIE(...)                                                           \
	do {                                                                   \
		fprintf(stderr, "software guest (packed): " __VA_ARGS__);      \
		fputc('\n', stderr);                                           \
		abort();                                                       \
	} while (0)

uint16_t
tgp_pos(uint16_t idx, bool wrap)
{
	return (uint16_t)(idx | (wrap ? 0x8000 : 0));
}

int
tgp_vq_init(struct tgp_vq *q, struct tg_guest *g, uint32_t size,
	uint64_t features)
{
	uint64_t d, de, ve;
	uint32_t i;

	memset(q, 0, sizeof(*q));
	features |= 1ull << VSW_VIRTIO_F_RING_PACKED;
	q->g = g;
	q->size = size;
	q->features = features;
	q->hdr_len = (features & (1ull << VSW_VIRTIO_NET_F_MRG_RXBUF |
				  1ull << VSW_VIRTIO_F_VERSION_1)) ? 12 : 10;
	d = tg_alloc_ring(g, 16ull * size, 4096);
	de = tg_alloc_ring(g, 4, 4);
	ve = tg_alloc_ring(g, 4, 4);
	q->desc = tg_host(g, d);
	q->driver_event = tg_host(g, de);
	q->device_event = tg_host(g, ve);
	memset(q->desc, 0, 16ull * size); /* 2.8.22: zero-initialised */
	memset(q->driver_event, 0, 4);
	memset(q->device_event, 0, 4);
	q->avail_wrap = q->used_wrap = true;
	q->free_slots = size;
	q->in_order = (features >> VSW_VIRTIO_F_IN_ORDER) & 1;
	q->batch_end = -1;
	q->free_id = calloc(size, sizeof(*q->free_id));
	q->buf = calloc(size, sizeof(*q->buf));
	if (q->free_id == NULL || q->buf == NULL)
		return -1;
	for (i = 0; i < size; i++)
		q->free_id[i] = (uint16_t)(size - 1 - i);
	q->nfree_id = size;
	q->cfg.desc_gpa = d;
	q->cfg.avail_gpa = de;
	q->cfg.used_gpa = ve;
	q->cfg.size = size;
	q->cfg.last_avail_idx = tgp_pos(0, true);
	q->cfg.last_used_idx = tgp_pos(0, true);
	q->cfg.features = features;
	q->cfg.mem = &g->mem;
	return 0;
}

void
tgp_vq_fini(struct tgp_vq *q)
{
	free(q->free_id);
	free(q->buf);
	memset(q, 0, sizeof(*q));
}

void
tgp_desc_raw(struct tgp_vq *q, uint16_t slot, uint64_t addr, uint32_t len,
	uint16_t id, uint16_t flags)
{
	struct vring_packed_desc *d = &q->desc[slot];

	d->addr = addr;
	d->len = len;
	d->id = id;
	__atomic_store_n(&d->flags, flags, __ATOMIC_RELEASE);
}

/* n buffers as one chain (or one indirect descriptor), id in the last. */
static int
post_chain(struct tgp_vq *q, const uint64_t *gpa, const uint32_t *len,
	uint32_t n, uint16_t flags, bool indirect)
{
	uint32_t need = indirect ? 1 : n, i;
	uint16_t id, head = q->next_avail, head_flags = 0;
	struct tgp_buf *b;

	if (n == 0 || n > TG_CHAIN_MAX)
		TGP_DIE("chain of %u buffers", n);
	if (q->free_slots < need || (!q->in_order && q->nfree_id == 0))
		return -1;
	id = q->in_order ? head : q->free_id[--q->nfree_id];
	b = &q->buf[id];
	if (b->busy)
		TGP_DIE("in-order id %u still in flight", id);
	b->busy = true;
	b->nslots = (uint16_t)need;
	b->nbuf = (uint16_t)n;
	for (i = 0; i < n; i++) {
		b->buf_gpa[i] = gpa[i];
		b->buf_len[i] = len[i];
	}
	q->free_slots -= need;
	if (indirect) {
		uint64_t t = tg_alloc_data(q->g, 16ull * n, 16);
		struct vring_packed_desc e;

		for (i = 0; i < n; i++) {
			e.addr = gpa[i];
			e.len = len[i];
			e.id = 0;
			e.flags = flags;
			tg_write(q->g, t + 16ull * i, &e, sizeof(e));
		}
		q->desc[head].addr = t;
		q->desc[head].len = 16 * n;
		q->desc[head].id = id;
		head_flags = VRING_DESC_F_INDIRECT |
			tgp_avail_flags(q->avail_wrap);
	}
	for (i = 0; !indirect && i < n; i++) {
		struct vring_packed_desc *d = &q->desc[q->next_avail];
		uint16_t f = flags | tgp_avail_flags(q->avail_wrap) |
			(i + 1 < n ? VRING_DESC_F_NEXT : 0);

		d->addr = gpa[i];
		d->len = len[i];
		/* 2.8.6: the id is in the last descriptor; the others hold
		 * something else, so a device reading them is caught */
		d->id = i + 1 == n ? id : (uint16_t)~id;
		if (i == 0)
			head_flags = f;
		else
			d->flags = f;
		if (i + 1 < n && ++q->next_avail == q->size) {
			q->next_avail = 0;
			q->avail_wrap = !q->avail_wrap;
		}
	}
	if (++q->next_avail == q->size) {
		q->next_avail = 0;
		q->avail_wrap = !q->avail_wrap;
	}
	__atomic_store_n(&q->desc[head].flags, head_flags, __ATOMIC_RELEASE);
	return id;
}

int
tgp_tx_post(struct tgp_vq *q, const void *frame, uint32_t len,
	const uint32_t *pieces, uint32_t npieces, bool indirect)
{
	uint64_t gpa[TG_CHAIN_MAX];
	uint32_t total = 0, i, off = 0;
	uint8_t hdr[12] = {0};

	for (i = 0; i < npieces; i++)
		total += pieces[i];
	if (npieces > TG_CHAIN_MAX || total != q->hdr_len + len)
		TGP_DIE("tx pieces sum %u, want %u", total, q->hdr_len + len);
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
tgp_rx_post(struct tgp_vq *q, const uint32_t *lens, uint32_t nlens,
	bool indirect)
{
	uint64_t gpa[TG_CHAIN_MAX];
	uint32_t i;

	if (nlens > TG_CHAIN_MAX)
		TGP_DIE("rx chain of %u", nlens);
	for (i = 0; i < nlens; i++)
		gpa[i] = tg_alloc_data(q->g, lens[i], 1);
	return post_chain(q, gpa, lens, nlens, VRING_DESC_F_WRITE, indirect);
}

/* Frees the buffer whose chain starts at the used position. */
static void
used_skip(struct tgp_vq *q, uint16_t id)
{
	struct tgp_buf *b = &q->buf[id];
	uint32_t n;

	b->busy = false;
	if (!q->in_order)
		q->free_id[q->nfree_id++] = id;
	q->free_slots += b->nslots;
	n = q->next_used + b->nslots;
	if (n >= q->size) {
		n -= q->size;
		q->used_wrap = !q->used_wrap;
	}
	q->next_used = (uint16_t)n;
}

/* In order, inside a batch: the next buffer in ring order (len 0). */
static int
batch_pop(struct tgp_vq *q, uint16_t *id, uint32_t *len)
{
	*id = q->next_used;
	*len = 0;
	if (!q->buf[*id].busy)
		return -2;
	if (*id == q->batch_end)
		q->batch_end = -1;
	used_skip(q, *id);
	return 1;
}

int
tgp_used_pop(struct tgp_vq *q, uint16_t *id, uint32_t *len)
{
	struct vring_packed_desc *d = &q->desc[q->next_used];
	uint16_t f;

	if (q->batch_end >= 0)
		return batch_pop(q, id, len);
	f = __atomic_load_n(&d->flags, __ATOMIC_ACQUIRE);
	if (!!(f & TGP_F_USED) != q->used_wrap ||
		!!(f & TGP_F_AVAIL) != q->used_wrap)
		return 0;
	*id = d->id;
	*len = d->len;
	if (d->id >= q->size || !q->buf[d->id].busy)
		return -2;
	if (q->in_order && d->id != q->next_used) {
		/* a batch ending at buffer d->id: its first buffer now */
		if (*len != 0)
			return -2; /* only TX is batched (len 0) */
		q->batch_end = d->id;
		return batch_pop(q, id, len);
	}
	used_skip(q, d->id);
	return 1;
}

static void
buf_read(struct tgp_vq *q, const struct tgp_buf *b, uint32_t off, uint8_t *out,
	uint32_t len)
{
	uint32_t i;

	for (i = 0; i < b->nbuf && len > 0; i++) {
		uint32_t k;

		if (off >= b->buf_len[i]) {
			off -= b->buf_len[i];
			continue;
		}
		k = b->buf_len[i] - off < len ? b->buf_len[i] - off : len;
		tg_read(q->g, b->buf_gpa[i] + off, out, k);
		out += k;
		len -= k;
		off = 0;
	}
}

static uint32_t
buf_cap(const struct tgp_buf *b)
{
	uint32_t i, cap = 0;

	for (i = 0; i < b->nbuf; i++)
		cap += b->buf_len[i];
	return cap;
}

static int
rx_take(struct tgp_vq *q, uint8_t *hdr, uint32_t off, uint8_t *out,
	uint32_t cap, uint32_t *got)
{
	uint16_t id;
	uint32_t len;
	int rc = tgp_used_pop(q, &id, &len);
	const struct tgp_buf *b;

	if (rc <= 0)
		return -2;
	b = &q->buf[id]; /* freed by the pop, contents still valid */
	if (len == 0)
		return -4;
	if (len > buf_cap(b) || len < off)
		return -2;
	if (hdr != NULL)
		buf_read(q, b, 0, hdr, off);
	if (*got + (len - off) > cap)
		return -3;
	buf_read(q, b, off, out + *got, len - off);
	*got += len - off;
	return 0;
}

int
tgp_rx_recv(struct tgp_vq *q, uint8_t *out, uint32_t cap, uint16_t *nbufs)
{
	uint16_t f = __atomic_load_n(&q->desc[q->next_used].flags,
		__ATOMIC_ACQUIRE);
	uint8_t hdr[12] = {0};
	uint32_t got = 0, i;
	uint16_t n = 1;
	int rc;

	if (!!(f & TGP_F_USED) != q->used_wrap ||
		!!(f & TGP_F_AVAIL) != q->used_wrap)
		return -1;
	rc = rx_take(q, hdr, q->hdr_len, out, cap, &got);
	if (rc < 0)
		return rc;
	if (q->hdr_len == 12)
		n = (uint16_t)(hdr[10] | hdr[11] << 8);
	*nbufs = n;
	for (i = 0; i < 10; i++)
		if (hdr[i] != 0)
			return -2;
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
