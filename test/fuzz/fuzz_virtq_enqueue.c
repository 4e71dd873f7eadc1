/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: vsw_virtq_enqueue_burst (host -> guest) over a ring and
 * guest memory built from the input (layout: fuzz_virtq.h). A burst
 * operation is followed by one (u16 length, u8 segment size) pair per
 * packet; packets are single- or multi-segment mbufs with known contents.
 *
 * Checks after each burst: every packet offered is counted once (delivered
 * or one ENQ_DROP_*), the return value is the delivered count; a queue
 * takes as many chains as it returns used entries; the used lengths add up
 * to the bytes delivered plus one header per delivered packet; without
 * MRG_RXBUF each delivered packet uses one entry; counters partition
 * (fz_check_common); the mbufs are not modified (their data; the headroom
 * may carry the header with hdr_coalign) and the pool is whole again after
 * they are freed; a broken queue takes nothing. ASan with guard pages
 * catches any access outside guest memory.
 */
#include <string.h>
#include <linux/virtio_ring.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fuzz_check.h"
#include "fuzz_virtq.h"
#include "tl_mbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define PKTS_MAX 48u

static struct vsw_virtq *vq;
static struct fz_guest guest;
static struct fz_q q;

/* Packet i holds pat[i * 61 ...]: distinct, position-dependent bytes. */
static uint8_t pat[PKTS_MAX * 61 + 65536];

static const uint8_t *
pattern(uint32_t pkt)
{
	return pat + pkt * 61u;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_env_init();
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i * 7u + (i >> 8) * 13u + (i >> 16));
	return 0;
}

static void
run_burst(struct fz_in *in, uint16_t n)
{
	struct rte_mempool *mp;
	struct rte_mbuf *pkts[PKTS_MAX];
	uint32_t lens[PKTS_MAX];
	uint64_t drops = 0, used_bytes = 0, offered = 0;
	struct fz_snap s;
	uint16_t got, taken, published;

	/* packets come from the big pool: the small one is for dequeue */
	mp = fz_pool(&(struct fz_q){.mode = 0});
	for (uint16_t i = 0; i < n; i++) {
		uint16_t l = fz_u16(in);
		uint8_t sg = fz_u8(in);

		/* mostly MTU-sized, sometimes up to 32 KiB */
		lens[i] = (l & 0x8000) ? (l & 0x7fffu) : l % 2048u;
		/* at most 33 segments: 48 packets never drain the pool */
		pkts[i] = tl_mbuf_build(mp, pattern(i), lens[i], NULL,
			RTE_MAX(1 + sg * 16u, lens[i] / 32 + 1));
		FZ_CHECK(pkts[i] != NULL);
		offered += lens[i];
	}
	fz_snap_take(&s, vq, &q);
	got = vsw_virtq_enqueue_burst(vq, pkts, n);
	FZ_CHECK(got <= n);
	for (int c = VSW_VIRTQ_STAT_ENQ_DROP_RING_FULL;
		c <= VSW_VIRTQ_STAT_ENQ_DROP_SHORT_HDR; c++)
		drops += fz_delta(&s, vq, (enum vsw_virtq_stat)c);
	FZ_CHECK(fz_delta(&s, vq, VSW_VIRTQ_STAT_ENQ_PACKETS) == got);
	FZ_CHECK(got + drops == n);
	FZ_CHECK(fz_delta(&s, vq, VSW_VIRTQ_STAT_ENQ_BYTES) <= offered);
	taken = (uint16_t)(vsw_virtq_last_avail_idx(vq) - s.last_avail);
	published = fz_check_common(&s, vq, &q,
		fz_delta(&s, vq, VSW_VIRTQ_STAT_ENQ_DROP_BAD_DESC));
	FZ_CHECK(published == taken);
	if (s.broken)
		FZ_CHECK(taken == 0 && got == 0 &&
			 fz_delta(&s, vq, VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY) == n);
	for (uint16_t i = 0; i < published; i++)
		used_bytes += q.used->ring[(uint16_t)(s.last_used + i) &
					   (q.cfg.size - 1)].len;
	FZ_CHECK(used_bytes == fz_delta(&s, vq, VSW_VIRTQ_STAT_ENQ_BYTES) +
				      (uint64_t)q.hdr_len * got);
	if (!(q.mode & FZ_M_MRG))
		FZ_CHECK(published >= got);
	for (uint16_t i = 0; i < n; i++) {
		FZ_CHECK(tl_mbuf_equal(pkts[i], pattern(i), lens[i]));
		FZ_CHECK(rte_mbuf_check(pkts[i], 1, NULL) == 0);
	}
	rte_pktmbuf_free_bulk(pkts, n);
	FZ_CHECK(rte_mempool_in_use_count(mp) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = {data, size};
	int rc, bursts = 0;

	vq = fz_setup(&guest, &q, &in, VRING_DESC_F_WRITE);
	if (vq == NULL) {
		fz_debug(vq, &q, "create failed");
		return 0;
	}
	while ((rc = fz_op(&guest, &q, &in)) >= 0) {
		if (rc == 0)
			continue;
		/* 1..32, and now and then more than a burst */
		run_burst(&in, (uint16_t)(rc == 32 ? PKTS_MAX : rc));
		bursts++;
	}
	if (bursts == 0)
		run_burst(&in, 8);
	fz_debug(vq, &q, "end");
	vsw_virtq_destroy(vq);
	vq = NULL;
	return 0;
}
