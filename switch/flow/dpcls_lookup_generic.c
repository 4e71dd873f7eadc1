/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Generic subtable lookup: any mask shape, word count read at run time.
 * The reference every other implementation is validated against. Runs on
 * PMDs; reads only the (immutable, published) subtable.
 */
#include "dpcls_priv.h"

uint32_t
dpcls_lookup_generic(const struct dpcls_subtable *st,
	const struct vsw_flow_key *keys, uint32_t keys_map,
	const struct dpcls_rule **rules)
{
	return dpcls_lookup_body(st, keys, keys_map, rules, st->n_words);
}
