/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw wildcard classifier (tuple space search). The exact-match cache in
 * front of it is vsw/emc.h.
 *
 * A classifier holds rules {masked key, mask, priority, user pointer}. One
 * subtable per distinct mask, each a hash table of masked keys. Lookups take
 * a burst of up to 32 keys and a 32-bit map of keys still to resolve.
 *
 * Threads: a classifier is built and changed by one writer (the control
 * thread) while no reader can see it; the switch publishes a finished one
 * with RCU and never changes it afterwards (copy, change, publish, free the
 * old one after a grace period). Lookups are read-only and lock-free, so any
 * number of PMDs may look up in the same classifier. Per-PMD statistics go
 * to a caller-owned struct, so no PMD writes shared memory.
 */
#ifndef VSW_DPCLS_H
#define VSW_DPCLS_H

#include <stdbool.h>
#include <stdint.h>

#include <vsw/flow.h>

#define VSW_DPCLS_BURST 32

struct vsw_dpcls;

/* What a lookup reports back to its caller (one per PMD). */
struct vsw_dpcls_lookup_stats {
	uint64_t lookups;          /* keys looked up */
	uint64_t hits;             /* keys that matched a rule */
	uint64_t subtable_lookups; /* subtables visited, summed over keys */
	/*
	 * Optional per-subtable hit counts for re-ranking, owned by the
	 * caller (NULL / 0 = not counted). subtable_hits[i] counts keys that
	 * matched in the subtable at lookup position i of the classifier
	 * looked up; reset the array whenever a new classifier is published.
	 */
	uint64_t *subtable_hits;
	uint32_t n_subtable_hits;
};

/* Create an empty classifier; NULL on allocation failure. */
struct vsw_dpcls *vsw_dpcls_create(void);
void vsw_dpcls_destroy(struct vsw_dpcls *cls);

/* Deep copy (rules, subtables, order); NULL on allocation failure. */
struct vsw_dpcls *vsw_dpcls_clone(const struct vsw_dpcls *cls);

/*
 * Insert a rule. key is masked by mask before use. A rule with the same
 * masked key, mask and priority replaces the old one's data. Returns 0,
 * -ENOMEM. Higher priority wins; among equal priorities any match may win
 * (a rule set with overlapping equal-priority rules is ambiguous, as in OVS).
 */
int vsw_dpcls_insert(struct vsw_dpcls *cls, const struct vsw_flow_key *key,
	const struct vsw_flow_mask *mask, int32_t priority, void *data);

/* Remove the rule with this masked key, mask and priority: 0 or -ENOENT. */
int vsw_dpcls_remove(struct vsw_dpcls *cls, const struct vsw_flow_key *key,
	const struct vsw_flow_mask *mask, int32_t priority);

uint32_t vsw_dpcls_n_rules(const struct vsw_dpcls *cls);
uint32_t vsw_dpcls_n_subtables(const struct vsw_dpcls *cls);

/*
 * Look up keys[i] for every bit i set in keys_map (n <= 32 keys). For each
 * key found, results[i] is the user pointer of the highest-priority matching
 * rule and bit i is set in the returned map; other results[] are untouched.
 * Subtables are visited by descending maximum priority; a key stops as soon
 * as no remaining subtable can beat its match. stats may be NULL; otherwise
 * the lookup adds to it (and to stats->subtable_hits when set).
 */
uint32_t vsw_dpcls_lookup(const struct vsw_dpcls *cls,
	const struct vsw_flow_key *keys, uint32_t keys_map, void **results,
	struct vsw_dpcls_lookup_stats *stats);

/*
 * Re-rank subtables: among subtables of equal maximum priority, the one with
 * more hits is visited first. hits[i] (n == vsw_dpcls_n_subtables()) is the
 * hit count of lookup position i, e.g. the sum of every PMD's
 * subtable_hits for the published classifier; call it on a private clone of
 * that classifier (clone keeps the order), then publish the clone.
 * Returns 0, -EINVAL (n mismatch), -ENOMEM.
 */
int vsw_dpcls_rerank(struct vsw_dpcls *cls, const uint64_t *hits, uint32_t n);

/*
 * Lookup implementations, selectable at run time by name. The environment
 * variable VSW_CPU_HIDE (read once at start-up, shared with the copy
 * engine: see copy.h) hides "avx512" when its comma-separated list names
 * avx512: the implementation is then neither listed nor selectable, as on
 * a CPU without AVX-512.
 */
int vsw_dpcls_impl_set(const char *name);     /* 0, -ENOENT, -ENOTSUP */
const char *vsw_dpcls_impl_get(void);
/* Fill names[] with up to max implementation names; returns the count. */
unsigned vsw_dpcls_impl_list(const char **names, unsigned max);
/* Disagreements seen by the autovalidator since start. */
uint64_t vsw_dpcls_validator_mismatches(void);

#endif /* VSW_DPCLS_H */
