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
 * sorted by descending priority; only its head is in the hash table (a
 * bucket way or the bucket's overflow chain), so a lookup stops at the
 * first key match.
 */
struct dpcls_rule {
	struct dpcls_rule *next;  /* overflow chain (heads only), else NULL */
	struct dpcls_rule *lower; /* same masked key, lower priority */
	void *data;
	int32_t priority;
	uint32_t hash;
	uint64_t key[]; /* the subtable's n_words masked words, packed */
};

/*
 * A hash bucket is one cache line: the hashes of up to four chain heads next
 * to their pointers, so a lookup that misses reads one line and no rule.
 * Heads that do not fit go on the overflow chain (rule->next); the table
 * grows at two heads per bucket on average, so the chain is rarely used.
 * A free way has rule == NULL (its hash is stale).
 */
#define DPCLS_BUCKET_WAYS 4

struct dpcls_bucket {
	uint32_t hash[DPCLS_BUCKET_WAYS];
	struct dpcls_rule *rule[DPCLS_BUCKET_WAYS];
	struct dpcls_rule *overflow;
} __attribute__((aligned(64)));

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
	uint8_t word_map; /* bit i: word i is in the mask */
	int32_t max_priority;
	uint32_t n_rules; /* all rules */
	uint32_t n_heads; /* distinct masked keys (hash entries) */
	uint32_t bucket_mask;
	struct dpcls_bucket *buckets;
	/* Per implementation, resolved for this mask shape at creation. */
	dpcls_subtable_lookup_fn fns[DPCLS_IMPL_COUNT];
};

struct vsw_dpcls {
	struct dpcls_subtable **subtables; /* lookup order */
	uint32_t n_subtables;
	uint32_t cap;
	uint32_t n_rules;
};

/*
 * Hash of n 64-bit words; every implementation must use this one. Word
 * pairs are multiplied independently (NH-style) so the multiplies overlap
 * instead of forming an n-step chain; a final mix folds the high bits down.
 * Collisions cost only a longer bucket search, and only rule keys (written
 * by the control thread) share buckets, so packets cannot lengthen them.
 */
static inline __attribute__((always_inline)) uint64_t
dpcls_hash_k(unsigned i)
{
	static const uint64_t k[VSW_FLOW_KEY_WORDS + 1] = {
		0x9e3779b97f4a7c15ull,
		0xbf58476d1ce4e5b9ull,
		0x94d049bb133111ebull,
		0x2545f4914f6cdd1dull,
		0xd6e8feb86659fd93ull,
		0xa0761d6478bd642full,
		0xe7037ed1a0b428dbull,
		0x8ebc6af09c88c6e3ull,
		0x589965cc75374cc3ull,
	};

	return k[i];
}

/*
 * Test-only tiny hash. The collision test (test/unit/meson.build) compiles
 * the classifier sources a second time, into its own binary, with
 * VSW_DPCLS_TEST_HASH: every hash is then ANDed with dpcls_test_hash_mask,
 * so distinct keys share hashes at will and only the key compare can tell
 * them apart. libvsw_flow is built without the macro, where the mask is
 * the identity and the object code is unchanged.
 */
#ifdef VSW_DPCLS_TEST_HASH
extern uint32_t dpcls_test_hash_mask; /* change only with no rule stored */
#define DPCLS_HASH_FINISH(h) (dpcls_test_hash_mask & (h))
#else
#define DPCLS_HASH_FINISH(h) (h)
#endif

static inline __attribute__((always_inline)) uint32_t
dpcls_hash_words(const uint64_t *w, unsigned n, uint64_t basis)
{
	uint64_t h = basis;
	unsigned i;

	for (i = 0; i + 1 < n; i += 2)
		h += (w[i] + dpcls_hash_k(i)) *
		     (w[i + 1] + dpcls_hash_k(i + 1));
	if (n & 1)
		h += (w[n - 1] + dpcls_hash_k(n - 1)) *
		     dpcls_hash_k(VSW_FLOW_KEY_WORDS);
	h ^= h >> 32;
	h *= 0xff51afd7ed558ccdull;
	return DPCLS_HASH_FINISH((uint32_t)(h ^ (h >> 29)));
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

/* The chain head in bucket b with this hash and packed masked key. */
static inline __attribute__((always_inline)) const struct dpcls_rule *
dpcls_bucket_find(const struct dpcls_bucket *b, uint32_t hash,
	const uint64_t *packed, const unsigned n_words)
{
	const struct dpcls_rule *r;
	unsigned w;

	for (w = 0; w < DPCLS_BUCKET_WAYS; w++) {
		r = b->rule[w];
		if (b->hash[w] == hash && r != NULL &&
			dpcls_words_eq(r->key, packed, n_words))
			return r;
	}
	for (r = b->overflow; r != NULL; r = r->next)
		if (r->hash == hash && dpcls_words_eq(r->key, packed, n_words))
			return r;
	return NULL;
}

/*
 * The portable lookup body, two passes over the burst: pass 1 masks, packs
 * and hashes every key and prefetches its bucket; pass 2 searches them.
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
		hashes[i] =
			dpcls_hash_words(packed[i], n_words, DPCLS_HASH_BASIS);
		__builtin_prefetch(&st->buckets[hashes[i] & st->bucket_mask]);
	}
	for (map = keys_map; map != 0; map &= map - 1) {
		const struct dpcls_rule *r;

		i = (unsigned)__builtin_ctz(map);
		r = dpcls_bucket_find(&st->buckets[hashes[i] & st->bucket_mask],
			hashes[i], packed[i], n_words);
		if (r != NULL) {
			rules[i] = r;
			found |= 1u << i;
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

/* Storage shared by dpcls.c and its clone (dpcls_clone.c). */
struct dpcls_bucket *dpcls_buckets_alloc(uint32_t n);
struct dpcls_rule *dpcls_rule_alloc(const struct dpcls_subtable *st);
void dpcls_subtable_destroy(struct dpcls_subtable *st);

/* Registry (dpcls_lookup_registry.c). */
void dpcls_subtable_resolve_fns(struct dpcls_subtable *st);
enum dpcls_impl dpcls_impl_current(void);

#endif /* VSW_DPCLS_PRIV_H */
