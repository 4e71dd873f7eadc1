/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the virtio-net header a guest sends (dequeue side,
 * vsw_virtq_net_hdr_to_mbuf) against the packet it came with, and the
 * header written back (vsw_virtq_net_hdr_from_mbuf). Input: bytes 0..11 =
 * the header, byte 12 = negotiated offloads (bit 0 CSUM, 1 HOST_TSO4,
 * 2 HOST_TSO6), byte 13 = segment count (1..4), bytes 14..16 = cut points;
 * the rest is the packet.
 *
 * The mbufs are built by hand around malloc'd buffers of exactly the
 * segment's size, so ASan sees any read past the packet. No EAL.
 *
 * Checks: the verdict equals the one of a reference written here from the
 * rules in vsw/virtq.h (plain byte indexing, no DPDK structs); chained and
 * contiguous copies agree; an accepted header's metadata lies inside the
 * packet (l2 + l3 + l4 <= pkt_len, the checksum field too) and round-trips
 * to a header with the same csum_start/csum_offset/gso fields.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include <vsw/virtq.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PKT_MAX 4096
#define SEGS_MAX 4
#define IN_HDR 17

static void
mbuf_set(struct rte_mbuf *m, uint8_t *buf, uint16_t len)
{
	memset(m, 0, sizeof(*m));
	m->buf_addr = buf;
	m->buf_len = len;
	m->data_len = len;
	m->pkt_len = len;
	m->nb_segs = 1;
	m->refcnt = 1;
}

static unsigned
be16(const uint8_t *p)
{
	return (unsigned)(p[0] << 8 | p[1]);
}

/* The reference: what vsw/virtq.h says the verdict is. */
struct ref {
	unsigned l2, l3, l4len, ipv, proto;
};

static void
ref_parse(const uint8_t *d, size_t len, struct ref *r)
{
	unsigned o = 12, type, tags = 0, l4;

	memset(r, 0, sizeof(*r));
	if (len < 14)
		return;
	type = be16(d + 12);
	while (type == 0x8100 || type == 0x88a8) {
		if (++tags > 2 || len < o + 6)
			return;
		type = be16(d + o + 4);
		o += 4;
	}
	r->l2 = o + 2;
	if (type == 0x0800 && len >= r->l2 + 20 && d[r->l2] >> 4 == 4 &&
		(d[r->l2] & 15) >= 5) {
		r->ipv = 4;
		r->l3 = (d[r->l2] & 15) * 4u;
		r->proto = (be16(d + r->l2 + 6) & 0x3fff) ? 0 : d[r->l2 + 9];
	} else if (type == 0x86dd && len >= r->l2 + 40) {
		r->ipv = 6;
		r->l3 = 40;
		r->proto = d[r->l2 + 6];
	} else {
		return;
	}
	l4 = r->l2 + r->l3;
	if (r->proto == 6 && len >= l4 + 20 && (d[l4 + 12] >> 4) >= 5 &&
		len >= l4 + (d[l4 + 12] >> 4) * 4u)
		r->l4len = (d[l4 + 12] >> 4) * 4u;
	else if (r->proto == 17 && len >= l4 + 8)
		r->l4len = 8;
}

static int
ref_verdict(const struct vsw_virtio_net_hdr *h, const uint8_t *d, size_t len,
	unsigned feat, struct ref *r)
{
	bool csum = (h->flags & 1) && (feat & 1), gso = h->gso_type != 0;
	unsigned l4, segs;

	if (!csum && !gso)
		return 0;
	if (!csum)
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_GSO_TYPE;
	ref_parse(d, len, r);
	l4 = r->l2 + r->l3;
	if ((size_t)h->csum_start + h->csum_offset + 2 > len)
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_CSUM_RANGE;
	if (r->l4len == 0 || h->csum_start != l4 ||
		h->csum_offset != (r->proto == 6 ? 16 : 6))
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_CSUM_L4;
	if (!gso)
		return 0;
	if (!((h->gso_type == 1 && (feat & 2) && r->ipv == 4) ||
		    (h->gso_type == 4 && (feat & 4) && r->ipv == 6)) ||
		r->proto != 6)
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_GSO_TYPE;
	if (h->hdr_len > len)
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_LEN;
	if (len - r->l2 > VSW_VIRTQ_GSO_IP_MAX)
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_GSO_TOTAL;
	if (h->gso_size == 0)
		return VSW_VIRTQ_STAT_DEQ_DROP_HDR_GSO_SIZE;
	segs = (unsigned)((len - l4 - r->l4len + h->gso_size - 1) /
			  h->gso_size);
	return segs > VSW_VIRTQ_GSO_SEGS_MAX
		       ? VSW_VIRTQ_STAT_DEQ_DROP_HDR_GSO_SIZE
		       : 0;
}

/* An accepted header: metadata inside the packet, and it round-trips. */
static void
check_accepted(const struct vsw_virtio_net_hdr *h, const struct rte_mbuf *m,
	const struct ref *r, size_t len)
{
	struct vsw_virtio_net_hdr back;
	const uint64_t all = (1ull << VSW_VIRTIO_NET_F_GUEST_CSUM) |
			     (1ull << VSW_VIRTIO_NET_F_GUEST_TSO4) |
			     (1ull << VSW_VIRTIO_NET_F_GUEST_TSO6);

	if (m->ol_flags == 0)
		return;
	FZ_CHECK(m->l2_len == r->l2 && m->l3_len == r->l3);
	FZ_CHECK((size_t)m->l2_len + m->l3_len + 8 <= len);
	FZ_CHECK(vsw_virtq_net_hdr_from_mbuf(m, &back, all) == 0);
	FZ_CHECK(back.csum_start == h->csum_start);
	FZ_CHECK(back.csum_offset == h->csum_offset);
	FZ_CHECK((size_t)back.csum_start + back.csum_offset + 2 <= len);
	FZ_CHECK(back.gso_type == h->gso_type);
	if (h->gso_type != 0) {
		FZ_CHECK(back.gso_size == h->gso_size);
		FZ_CHECK(m->l4_len == r->l4len && back.hdr_len <= len);
	}
	/* and nothing when the guest negotiated nothing */
	FZ_CHECK(vsw_virtq_net_hdr_from_mbuf(m, &back, 0) == -1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vsw_virtio_net_hdr h;
	struct rte_mbuf contig, seg[SEGS_MAX];
	uint8_t *buf[SEGS_MAX + 1] = {NULL};
	uint32_t cut[SEGS_MAX + 1];
	uint64_t feat = 0;
	unsigned nseg, i, fb;
	struct ref r;
	int want, got, got2;
	size_t len;

	if (size < IN_HDR)
		return 0;
	memcpy(&h, data, sizeof(h));
	fb = data[12];
	if (data[12] & 1)
		feat |= 1ull << VSW_VIRTIO_NET_F_CSUM;
	if (data[12] & 2)
		feat |= 1ull << VSW_VIRTIO_NET_F_HOST_TSO4;
	if (data[12] & 4)
		feat |= 1ull << VSW_VIRTIO_NET_F_HOST_TSO6;
	nseg = 1 + data[13] % SEGS_MAX;
	len = size - IN_HDR < PKT_MAX ? size - IN_HDR : PKT_MAX;
	data += IN_HDR;

	buf[0] = malloc(len ? len : 1);
	memcpy(buf[0], data, len);
	mbuf_set(&contig, buf[0], (uint16_t)len);

	cut[0] = 0;
	cut[nseg] = (uint32_t)len;
	for (i = 1; i < nseg; i++) {
		uint32_t c =
			len ? data[i - 1 < len ? i - 1 : 0] * 17u % (len + 1)
			    : 0;

		cut[i] = c < cut[i - 1] ? cut[i - 1] : c;
	}
	for (i = 0; i < nseg; i++) {
		uint32_t n = cut[i + 1] - cut[i];

		buf[i + 1] = malloc(n ? n : 1);
		memcpy(buf[i + 1], data + cut[i], n);
		mbuf_set(&seg[i], buf[i + 1], (uint16_t)n);
		seg[i].next = i + 1 < nseg ? &seg[i + 1] : NULL;
	}
	seg[0].pkt_len = (uint32_t)len;
	seg[0].nb_segs = (uint16_t)nseg;

	want = ref_verdict(&h, data, len, fb, &r);
	got = vsw_virtq_net_hdr_to_mbuf(&h, &contig, feat);
	got2 = vsw_virtq_net_hdr_to_mbuf(&h, &seg[0], feat);
	FZ_CHECK(got == want);
	FZ_CHECK(got2 == got);
	if (got == 0) {
		FZ_CHECK(contig.ol_flags == seg[0].ol_flags);
		check_accepted(&h, &contig, &r, len);
	}
	for (i = 0; i <= nseg; i++)
		free(buf[i]);
	return 0;
}
