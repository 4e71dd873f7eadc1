/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mbuf pool integrity for the virtq fuzz targets (fuzz_virtq.h): every
 * mbuf free and in its pool once. Single-threaded, like the targets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include "fuzz_check.h"
#include "fuzz_virtq.h"
#include "pool_audit.h"

/*
 * The pools' objects, for fz_pool_check: tg_pool_audit sorts and searches
 * (about 1 ms for 4095 mbufs in this build, more than a whole input
 * takes), so when the objects lie at one stride (they do: one memzone)
 * an index and a bitmap do the same in one pass.
 */
struct pool_map {
	struct rte_mempool *mp;
	uintptr_t base, stride; /* stride 0: not uniform, use tg_pool_audit */
	uint8_t *seen;
	void **got;
	unsigned int cap;
};
static struct pool_map maps[2];
static unsigned int nmaps;

static void
obj_note(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	(void)mp;
	((uintptr_t *)arg)[idx] = (uintptr_t)obj;
}

static int
uptr_cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

void
fz_pool_map(struct rte_mempool *mp)
{
	struct pool_map *pm = &maps[nmaps];
	uintptr_t *all = calloc(mp->size, sizeof(*all));

	FZ_CHECK(nmaps < RTE_DIM(maps) && all != NULL);
	nmaps++;
	FZ_CHECK(rte_mempool_obj_iter(mp, obj_note, all) == mp->size);
	qsort(all, mp->size, sizeof(*all), uptr_cmp);
	pm->mp = mp;
	pm->base = all[0];
	pm->stride = mp->size > 1 ? all[1] - all[0] : 1;
	for (unsigned int i = 1; i < mp->size; i++)
		if (all[i] != pm->base + i * pm->stride)
			pm->stride = 0;
	free(all);
	pm->cap = 2 * mp->size + 2; /* the ring holds fewer */
	pm->seen = calloc(mp->size, 1);
	pm->got = calloc(pm->cap, sizeof(*pm->got));
	FZ_CHECK(pm->seen != NULL && pm->got != NULL);
}

void
fz_pool_check(struct rte_mempool *mp)
{
	struct pool_map *pm = mp == maps[0].mp ? &maps[0] : &maps[1];
	unsigned int n, i, lcore, bad = 0, distinct = 0;

	FZ_CHECK(pm->mp == mp); /* mapped by fz_pool_map */
	if (pm->stride == 0) {
		FZ_CHECK(tg_pool_audit(mp, &distinct) == 0 &&
			 distinct == mp->size);
		return;
	}
	for (lcore = 0; lcore < RTE_MAX_LCORE; lcore++) {
		struct rte_mempool_cache *c = rte_mempool_default_cache(mp,
			lcore);

		if (c != NULL)
			rte_mempool_cache_flush(c, mp);
	}
	n = rte_mempool_avail_count(mp);
	FZ_CHECK(rte_mempool_generic_get(mp, pm->got, n, NULL) == 0);
	while (n < pm->cap &&
		rte_mempool_generic_get(mp, &pm->got[n], 1, NULL) == 0)
		n++;
	memset(pm->seen, 0, mp->size);
	for (i = 0; i < n; i++) {
		uintptr_t off = (uintptr_t)pm->got[i] - pm->base;
		uintptr_t idx = off / pm->stride;

		if (off % pm->stride != 0 || idx >= mp->size)
			bad++; /* not one of the pool's */
		else if (pm->seen[idx]++)
			bad++; /* in the pool twice: freed twice */
		else
			distinct++;
	}
	rte_mempool_generic_put(mp, pm->got, n, NULL);
	if (bad != 0 || distinct != mp->size)
		fprintf(stderr, "pool %s: %u wrong entries, %u of %u free\n",
			mp->name, bad, distinct, mp->size);
	FZ_CHECK(bad == 0 && distinct == mp->size);
}
