/* SPDX-License-Identifier: BSD-3-Clause */
/* Mempool integrity for tests (see pool_audit.h). Test code. */
#include <stdlib.h>
#include <string.h>

#include <rte_mempool.h>

#include "pool_audit.h"

static int
ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a;
	uintptr_t y = (uintptr_t)*(void *const *)b;

	return x < y ? -1 : x > y;
}

static void
obj_collect(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	(void)mp;
	((void **)arg)[idx] = obj;
}

int
tg_pool_audit(struct rte_mempool *mp, unsigned int *nfree)
{
	unsigned int lcore, n, i, cap, bad = 0, distinct = 0;
	void **got, **sorted, **all;

	for (lcore = 0; lcore < RTE_MAX_LCORE; lcore++) {
		struct rte_mempool_cache *c = rte_mempool_default_cache(mp,
			lcore);

		if (c != NULL)
			rte_mempool_cache_flush(c, mp);
	}
	/* the count is clamped to the pool size: take it, then drain the
	 * rest one by one (the ring holds fewer than 2 * size + 2) */
	cap = 2 * mp->size + 2;
	n = rte_mempool_avail_count(mp);
	got = calloc(cap, sizeof(*got));
	sorted = calloc(cap, sizeof(*sorted));
	all = calloc(mp->size + 1, sizeof(*all));
	if (got == NULL || sorted == NULL || all == NULL ||
		rte_mempool_obj_iter(mp, obj_collect, all) != mp->size ||
		rte_mempool_generic_get(mp, got, n, NULL) != 0) {
		free(got);
		free(sorted);
		free(all);
		return -1;
	}
	while (n < cap && rte_mempool_generic_get(mp, &got[n], 1, NULL) == 0)
		n++;
	memcpy(sorted, got, n * sizeof(*got));
	qsort(sorted, n, sizeof(*sorted), ptr_cmp);
	qsort(all, mp->size, sizeof(*all), ptr_cmp);
	for (i = 0; i < n; i++) {
		if (i > 0 && sorted[i] == sorted[i - 1])
			bad++; /* freed twice */
		else if (bsearch(&sorted[i], all, mp->size, sizeof(*all),
				 ptr_cmp) == NULL)
			bad++; /* not this pool's */
		else
			distinct++;
	}
	/* back as they were, duplicates too: the audit changes nothing */
	rte_mempool_generic_put(mp, got, n, NULL);
	free(got);
	free(sorted);
	free(all);
	*nfree = distinct;
	return (int)bad;
}
