/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Exact-match cache: full flow key -> user pointer, one per PMD.
 *
 * Owned and used by exactly one thread (its PMD), so nothing here is atomic.
 * A lookup hashes the whole key (CRC32-C, one instruction per word), checks
 * the stored hash and compares the 64 bytes with four SSE XORs; across a
 * burst the hashes and the entries' prefetches come first, the compares
 * after, so the entries' cache misses overlap.
 * Each key has two candidate slots (two slices of its hash); insertion
 * replaces an empty or the same-key slot, else the slot whose stored hash is
 * smaller (a cheap pseudo-random choice). Insertion happens with probability
 * 1/inv_prob so that a flood of short flows does not thrash the cache
 * (0 = never: the cache is off). Trusts its callers' keys to be fully zeroed
 * outside the fields (vsw_flow_extract guarantees it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <vsw/emc.h>

#include "dpcls_priv.h"

#if defined(__SSE4_2__) || defined(__SSE4_1__)
#include <nmmintrin.h>
#endif

#define EMC_HASH_BASIS 0x6a09e667f3bcc908ull

struct emc_entry {
	struct vsw_flow_key key;
	void *data; /* NULL: empty */
	uint32_t hash;
} __attribute__((aligned(64)));

struct vsw_emc {
	struct emc_entry *entries;
	uint32_t mask;
	uint32_t insert_thresh; /* insert when rand <= thresh */
	bool off;
	uint64_t rng; /* xorshift64 state */
};

struct vsw_emc *
vsw_emc_create(uint32_t entries)
{
	struct vsw_emc *emc;
	uint32_t n = 2;

	if (entries == 0 || entries > (1u << 24))
		return NULL;
	while (n < entries)
		n <<= 1;
	emc = calloc(1, sizeof(*emc));
	if (emc == NULL)
		return NULL;
	emc->entries = aligned_alloc(64, (size_t)n * sizeof(struct emc_entry));
	if (emc->entries == NULL) {
		free(emc);
		return NULL;
	}
	emc->mask = n - 1;
	emc->rng = 0x853c49e6748fea9bull ^ (uintptr_t)emc;
	vsw_emc_set_insert_inv_prob(emc, 1);
	vsw_emc_flush(emc);
	return emc;
}

void
vsw_emc_destroy(struct vsw_emc *emc)
{
	if (emc == NULL)
		return;
	free(emc->entries);
	free(emc);
}

void
vsw_emc_set_insert_inv_prob(struct vsw_emc *emc, uint32_t inv_prob)
{
	emc->off = inv_prob == 0;
	emc->insert_thresh = inv_prob == 0 ? 0 : UINT32_MAX / inv_prob;
}

void
vsw_emc_flush(struct vsw_emc *emc)
{
	memset(emc->entries, 0,
		(size_t)(emc->mask + 1) * sizeof(struct emc_entry));
}

/*
 * VSW_EMC_TEST_HASH: every hash is ANDed with emc_test_hash_mask, so that
 * distinct keys share hashes and slots at will and only the key compare
 * keeps them apart (test_emc's collision copy). libvsw_flow never has it.
 */
#ifdef VSW_EMC_TEST_HASH
extern uint32_t emc_test_hash_mask;
#define EMC_HASH_FINISH(h) (emc_test_hash_mask & (h))
#else
#define EMC_HASH_FINISH(h) (h)
#endif

static inline __attribute__((always_inline)) uint32_t
emc_hash(const struct vsw_flow_key *key)
{
	const uint64_t *w = vsw_flow_key_words(key);
#ifdef __SSE4_2__
	/*
	 * CRC32-C over the eight words, as OVS hashes its miniflow with SSE4.2:
	 * eight crc32 instructions with their loads folded in; consecutive
	 * keys of a burst overlap in the pipeline. Collisions only cost a miss
	 * (the key is compared), so crafted colliding keys can at worst defeat
	 * the cache, which many distinct flows can do anyway.
	 */
	uint64_t h = EMC_HASH_BASIS;
	unsigned i;

#pragma GCC unroll 8
	for (i = 0; i < VSW_FLOW_KEY_WORDS; i++)
		h = _mm_crc32_u64(h, w[i]);
	return EMC_HASH_FINISH((uint32_t)h);
#else
	/* Four independent products of word pairs (NH-style), folded. */
	uint64_t h;

	h = (w[0] + 0x9e3779b97f4a7c15ull) * (w[1] + 0xbf58476d1ce4e5b9ull) +
	    (w[2] + 0x94d049bb133111ebull) * (w[3] + 0x2545f4914f6cdd1dull) +
	    (w[4] + 0xd6e8feb86659fd93ull) * (w[5] + 0xa0761d6478bd642full) +
	    (w[6] + 0xe7037ed1a0b428dbull) * (w[7] + EMC_HASH_BASIS);
	h ^= h >> 32;
	h *= 0xff51afd7ed558ccdull;
	return EMC_HASH_FINISH((uint32_t)(h ^ (h >> 29)));
#endif
}

/* Whole-key equality: four 16-byte XORs ORed and one test (both keys are
 * 64-byte aligned), instead of a word loop -O2 leaves rolled. */
static inline __attribute__((always_inline)) bool
emc_key_eq(const struct vsw_flow_key *a, const struct vsw_flow_key *b)
{
#ifdef __SSE4_1__
	const __m128i *x = (const __m128i *)(const void *)a;
	const __m128i *y = (const __m128i *)(const void *)b;
	__m128i d0 = _mm_xor_si128(_mm_load_si128(x), _mm_load_si128(y));
	__m128i d1 = _mm_xor_si128(_mm_load_si128(x + 1), _mm_load_si128(y + 1));
	__m128i d2 = _mm_xor_si128(_mm_load_si128(x + 2), _mm_load_si128(y + 2));
	__m128i d3 = _mm_xor_si128(_mm_load_si128(x + 3), _mm_load_si128(y + 3));

	d0 = _mm_or_si128(_mm_or_si128(d0, d1), _mm_or_si128(d2, d3));
	return _mm_testz_si128(d0, d0) != 0;
#else
	return dpcls_words_eq(vsw_flow_key_words(a), vsw_flow_key_words(b),
		VSW_FLOW_KEY_WORDS);
#endif
}

static inline uint32_t
emc_slot2(uint32_t hash)
{
	/* Second slot from other hash bits, never equal to the first. */
	return hash ^ (((hash >> 16) | 1u));
}

uint32_t
vsw_emc_lookup(struct vsw_emc *emc, const struct vsw_flow_key *keys,
	uint32_t keys_map, void **results)
{
	/* Locals: the stores to results[] would make the compiler reload
	 * emc's fields for every packet. */
	const struct emc_entry *const ents = emc->entries;
	const uint32_t mask = emc->mask;
	uint32_t hashes[VSW_DPCLS_BURST];
	const struct emc_entry *e;
	uint32_t map, hits = 0;
	unsigned i;

	for (map = keys_map; map != 0; map &= map - 1) {
		i = (unsigned)__builtin_ctz(map);
		hashes[i] = emc_hash(&keys[i]);
		/* An entry is two lines: the key, then hash and data. */
		e = &ents[hashes[i] & mask];
		__builtin_prefetch(e);
		__builtin_prefetch(&e->data);
	}
	for (map = keys_map; map != 0; map &= map - 1) {
		uint32_t h;

		i = (unsigned)__builtin_ctz(map);
		h = hashes[i];
		e = &ents[h & mask];
		if (e->hash != h || e->data == NULL ||
			!emc_key_eq(&e->key, &keys[i])) {
			e = &ents[emc_slot2(h) & mask];
			if (e->hash != h || e->data == NULL ||
				!emc_key_eq(&e->key, &keys[i]))
				continue;
		}
		results[i] = e->data;
		hits |= 1u << i;
	}
	return hits;
}

static inline uint32_t
emc_rand(struct vsw_emc *emc)
{
	uint64_t x = emc->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	emc->rng = x;
	return (uint32_t)(x >> 32);
}

void
vsw_emc_insert(struct vsw_emc *emc, const struct vsw_flow_key *key, void *data)
{
	struct emc_entry *a, *b, *victim;
	uint32_t h;

	if (emc->off || data == NULL || emc_rand(emc) > emc->insert_thresh)
		return;
	h = emc_hash(key);
	a = &emc->entries[h & emc->mask];
	b = &emc->entries[emc_slot2(h) & emc->mask];
	if (a->data != NULL && a->hash == h && emc_key_eq(&a->key, key))
		victim = a;
	else if (b->data != NULL && b->hash == h && emc_key_eq(&b->key, key))
		victim = b;
	else if (a->data == NULL)
		victim = a;
	else if (b->data == NULL)
		victim = b;
	else
		victim = a->hash <= b->hash ? a : b;
	victim->key = *key;
	victim->hash = h;
	victim->data = data;
}
