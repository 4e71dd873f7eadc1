/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AVX-512 subtable lookup. A whole 64-byte key is one zmm register: one AND
 * applies the mask, one compress packs the mask's words (the same packed
 * layout the generic lookup builds word by word), and one masked compare
 * checks a candidate rule. Built in its own static library with
 * -mavx512f -mavx512vl; only called after the registry's probe saw both.
 * Runs on PMDs; reads only the subtable.
 */
#include <immintrin.h>

#include "dpcls_priv.h"

static inline __attribute__((always_inline)) bool
avx512_key_eq(const struct dpcls_rule *r, __m512i k, __mmask8 nmask)
{
	__m512i rk = _mm512_maskz_loadu_epi64(nmask, r->key);

	return _mm512_mask_cmpneq_epi64_mask(nmask, k, rk) == 0;
}

/* Four way hashes in one compare, then the overflow chain. */
static inline __attribute__((always_inline)) const struct dpcls_rule *
avx512_bucket_find(
	const struct dpcls_bucket *b, uint32_t hash, __m512i k, __mmask8 nmask)
{
	const struct dpcls_rule *r;
	__mmask8 ways;

	_Static_assert(DPCLS_BUCKET_WAYS == 4, "one xmm of way hashes");
	ways = _mm_cmpeq_epi32_mask(_mm_load_si128((const void *)b->hash),
		_mm_set1_epi32((int)hash));
	for (; ways != 0; ways &= (__mmask8)(ways - 1)) {
		r = b->rule[__builtin_ctz(ways)];
		if (r != NULL && avx512_key_eq(r, k, nmask))
			return r;
	}
	for (r = b->overflow; r != NULL; r = r->next)
		if (r->hash == hash && avx512_key_eq(r, k, nmask))
			return r;
	return NULL;
}

static inline __attribute__((always_inline)) uint32_t
avx512_body(const struct dpcls_subtable *st, const struct vsw_flow_key *keys,
	uint32_t keys_map, const struct dpcls_rule **rules, const unsigned n)
{
	uint64_t packed[VSW_DPCLS_BURST][VSW_FLOW_KEY_WORDS]
		__attribute__((aligned(64)));
	uint32_t hashes[VSW_DPCLS_BURST];
	const __m512i mask = _mm512_loadu_si512(&st->mask);
	const __mmask8 nmask = (__mmask8)((1u << n) - 1);
	uint32_t map, found = 0;
	unsigned i;

	for (map = keys_map; map != 0; map &= map - 1) {
		__m512i k;

		i = (unsigned)__builtin_ctz(map);
		k = _mm512_and_si512(_mm512_load_si512(&keys[i]), mask);
		k = _mm512_maskz_compress_epi64(st->word_map, k);
		_mm512_store_si512(packed[i], k);
		hashes[i] = dpcls_hash_words(packed[i], n, DPCLS_HASH_BASIS);
		__builtin_prefetch(&st->buckets[hashes[i] & st->bucket_mask]);
	}
	for (map = keys_map; map != 0; map &= map - 1) {
		const struct dpcls_rule *r;
		__m512i k;

		i = (unsigned)__builtin_ctz(map);
		k = _mm512_load_si512(packed[i]);
		r = avx512_bucket_find(
			&st->buckets[hashes[i] & st->bucket_mask], hashes[i], k,
			nmask);
		if (r != NULL) {
			rules[i] = r;
			found |= 1u << i;
		}
	}
	return found;
}

#define DPCLS_AVX512(N)                                             \
	static uint32_t dpcls_lookup_avx512_w##N(                   \
		const struct dpcls_subtable *st,                    \
		const struct vsw_flow_key *keys, uint32_t keys_map, \
		const struct dpcls_rule **rules)                    \
	{                                                           \
		return avx512_body(st, keys, keys_map, rules, N);   \
	}

DPCLS_AVX512(0)
DPCLS_AVX512(1)
DPCLS_AVX512(2)
DPCLS_AVX512(3)
DPCLS_AVX512(4)
DPCLS_AVX512(5)
DPCLS_AVX512(6)
DPCLS_AVX512(7)
DPCLS_AVX512(8)

dpcls_subtable_lookup_fn
dpcls_lookup_avx512_resolve(unsigned n_words)
{
	static const dpcls_subtable_lookup_fn fns[] = {
		dpcls_lookup_avx512_w0,
		dpcls_lookup_avx512_w1,
		dpcls_lookup_avx512_w2,
		dpcls_lookup_avx512_w3,
		dpcls_lookup_avx512_w4,
		dpcls_lookup_avx512_w5,
		dpcls_lookup_avx512_w6,
		dpcls_lookup_avx512_w7,
		dpcls_lookup_avx512_w8,
	};

	return n_words < sizeof(fns) / sizeof(fns[0]) ? fns[n_words] : NULL;
}
