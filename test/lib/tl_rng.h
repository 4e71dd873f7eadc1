/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The test RNG (vsw_testlib): xorshift64*, reproducible from its seed.
 * Tests seed it with tl_rng_init, which takes VSW_TEST_SEED from the
 * environment when set and prints the seed, so every failure can be
 * replayed; benchmarks use tl_rng_seed (fixed, silent). libc only.
 */
#ifndef VSW_TEST_TL_RNG_H
#define VSW_TEST_TL_RNG_H

#include <stdint.h>

struct tl_rng {
	uint64_t s;
};

/* Seed r (0 is replaced: xorshift would stay at 0). */
void tl_rng_seed(struct tl_rng *r, uint64_t seed);
/*
 * Seed r from VSW_TEST_SEED if set, else from seed; print
 * "NAME: seed 0x... (VSW_TEST_SEED to repeat)". Returns the seed used.
 */
uint64_t tl_rng_init(struct tl_rng *r, const char *name, uint64_t seed);
uint64_t tl_rand(struct tl_rng *r);
/* The high 32 bits of tl_rand (the best-mixed ones). */
uint32_t tl_rand32(struct tl_rng *r);
/* Uniform in [lo, hi]. */
uint32_t tl_rand_range(struct tl_rng *r, uint32_t lo, uint32_t hi);
void tl_rand_bytes(struct tl_rng *r, uint8_t *p, uint32_t len);

#endif /* VSW_TEST_TL_RNG_H */
