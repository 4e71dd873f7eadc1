/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw exact-match cache, one per PMD (never shared). Maps a full key to a user
 * pointer. Insertion probability is 1/inv_prob (0 = never insert: EMC off,
 * 1 = always; the default after create is 1). entries is rounded up to a
 * power of two (create returns NULL for 0, > 2^24, or no memory). A NULL
 * data pointer is never cached. Keys must be zero outside their fields, as
 * vsw_flow_extract() leaves them.
 */
#ifndef VSW_EMC_H
#define VSW_EMC_H

#include <stdint.h>

#include <vsw/flow.h>

struct vsw_emc;

struct vsw_emc *vsw_emc_create(uint32_t entries);
void vsw_emc_destroy(struct vsw_emc *emc);
void vsw_emc_set_insert_inv_prob(struct vsw_emc *emc, uint32_t inv_prob);
/* Look up keys for set bits of keys_map; returns the map of hits. */
uint32_t vsw_emc_lookup(struct vsw_emc *emc, const struct vsw_flow_key *keys,
	uint32_t keys_map, void **results);
void vsw_emc_insert(struct vsw_emc *emc, const struct vsw_flow_key *key,
	void *data);
/* Drop every entry (e.g. when a new rule table is published). */
void vsw_emc_flush(struct vsw_emc *emc);

#endif /* VSW_EMC_H */
