/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The classifier tests' reference (dpcls_ref.c): the test's own list of
 * rules, answered by a linear scan, the classifier built beside it, key
 * sets with the reference answers, and the checks of vsw_dpcls_lookup()
 * against them. Shared by test_dpcls.c and test_dpcls_update.c.
 */
#ifndef TEST_DPCLS_REF_H
#define TEST_DPCLS_REF_H

#include <stdint.h>

#include <vsw/dpcls.h>

#include "tl_rng.h"

#define N_LOOKUPS 100000
#define MAX_RULES 1000

struct ref_rule {
	struct vsw_flow_key key; /* masked */
	struct vsw_flow_mask mask;
	int32_t prio;
	int live;
};

struct ref {
	struct ref_rule r[MAX_RULES];
	unsigned n;
	struct vsw_flow_mask masks[64];
	unsigned n_masks;
};

/* Keys with their reference answers, in bursts of 32 with a map each. */
struct keyset {
	struct vsw_flow_key *keys;
	int *best;     /* ref_lookup() result */
	int32_t *prio; /* best priority when best >= 0 */
	uint32_t *maps;
	unsigned n; /* multiple of 32 */
};

/* One generator for every file, seeded in main: the cases draw from it in
 * their order in main's table. */
extern struct tl_rng test_rng;

static inline uint32_t
rnd(void)
{
	return tl_rand32(&test_rng);
}

/* Set: every mask also covers all eight key words (see random_mask). */
extern int wide_masks;

/* Values from a small domain per byte, so keys and rules collide often. */
void small_key(struct vsw_flow_key *k);
int32_t random_prio(unsigned prio_range);
/* Insert into both; a duplicate (key, mask, prio) updates the old one. */
void ref_insert(struct ref *ref, struct vsw_dpcls *cls,
	const struct vsw_flow_key *key, const struct vsw_flow_mask *mask,
	int32_t prio);
/* n_masks random masks, n_rules random rules over them, into both. */
void ref_build(struct ref *ref, struct vsw_dpcls *cls, unsigned n_masks,
	unsigned n_rules, unsigned prio_range);
unsigned ref_live(const struct ref *ref);
unsigned ref_live_masks(const struct ref *ref);

void keyset_make(struct keyset *ks, const struct ref *ref, unsigned n);
void keyset_free(struct keyset *ks);

/* Look up burst b; returns how many keys got a wrong answer. */
unsigned burst_errors(const struct ref *ref, const struct vsw_dpcls *cls,
	const struct keyset *ks, unsigned b, const char *impl,
	struct vsw_dpcls_lookup_stats *st, uint32_t *found);
/* Burst b right, its stats counted, with the current implementation. */
void check_burst(const struct ref *ref, const struct vsw_dpcls *cls,
	const struct keyset *ks, unsigned b, const char *impl);
/* Every burst of ks with every implementation; the validator silent. */
void check_all_impls(const struct ref *ref, const struct vsw_dpcls *cls,
	const struct keyset *ks);

/* The cases of test_dpcls_update.c (run from test_dpcls.c's main). */
void test_insert_remove_clone(void **state);
void test_concurrent_impl_switch(void **state);

#endif /* TEST_DPCLS_REF_H */
