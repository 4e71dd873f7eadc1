/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Classifier internals shared by switch/dpcls*.c and switch/emc.c: the
 * subtable and rule layouts, the word hash, the per-subtable lookup function
 * type, and the always-inline lookup body that the generic and the unrolled
 * implementations instantiate.
 */
#ifndef VSW_DPCLS_PRIV_H
#define VSW_DPCLS_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vsw/dpcls.h>

/* Lookup implementations; the registry's table is indexed by this. */
enum dpcls_impl {
	DPCLS_IMPL_AUTOVALIDATOR,
	DPCLS_IMPL_GENERIC,
	DPCLS_IMPL_UNROLLED,
	DPCLS_IMPL_AVX512,
	DPCLS_IMPL_COUNT
};

/*
 * One rule. Rules with the same masked key in one subtable form a list
 * sorted by descending priority; only its head is on the hash chain, so a
 * lookup stops at the first key match.
 */
struct dpcls_rule {
	struct dpcls_rule *next;  /* hash chain (heads only) */
	struct dpcls_rule *lower; /* same masked key, lower priority */
	void *data;
	int32_t priority;
	uint32_t hash;
	uint64_t key[]; /* the subtable's n_words masked words, packed */
};

struct dpcls_subtable;

/*
 * Look up keys[i] (bits of keys_map) in one subtable; for each hit set
 * rules[i] to the highest-priority rule with that masked key and set bit i
 * of the returned map. Other rules[] are not touched.
 */
typedef uint32_t (*dpcls_subtable_lookup_fn)(const struct dpcls_subtable *st,
	const struct vsw_flow_key *keys, uint32_t keys_map,
	const struct dpcls_rule **rules);

struct dpcls_subtable {
	struct vsw_flow_mask mask;
	uint64_t wmask[VSW_FLOW_KEY_WORDS]; /* mask words that are non-zero */
	uint8_t words[VSW_FLOW_KEY_WORDS];  /* their indices in the key */
	uint8_t n_words;
	uint8_t word_map;                   /* bit i: word i is in the mask */
	int32_t max_priority;
	uint32_t n_rules;   /* all rules */
	uint32_t n_heads;   /* distinct masked keys (hash entries) */
	uint32_t bucket_mask;
	struct dpcls_rule **buckets;
	/* Per implementation, resolved for this mask shape at creation. */
	dpcls_subtable_lookup_fn fns[DPCLS_IMPL_COUNT];
};

struct vsw_dpcls {
	struct dpcls_subtable **subtables; /* lookup order */
	uint32_t n_subtables;
	uint32_t cap;
	uint32_t n_rules;
};

/* Hash of n 64-bit words; every implementation must use this one. */
static inline __attribute__((always_inline)) uint32_t
dpcls_hash_words(const uint64_t *w, unsigned n, uint64_t basis)
{
	uint64_t h = basis;
	unsigned i;

	for (i = 0; i < n; i++) {
		h ^= w[i];
		h *= 0x9e3779b97f4a7c15ull;
		h ^= h >> 32;
	}
	h *= 0xd6e8feb86659fd93ull;
	return (uint32_t)(h ^ (h >> 32));
}

#define DPCLS_HASH_BASIS 0x2545f4914f6cdd1dull

static inline __attribute__((always_inline)) bool
dpcls_words_eq(const uint64_t *a, const uint64_t *b, unsigned n)
{
	uint64_t diff = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		diff |= a[i] ^ b[i];
	return diff == 0;
}

/*
 * The portable lookup body, two passes over the burst: pass 1 masks, packs
 * and hashes every key and prefetches its bucket; pass 2 walks the chains.
 * n_words is a compile-time constant in the unrolled instantiations.
 */
static inline __attribute__((always_inline)) uint32_t
dpcls_lookup_body(const struct dpcls_subtable *st,
	const struct vsw_flow_key *keys, uint32_t keys_map,
	const struct dpcls_rule **rules, const unsigned n_words)
{
	uint64_t packed[VSW_DPCLS_BURST][VSW_FLOW_KEY_WORDS];
	uint32_t hashes[VSW_DPCLS_BURST];
	uint32_t map, found = 0;
	unsigned i, j;

	for (map = keys_map; map != 0; map &= map - 1) {
		const uint64_t *w;

		i = (unsigned)__builtin_ctz(map);
		w = vsw_flow_key_words(&keys[i]);
		for (j = 0; j < n_words; j++)
			packed[i][j] = w[st->words[j]] & st->wmask[j];
		hashes[i] = dpcls_hash_words(packed[i], n_words,
			DPCLS_HASH_BASIS);
		__builtin_prefetch(&st->buckets[hashes[i] & st->bucket_mask]);
	}
	for (map = keys_map; map != 0; map &= map - 1) {
		const struct dpcls_rule *r;

		i = (unsigned)__builtin_ctz(map);
		r = st->buckets[hashes[i] & st->bucket_mask];
		for (; r != NULL; r = r->next) {
			if (r->hash == hashes[i] &&
				dpcls_words_eq(r->key, packed[i], n_words)) {
				rules[i] = r;
				found |= 1u << i;
				break;
			}
		}
	}
	return found;
}

/* Implementations (dpcls_lookup_*.c). */
uint32_t dpcls_lookup_generic(const struct dpcls_subtable *st,
	const struct vsw_flow_key *keys, uint32_t keys_map,
	const struct dpcls_rule **rules);
dpcls_subtable_lookup_fn dpcls_lookup_unrolled_resolve(unsigned n_words);
dpcls_subtable_lookup_fn dpcls_lookup_avx512_resolve(unsigned n_words);
uint32_t dpcls_lookup_autovalidator(const struct dpcls_subtable *st,
	const struct vsw_flow_key *keys, uint32_t keys_map,
	const struct dpcls_rule **rules);

/* Registry (dpcls_lookup_registry.c). */
void dpcls_subtable_resolve_fns(struct dpcls_subtable *st);
enum dpcls_impl dpcls_impl_current(void);

#endif /* VSW_DPCLS_PRIV_H */
