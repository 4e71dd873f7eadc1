/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the split and packed ring tests (virtq_test_common.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pool_audit.h"
#include "tl_mbuf.h"
#include "virtq_test_common.h"

struct rte_mbuf *
virtq_test_mbuf(struct rte_mempool *mp, uint32_t len, uint8_t pattern)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);

	assert_non_null(m);
	assert_non_null(rte_pktmbuf_append(m, (uint16_t)len));
	memset(rte_pktmbuf_mtod(m, uint8_t *), pattern, len);
	return m;
}

static uint8_t
virtq_test_frame_byte(uint32_t i, uint8_t seed)
{
	return (uint8_t)(seed + i * 7 + (i >> 8));
}

struct rte_mbuf *
virtq_test_frame_mbuf(
	struct rte_mempool *mp, uint32_t len, uint8_t seed, uint32_t max_seg)
{
	static uint8_t data[9000];
	struct rte_mbuf *m;
	uint32_t i;

	assert_true(len <= sizeof(data));
	for (i = 0; i < len; i++)
		data[i] = virtq_test_frame_byte(i, seed);
	m = tl_mbuf_build(mp, data, len, NULL, max_seg);
	assert_non_null(m);
	return m;
}

void
virtq_test_frame_expect(const uint8_t *out, uint32_t len, uint8_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (out[i] != virtq_test_frame_byte(i, seed))
			fail_msg("byte %u of %u (seed %u): %u, want %u", i, len,
				seed, out[i], virtq_test_frame_byte(i, seed));
}

unsigned int
virtq_pool_mark(struct rte_mempool *mp)
{
	unsigned int nfree = 0, used;

	assert_int_equal(tg_pool_audit(mp, &nfree), 0);
	used = mp->size - nfree;
	assert_int_equal(rte_mempool_in_use_count(mp), used);
	return used;
}

void
virtq_pool_check(struct rte_mempool *mp, unsigned int baseline)
{
	unsigned int nfree = 0;

	assert_int_equal(tg_pool_audit(mp, &nfree), 0);
	assert_int_equal(mp->size - nfree, baseline);
	assert_int_equal(rte_mempool_in_use_count(mp), baseline);
}

void
virtq_stats_expect(const struct vsw_virtq *vq, uint64_t *seen,
	const struct stat_delta *d, size_t n)
{
	bool ok = true;
	uint32_t i;
	size_t j;

	for (i = 0; i < VSW_VIRTQ_STAT__MAX; i++) {
		uint64_t want = 0, got = vsw_virtq_stat(vq, i) - seen[i];

		for (j = 0; j < n; j++)
			if ((uint32_t)d[j].s == i)
				want += d[j].d;
		if (got != want) {
			print_error("counter %s moved by %llu, expected %llu\n",
				vsw_virtq_stat_name(i), (unsigned long long)got,
				(unsigned long long)want);
			ok = false;
		}
		seen[i] = vsw_virtq_stat(vq, i);
	}
	assert_true(ok);
}
