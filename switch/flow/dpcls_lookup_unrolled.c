/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Specialised subtable lookups for the common mask shapes: masks that touch
 * 1, 2, 3 or 4 of the key's eight words (e.g. in_port + dl_type, the IPv4
 * 5-tuple) get the lookup body with the word count as a compile-time
 * constant, so the mask/pack/hash/compare loops unroll. Other shapes fall
 * back to the generic lookup. Runs on PMDs; reads only the subtable.
 */
#include "dpcls_priv.h"

#define DPCLS_UNROLLED(N)                                                  \
	static uint32_t dpcls_lookup_w##N(const struct dpcls_subtable *st, \
		const struct vsw_flow_key *keys, uint32_t keys_map,        \
		const struct dpcls_rule **rules)                           \
	{                                                                  \
		return dpcls_lookup_body(st, keys, keys_map, rules, N);    \
	}

DPCLS_UNROLLED(1)
DPCLS_UNROLLED(2)
DPCLS_UNROLLED(3)
DPCLS_UNROLLED(4)

dpcls_subtable_lookup_fn
dpcls_lookup_unrolled_resolve(unsigned n_words)
{
	switch (n_words) {
	case 1:
		return dpcls_lookup_w1;
	case 2:
		return dpcls_lookup_w2;
	case 3:
		return dpcls_lookup_w3;
	case 4:
		return dpcls_lookup_w4;
	default:
		return dpcls_lookup_generic;
	}
}
