/* SPDX-License-Identifier: BSD-3-Clause */
/* The test RNG (see tl_rng.h). Test code: trusts its callers. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "tl_rng.h"

void
tl_rng_seed(struct tl_rng *r, uint64_t seed)
{
	r->s = seed != 0 ? seed : 0x9e3779b97f4a7c15ull;
}

uint64_t
tl_rng_init(struct tl_rng *r, const char *name, uint64_t seed)
{
	const char *env = getenv("VSW_TEST_SEED");

	if (env != NULL && *env != '\0')
		seed = strtoull(env, NULL, 0);
	printf("# %s: seed 0x%" PRIx64 " (VSW_TEST_SEED to repeat)\n", name,
		seed);
	fflush(stdout);
	tl_rng_seed(r, seed);
	return seed;
}

uint64_t
tl_rand(struct tl_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dull;
}

uint32_t
tl_rand32(struct tl_rng *r)
{
	return (uint32_t)(tl_rand(r) >> 32);
}

uint32_t
tl_rand_range(struct tl_rng *r, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(tl_rand(r) % ((uint64_t)hi - lo + 1));
}

void
tl_rand_bytes(struct tl_rng *r, uint8_t *p, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(tl_rand(r) >> 56);
}
