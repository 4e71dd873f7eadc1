/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mempool integrity for tests: what the in-use count cannot see.
 */
#ifndef VSW_TEST_GUEST_POOL_AUDIT_H
#define VSW_TEST_GUEST_POOL_AUDIT_H

struct rte_mempool;

/*
 * Pool integrity: takes every free object out of mp (per-lcore caches
 * flushed first), checks that each is one of the pool's own objects and
 * appears once, and puts them all back as they were. Returns how many
 * entries are wrong (a duplicate: an object freed twice; a stranger), 0
 * when the pool is whole; *nfree gets the distinct free objects, so
 * mp->size - *nfree is what is really in use. No other thread may use mp
 * meanwhile. Counts alone cannot see a double free that hides a leak.
 */
int tg_pool_audit(struct rte_mempool *mp, unsigned int *nfree);

#endif /* VSW_TEST_GUEST_POOL_AUDIT_H */
