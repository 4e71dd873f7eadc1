/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: flow-key extraction (vsw_flow_extract and the burst
 * variant) on arbitrary packet bytes. Input: bytes 0..1 = in_port, byte 2 =
 * segment count (1..4) for the chained copy, bytes 3..8 = cut points,
 * byte 9 = trailing garbage after pkt_len in the contiguous copy; the rest
 * is the packet.
 *
 * The mbufs are built by hand around malloc'd buffers of exactly the
 * segment's size, so ASan sees any read past a segment's data. No EAL:
 * extraction needs none.
 *
 * Checks: the key of the chained packet (cut at fuzzer-chosen offsets, empty
 * segments included) equals the key of the contiguous one; bytes after
 * pkt_len do not change it; the burst call agrees; pad is zero; in_port is
 * the one given; a field group is zero when its header cannot be there.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include <vsw/flow.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PKT_MAX 4096
#define SEGS_MAX 4

static void
mbuf_set(struct rte_mbuf *m, uint8_t *buf, uint16_t len)
{
	memset(m, 0, sizeof(*m));
	m->buf_addr = buf;
	m->buf_len = len;
	m->data_off = 0;
	m->data_len = len;
	m->pkt_len = len;
	m->nb_segs = 1;
	m->refcnt = 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rte_mbuf contig, trail, seg[SEGS_MAX];
	struct rte_mbuf *burst[3];
	struct vsw_flow_key k1, k2, k3, kb[3];
	uint8_t *buf[SEGS_MAX + 2] = {NULL};
	uint32_t cut[SEGS_MAX + 1];
	uint16_t in_port;
	unsigned nseg, extra;
	size_t len;

	if (size < 10)
		return 0;
	in_port = (uint16_t)(data[0] | data[1] << 8);
	nseg = 1 + data[2] % SEGS_MAX;
	extra = data[9] % 64;
	len = size - 10 < PKT_MAX ? size - 10 : PKT_MAX;

	/* contiguous, exact-size buffer (malloc(0) may return NULL: use 1) */
	buf[0] = malloc(len ? len : 1);
	memcpy(buf[0], data + 10, len);
	mbuf_set(&contig, buf[0], (uint16_t)len);

	/* contiguous with garbage after the packet in the same segment */
	buf[1] = malloc(len + extra + 1);
	memcpy(buf[1], data + 10, len);
	memset(buf[1] + len, 0xff, extra + 1);
	mbuf_set(&trail, buf[1], (uint16_t)(len + extra + 1));
	trail.pkt_len = (uint32_t)len;

	/* chained: nseg pieces at sorted cut points (empty pieces allowed) */
	cut[0] = 0;
	cut[nseg] = (uint32_t)len;
	for (unsigned i = 1; i < nseg; i++) {
		uint32_t c = len ? (uint32_t)(data[2 + i] * 17u) % (uint32_t)(len + 1)
				 : 0;

		cut[i] = c < cut[i - 1] ? cut[i - 1] : c;
	}
	for (unsigned i = 0; i < nseg; i++) {
		uint32_t l = cut[i + 1] - cut[i];

		buf[2 + i] = malloc(l ? l : 1);
		memcpy(buf[2 + i], data + 10 + cut[i], l);
		mbuf_set(&seg[i], buf[2 + i], (uint16_t)l);
		if (i > 0)
			seg[i - 1].next = &seg[i];
	}
	seg[0].nb_segs = (uint16_t)nseg;
	seg[0].pkt_len = (uint32_t)len;

	vsw_flow_extract(&contig, in_port, &k1);
	vsw_flow_extract(&seg[0], in_port, &k2);
	vsw_flow_extract(&trail, in_port, &k3);
	FZ_CHECK(memcmp(&k1, &k2, sizeof(k1)) == 0);
	FZ_CHECK(memcmp(&k1, &k3, sizeof(k1)) == 0);
	FZ_CHECK(k1.pad == 0 && k1.in_port == in_port);
	if (len < 14) {
		struct vsw_flow_key z;

		memset(&z, 0, sizeof(z));
		z.in_port = in_port;
		FZ_CHECK(memcmp(&k1, &z, sizeof(z)) == 0);
	}
	if (len < 14 + 20) /* no IP, no L4 ever (ARP needs 42) */
		FZ_CHECK(k1.tp_src == 0 && k1.tp_dst == 0 &&
			k1.tcp_flags == 0 && k1.nw_ttl == 0);

	burst[0] = &seg[0];
	burst[1] = &contig;
	burst[2] = &trail;
	vsw_flow_extract_burst(burst, 3, in_port, kb);
	for (unsigned i = 0; i < 3; i++)
		FZ_CHECK(memcmp(&k1, &kb[i], sizeof(k1)) == 0);

	for (unsigned i = 0; i < SEGS_MAX + 2; i++)
		free(buf[i]);
	return 0;
}
