/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw-bench-virtq: TSC cycles per packet of the virtqueue data path alone,
 * against the software guest (test/guest), per packet size.
 *   enqueue: 32 mbufs per burst into mergeable 2 KiB RX buffers (64-byte
 *            aligned, like a Linux guest's), three ways: header copied on
 *            its own; header written into the mbuf headroom and copied
 *            with the data as one run; the same with the mbuf data at 12
 *            mod 64, which makes that run co-aligned with the guest buffer
 *            (what deq_align produces from a guest whose TX frame sits 12
 *            bytes into an aligned buffer);
 *   dequeue: 32 single-descriptor TX chains per burst into mbufs (freed),
 *            with and without deq_align;
 *   logging: enq plain and deq plain with the dirty log on (live
 *            migration: every page written is logged, virtq_log.c), the
 *            log cleared every burst as the front-end's sync would;
 *   offloads: enq and deq plain with checksum/TSO negotiated (the guest
 *            side's header is read or written), dirty log off and on
 *            (the packets carry no offload request: the header's cost).
 * All variants run in one process, in a rotating order inside each block;
 * only the burst call is timed (rdtsc around it). Median of the blocks. vsw_copy vs plain memcpy: while <vsw/copy.h>
 * is the memcpy placeholder the two are the same code; the real engine's
 * implementation switch gives that A/B once it lands.
 *
 * --packed: split vs packed rings instead, side by side in one rotation
 * (enqueue into mergeable 2 KiB buffers, dequeue of single-descriptor TX
 * chains, both copy placements at the defaults of the enqueue and the
 * plain dequeue), at 64 and 1518 B, and packed dequeue with IN_ORDER
 * (one used descriptor a burst). The packed guest re-posts slots in place
 * (id = slot), as an in-order driver would.
 *
 * --isa: enq plain and deq plain under each data path implementation
 * (vsw_virtq_datapath_impl_set()) the CPU runs, rotated in one run.
 *
 *   vsw-bench-virtq [--blocks N] [--bursts N] [--packed | --isa]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <vsw/copy.h>
#include <vsw/virtq.h>

#include "guest.h"
#include "guest_packed.h"
#include "tl_mbuf.h"

#define BURST 32u
#define RXBUF 2048u
#define QSIZE 1024u
#define MAXBLK 31

static const uint32_t sizes[] = {64, 256, 512, 1024, 1518, 4096, 9000};

struct side {
	struct tg_guest g;
	struct tg_vq q;
	struct vsw_virtq *vq;
	uint16_t next_desc;
	uint8_t *log; /* dirty log for the logging variants */
	uint64_t log_size;
};

static void
side_init_vq(struct side *s)
{
	s->vq = vsw_virtq_create(&s->q.cfg);
	if (s->vq == NULL) {
		fprintf(stderr, "virtq create failed\n");
		exit(1);
	}
}

/*
 * The copy placement is fixed for a queue's life (config): a variant that
 * wants another one gets a new queue where the old one stopped, like a
 * reconnect. Outside the timed calls.
 */
static void
side_placement(struct side *s, bool hdr_coalign, bool deq_align, bool log,
	bool offl)
{
	const uint64_t ol = VSW_VIRTQ_F_ENQ_OFFLOADS | VSW_VIRTQ_F_DEQ_OFFLOADS;

	if (s->q.cfg.hdr_coalign == hdr_coalign &&
		s->q.cfg.no_deq_align == !deq_align &&
		(s->q.cfg.log_base != NULL) == log &&
		((s->q.cfg.features & ol) != 0) == offl)
		return;
	s->q.cfg.features = offl ? s->q.cfg.features | ol
				 : s->q.cfg.features & ~ol;
	s->q.cfg.hdr_coalign = hdr_coalign;
	s->q.cfg.no_deq_align = !deq_align;
	s->q.cfg.log_base = log ? s->log : NULL;
	s->q.cfg.log_size = log ? s->log_size : 0;
	s->q.cfg.last_avail_idx = vsw_virtq_last_avail_idx(s->vq);
	s->q.cfg.last_used_idx = vsw_virtq_last_used_idx(s->vq);
	vsw_virtq_destroy(s->vq);
	side_init_vq(s);
}

static void
side_init(struct side *s, uint64_t features)
{
	memset(s, 0, sizeof(*s));
	if (tg_guest_init(&s->g) != 0 ||
		tg_vq_init(&s->q, &s->g, QSIZE, features) != 0) {
		fprintf(stderr, "guest set-up failed\n");
		exit(1);
	}
	s->log_size = vsw_virtq_log_size_needed(&s->g.mem);
	s->log = calloc(1, s->log_size);
	if (s->log == NULL)
		exit(1);
	side_init_vq(s);
}

/* RX: every descriptor is one 2 KiB write-only buffer, reused forever. */
static void
rx_layout(struct side *s)
{
	uint32_t i;

	for (i = 0; i < QSIZE; i++) {
		s->q.desc[i].addr = tg_alloc_data(&s->g, RXBUF, 64);
		s->q.desc[i].len = RXBUF;
		s->q.desc[i].flags = VRING_DESC_F_WRITE;
	}
}

/* TX: BURST frames of len behind a zero header, one descriptor each. */
static void
tx_layout(struct side *s, uint32_t len)
{
	uint32_t i;

	tg_data_reset(&s->g);
	for (i = 0; i < BURST; i++) {
		uint64_t b = tg_alloc_data(&s->g, 12 + len, 64);

		memset(tg_host(&s->g, b), 0, 12);
		memset((uint8_t *)tg_host(&s->g, b) + 12, (int)i, len);
		s->q.desc[i].addr = b;
		s->q.desc[i].len = 12 + len;
		s->q.desc[i].flags = 0;
	}
}

static void
post(struct side *s, uint32_t n, bool cyclic)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		tg_avail_push_raw(&s->q, cyclic ? s->next_desc : (uint16_t)i);
		s->next_desc = (uint16_t)((s->next_desc + 1) % QSIZE);
	}
	tg_kick(&s->q);
}

/* The guest takes everything back (no bookkeeping: raw heads). */
static void
reap(struct side *s)
{
	s->q.used_seen = s->q.used->idx;
}

static void
die_stats(const struct vsw_virtq *vq, const char *why)
{
	uint32_t i;

	fprintf(stderr, "%s:", why);
	for (i = 0; i < VSW_VIRTQ_STAT__MAX; i++)
		if (vsw_virtq_stat(vq, i) != 0)
			fprintf(stderr, " %s=%llu", vsw_virtq_stat_name(i),
				(unsigned long long)vsw_virtq_stat(vq, i));
	fputc('\n', stderr);
	exit(1);
}

static uint64_t
enq_block(struct side *s, struct rte_mbuf **m, uint32_t len, int bursts)
{
	uint32_t per = (12 + len + RXBUF - 1) / RXBUF;
	uint64_t cyc = 0;
	int b;

	for (b = 0; b < bursts; b++) {
		uint64_t t0;

		post(s, BURST * per, true);
		if (s->q.cfg.log_base != NULL) /* the front-end's sync */
			memset(s->log, 0, s->log_size);
		t0 = rte_rdtsc_precise();
		if (vsw_virtq_enqueue_burst(s->vq, m, BURST) != BURST)
			die_stats(s->vq, "enqueue short");
		cyc += rte_rdtsc_precise() - t0;
		reap(s);
	}
	return cyc;
}

static uint64_t
deq_block(struct side *s, struct rte_mempool *mp, int bursts)
{
	struct rte_mbuf *m[BURST];
	uint64_t cyc = 0;
	int b;

	for (b = 0; b < bursts; b++) {
		uint64_t t0;

		post(s, BURST, false);
		if (s->q.cfg.log_base != NULL)
			memset(s->log, 0, s->log_size);
		t0 = rte_rdtsc_precise();
		if (vsw_virtq_dequeue_burst(s->vq, mp, m, BURST) != BURST)
			die_stats(s->vq, "dequeue short");
		cyc += rte_rdtsc_precise() - t0;
		rte_pktmbuf_free_bulk(m, BURST);
		reap(s);
	}
	return cyc;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double
median_per_pkt(uint64_t *v, int n, int bursts)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	return (double)v[n / 2] / ((double)bursts * BURST);
}

/* The variants, run in a rotating order within every block. */
enum variant {
	ENQ_PLAIN,   /* header copied on its own, mbuf data at 128 */
	ENQ_PLAIN_AL, /* header on its own, mbuf data 12 mod 64 (co-aligned) */
	ENQ_HDR,     /* header in headroom, one run; mbuf data at 128 */
	ENQ_HDR_AL,  /* header in headroom, mbuf data 12 mod 64 (co-aligned) */
	DEQ_PLAIN,   /* mbuf data at 128 */
	DEQ_AL,      /* mbuf data at the guest frame's offset mod 64 */
	ENQ_LOG,     /* enq plain, dirty log on */
	DEQ_LOG,     /* deq plain, dirty log on */
	ENQ_OFFL,    /* enq plain, offloads negotiated */
	ENQ_OFFL_LOG, /* the same, dirty log on */
	DEQ_OFFL,    /* deq plain, offloads negotiated */
	DEQ_OFFL_LOG, /* the same, dirty log on */
	NVARIANT
};
static const char *const vname[NVARIANT] = {"enq plain", "enq pl+al", "enq hdr",
	"enq hdr+al", "deq plain", "deq al", "enq log", "deq log", "enq ol",
	"enq ol+log", "deq ol", "deq ol+log"};

static uint64_t
run_variant(enum variant v, struct side *rx, struct side *tx,
	struct rte_mempool *mp, struct rte_mbuf **m, struct rte_mbuf **m_al,
	uint32_t len, int bursts)
{
	side_placement(rx, v == ENQ_HDR || v == ENQ_HDR_AL, true,
		v == ENQ_LOG || v == ENQ_OFFL_LOG,
		v == ENQ_OFFL || v == ENQ_OFFL_LOG);
	side_placement(tx, false, v == DEQ_AL, v == DEQ_LOG || v == DEQ_OFFL_LOG,
		v == DEQ_OFFL || v == DEQ_OFFL_LOG);
	switch (v) {
	case ENQ_PLAIN:
	case ENQ_HDR:
	case ENQ_LOG:
	case ENQ_OFFL:
	case ENQ_OFFL_LOG:
		return enq_block(rx, m, len, bursts);
	case ENQ_HDR_AL:
	case ENQ_PLAIN_AL:
		return enq_block(rx, m_al, len, bursts);
	default:
		return deq_block(tx, mp, bursts);
	}
}

static void
run_size(struct side *rx, struct side *tx, struct rte_mempool *mp,
	uint32_t len, int blocks, int bursts)
{
	static uint64_t cyc[NVARIANT][MAXBLK];
	struct rte_mbuf *m[BURST], *m_al[BURST];
	uint8_t *data = malloc(len);
	uint32_t i;
	int k, j;

	memset(data, 0x5a, len);
	/* Segments filled to the brim, head data at 128 or 12 mod 64: what
	 * dequeue makes. */
	for (i = 0; i < BURST; i++) {
		m[i] = tl_mbuf_build_at(mp, data, len, 0, RTE_PKTMBUF_HEADROOM);
		m_al[i] = tl_mbuf_build_at(mp, data, len, 0,
			RTE_PKTMBUF_HEADROOM - 64 + 12);
		if (m[i] == NULL || m_al[i] == NULL) {
			fprintf(stderr, "mempool empty\n");
			exit(1);
		}
	}
	tx_layout(tx, len);
	for (j = 0; j < NVARIANT; j++) /* warm-up */
		run_variant(j, rx, tx, mp, m, m_al, len, bursts / 4 + 1);
	for (k = 0; k < blocks; k++)
		for (j = 0; j < NVARIANT; j++) {
			enum variant v = (enum variant)((j + k) % NVARIANT);

			cyc[v][k] = run_variant(v, rx, tx, mp, m, m_al, len,
				bursts);
		}
	printf("%6u", len);
	for (j = 0; j < NVARIANT; j++)
		printf("  %10.1f", median_per_pkt(cyc[j], blocks, bursts));
	printf("  %9.3f  %9.3f  %9.3f  %9.3f  %9.3f  %9.3f  %9.3f\n",
		median_per_pkt(cyc[ENQ_PLAIN_AL], blocks, bursts) /
			median_per_pkt(cyc[ENQ_PLAIN], blocks, bursts),
		median_per_pkt(cyc[ENQ_HDR_AL], blocks, bursts) /
			median_per_pkt(cyc[ENQ_PLAIN], blocks, bursts),
		median_per_pkt(cyc[DEQ_AL], blocks, bursts) /
			median_per_pkt(cyc[DEQ_PLAIN], blocks, bursts),
		median_per_pkt(cyc[ENQ_LOG], blocks, bursts) /
			median_per_pkt(cyc[ENQ_PLAIN], blocks, bursts),
		median_per_pkt(cyc[DEQ_LOG], blocks, bursts) /
			median_per_pkt(cyc[DEQ_PLAIN], blocks, bursts),
		median_per_pkt(cyc[ENQ_OFFL_LOG], blocks, bursts) /
			median_per_pkt(cyc[ENQ_OFFL], blocks, bursts),
		median_per_pkt(cyc[DEQ_OFFL_LOG], blocks, bursts) /
			median_per_pkt(cyc[DEQ_OFFL], blocks, bursts));
	rte_pktmbuf_free_bulk(m, BURST);
	rte_pktmbuf_free_bulk(m_al, BURST);
	free(data);
}

/* --- per-ISA data path ---------------------------------------------------- */

/*
 * --isa: enq plain and deq plain under every data path implementation
 * the CPU runs, each with its own copy implementation selected (baseline:
 * the sources with the copy dispatcher, copy auto, i.e. the code before the
 * per-ISA build), all in one rotation per block.
 */
static void
run_isa(struct side *rx, struct side *tx, struct rte_mempool *mp,
	uint32_t len, int blocks, int bursts)
{
	static uint64_t cyc[16][MAXBLK];
	const char *name[8];
	struct rte_mbuf *m[BURST];
	uint8_t *data = calloc(1, len);
	unsigned ni = 0, nv, i, j;
	bool ok;
	int k;

	for (i = 0; i < vsw_virtq_datapath_impl_count() && ni < 8; i++)
		if (vsw_virtq_datapath_impl_info(i, &name[ni], &ok) == 0 && ok)
			ni++;
	nv = 2 * ni;
	for (i = 0; i < BURST; i++)
		if ((m[i] = tl_mbuf_build_at(mp, data, len, 0,
			     RTE_PKTMBUF_HEADROOM)) == NULL)
			exit(1);
	tx_layout(tx, len);
	side_placement(rx, false, true, false, false);
	side_placement(tx, false, false, false, false);
	for (k = -1; k < blocks; k++) /* block -1: warm-up */
		for (j = 0; j < nv; j++) {
			unsigned v = (j + (unsigned)(k + 1)) % nv;
			uint64_t c;

			/* a data path with its own copy (baseline: auto) */
			vsw_virtq_datapath_impl_set(name[v / 2]);
			vsw_copy_impl_set(v / 2 == 0 ? "auto" : name[v / 2]);
			c = v % 2 == 0 ? enq_block(rx, m, len, bursts)
				       : deq_block(tx, mp, bursts);
			if (k >= 0)
				cyc[v][k] = c;
		}
	/* min too: on a loaded machine the lowest block is the one least
	 * disturbed, and each variant had as many chances at it */
	for (i = 0; i < ni; i++) {
		double e = median_per_pkt(cyc[2 * i], blocks, bursts);
		double d = median_per_pkt(cyc[2 * i + 1], blocks, bursts);

		printf("%6u  %-9s  %8.1f  %8.1f  %8.1f  %8.1f  %8.3f  %8.3f\n",
			len, name[i], e, d,
			(double)cyc[2 * i][0] / ((double)bursts * BURST),
			(double)cyc[2 * i + 1][0] / ((double)bursts * BURST),
			e / median_per_pkt(cyc[0], blocks, bursts),
			d / median_per_pkt(cyc[1], blocks, bursts));
	}
	vsw_virtq_datapath_impl_set("auto");
	vsw_copy_impl_set("auto");
	rte_pktmbuf_free_bulk(m, BURST);
	free(data);
}

/* --- split vs packed ------------------------------------------------------ */

struct pside {
	struct tg_guest g;
	struct tgp_vq q;
	struct vsw_virtq *vq;
	uint64_t buf[QSIZE]; /* what slot i carries */
	uint32_t len[QSIZE];
	uint16_t flags;      /* WRITE (RX) or 0 (TX) */
};

static void
pside_init(struct pside *s, uint64_t features, uint16_t flags)
{
	uint32_t i;

	memset(s, 0, sizeof(*s));
	if (tg_guest_init(&s->g) != 0 ||
		tgp_vq_init(&s->q, &s->g, QSIZE, features) != 0) {
		fprintf(stderr, "guest set-up failed\n");
		exit(1);
	}
	s->q.cfg.no_deq_align = true;
	s->vq = vsw_virtq_create(&s->q.cfg);
	if (s->vq == NULL) {
		fprintf(stderr, "virtq create failed\n");
		exit(1);
	}
	s->flags = flags;
	for (i = 0; i < QSIZE; i++) {
		s->buf[i] = tg_alloc_data(&s->g, RXBUF, 64);
		s->len[i] = RXBUF;
	}
}

/* n one-slot buffers made available (head flags last per slot). */
static void
ppost(struct pside *s, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint16_t at = s->q.next_avail;

		tgp_desc_raw(&s->q, at, s->buf[at], s->len[at], at,
			s->flags | tgp_avail_flags(s->q.avail_wrap));
		if (++s->q.next_avail == QSIZE) {
			s->q.next_avail = 0;
			s->q.avail_wrap = !s->q.avail_wrap;
		}
	}
}

static void
ptx_layout(struct pside *s, uint32_t len)
{
	uint32_t i;

	/* the same BURST frames over and over, as the split side sends */
	for (i = 0; i < QSIZE; i++) {
		uint8_t *h;

		s->buf[i] = s->buf[i % BURST];
		h = tg_host(&s->g, s->buf[i]);
		memset(h, 0, 12);
		memset(h + 12, (int)(i % BURST), len);
		s->len[i] = 12 + len;
	}
}

static uint64_t
penq_block(struct pside *s, struct rte_mbuf **m, int bursts)
{
	uint64_t cyc = 0;
	int b;

	for (b = 0; b < bursts; b++) {
		uint64_t t0;

		ppost(s, BURST);
		t0 = rte_rdtsc_precise();
		if (vsw_virtq_enqueue_burst(s->vq, m, BURST) != BURST)
			die_stats(s->vq, "packed enqueue short");
		cyc += rte_rdtsc_precise() - t0;
	}
	return cyc;
}

static uint64_t
pdeq_block(struct pside *s, struct rte_mempool *mp, int bursts)
{
	struct rte_mbuf *m[BURST];
	uint64_t cyc = 0;
	int b;

	for (b = 0; b < bursts; b++) {
		uint64_t t0;

		ppost(s, BURST);
		t0 = rte_rdtsc_precise();
		if (vsw_virtq_dequeue_burst(s->vq, mp, m, BURST) != BURST)
			die_stats(s->vq, "packed dequeue short");
		cyc += rte_rdtsc_precise() - t0;
		rte_pktmbuf_free_bulk(m, BURST);
	}
	return cyc;
}

enum pvariant {
	SPLIT_ENQ, PACKED_ENQ, SPLIT_DEQ, PACKED_DEQ, PACKED_DEQ_IO, NPVARIANT
};
static const char *const pvname[NPVARIANT] = {"split enq", "packed enq",
	"split deq", "packed deq", "pdeq inord"};

static uint64_t
run_pvariant(enum pvariant v, struct side *rx, struct side *tx,
	struct pside *prx, struct pside *ptx, struct rte_mempool *mp,
	struct rte_mbuf **m, uint32_t len, int bursts)
{
	switch (v) {
	case PACKED_DEQ_IO:
		return pdeq_block(ptx + 1, mp, bursts);
	case SPLIT_ENQ:
		return enq_block(rx, m, len, bursts);
	case PACKED_ENQ:
		return penq_block(prx, m, bursts);
	case SPLIT_DEQ:
		return deq_block(tx, mp, bursts);
	default:
		return pdeq_block(ptx, mp, bursts);
	}
}

static void
run_packed(struct side *rx, struct side *tx, struct rte_mempool *mp,
	int blocks, int bursts)
{
	static const uint32_t psizes[] = {64, 1518};
	static uint64_t cyc[NPVARIANT][MAXBLK];
	static struct pside prx, ptx[2]; /* ptx[1]: with IN_ORDER */
	struct rte_mbuf *m[BURST];
	uint8_t data[1518];
	uint32_t i, z;
	int k, j;

	pside_init(&prx, 1ull << VSW_VIRTIO_NET_F_MRG_RXBUF |
			1ull << VSW_VIRTIO_F_VERSION_1, VRING_DESC_F_WRITE);
	pside_init(&ptx[0], 1ull << VSW_VIRTIO_F_VERSION_1, 0);
	pside_init(&ptx[1], 1ull << VSW_VIRTIO_F_VERSION_1 |
			1ull << VSW_VIRTIO_F_IN_ORDER, 0);
	side_placement(rx, false, true, false, false);
	side_placement(tx, false, false, false, false);
	printf("%6s", "bytes");
	for (j = 0; j < NPVARIANT; j++)
		printf("  %10s", pvname[j]);
	printf("  %9s  %9s\n", "enq p/s", "deq p/s");
	memset(data, 0x5a, sizeof(data));
	for (z = 0; z < RTE_DIM(psizes); z++) {
		uint32_t len = psizes[z];

		for (i = 0; i < BURST; i++) {
			m[i] = tl_mbuf_build_at(mp, data, len, 0,
				RTE_PKTMBUF_HEADROOM);
			if (m[i] == NULL)
				exit(1);
		}
		tx_layout(tx, len);
		ptx_layout(&ptx[0], len);
		ptx_layout(&ptx[1], len);
		for (j = 0; j < NPVARIANT; j++) /* warm-up */
			run_pvariant(j, rx, tx, &prx, ptx, mp, m, len,
				bursts / 4 + 1);
		for (k = 0; k < blocks; k++)
			for (j = 0; j < NPVARIANT; j++) {
				enum pvariant v = (enum pvariant)((j + k) %
					NPVARIANT);

				cyc[v][k] = run_pvariant(v, rx, tx, &prx, ptx,
					mp, m, len, bursts);
			}
		printf("%6u", len);
		for (j = 0; j < NPVARIANT; j++)
			printf("  %10.1f", median_per_pkt(cyc[j], blocks,
				bursts));
		printf("  %9.3f  %9.3f\n",
			median_per_pkt(cyc[PACKED_ENQ], blocks, bursts) /
				median_per_pkt(cyc[SPLIT_ENQ], blocks, bursts),
			median_per_pkt(cyc[PACKED_DEQ], blocks, bursts) /
				median_per_pkt(cyc[SPLIT_DEQ], blocks, bursts));
		rte_pktmbuf_free_bulk(m, BURST);
	}
	vsw_virtq_destroy(prx.vq);
	vsw_virtq_destroy(ptx[0].vq);
	vsw_virtq_destroy(ptx[1].vq);
}

int
main(int argc, char **argv)
{
	struct rte_mempool *mp;
	struct side rx, tx;
	int blocks = 9, bursts = 2000, i;
	bool packed = false, isa = false;
	size_t s;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--packed") == 0)
			packed = true;
		else if (strcmp(argv[i], "--isa") == 0)
			isa = true;
		else if (i + 1 < argc && strcmp(argv[i], "--blocks") == 0)
			blocks = atoi(argv[++i]);
		else if (i + 1 < argc && strcmp(argv[i], "--bursts") == 0)
			bursts = atoi(argv[++i]);
	}
	if (blocks < 1 || blocks > MAXBLK || bursts < 1) {
		fprintf(stderr, "usage: %s [--blocks 1..%d] [--bursts N] "
			"[--packed | --isa]\n",
			argv[0], MAXBLK);
		return 2;
	}
	if (tl_eal_init(argv[0], "vsw_bench_virtq") < 0)
		return 1;
	mp = rte_pktmbuf_pool_create("bench_virtq", 4095, 256, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (mp == NULL)
		return 1;
	side_init(&rx, 1ull << VSW_VIRTIO_NET_F_MRG_RXBUF |
			1ull << VSW_VIRTIO_F_VERSION_1);
	side_init(&tx, 1ull << VSW_VIRTIO_F_VERSION_1);
	rx_layout(&rx);
	printf("virtq data path, TSC cycles per packet (median of %d blocks "
	       "x %d bursts of %u; TSC %.2f GHz)\n",
		blocks, bursts, BURST, (double)rte_get_tsc_hz() / 1e9);
	if (packed) {
		run_packed(&rx, &tx, mp, blocks, bursts);
		rte_eal_cleanup();
		return 0;
	}
	if (isa) {
		printf("%6s  %-9s  %8s  %8s  %8s  %8s  %8s  %8s\n", "bytes",
			"datapath", "enq med", "deq med", "enq min", "deq min",
			"enq/base", "deq/base");
		for (s = 0; s < RTE_DIM(sizes); s++)
			run_isa(&rx, &tx, mp, sizes[s], blocks, bursts);
		rte_eal_cleanup();
		return 0;
	}
	printf("%6s", "bytes");
	for (i = 0; i < NVARIANT; i++)
		printf("  %10s", vname[i]);
	printf("  %9s  %9s  %9s  %9s  %9s  %9s  %9s\n", "pl+al/pl",
		"hdr+al/pl", "deq al/pl", "enq log/pl", "deq log/pl", "e ol l/ol",
		"d ol l/ol");
	for (s = 0; s < RTE_DIM(sizes); s++)
		run_size(&rx, &tx, mp, sizes[s], blocks, bursts);
	rte_eal_cleanup();
	return 0;
}
