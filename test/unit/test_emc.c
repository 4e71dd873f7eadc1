/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for the exact-match cache (switch/emc.c): hits return what was
 * inserted, keys one bit off never hit, re-insert replaces, flush empties,
 * and the insertion probability 1/inv_prob is met (0 = off, 1 = always);
 * in a two-entry cache (every key has both slots) a full cache replaces one
 * way and re-inserting a stored key replaces it in place.
 *
 * Built a second time (test "emc_collide") with its own copy of emc.c and
 * the hash knob VSW_EMC_TEST_HASH: the hash cut to 0..8 bits, keys one bit
 * apart share hash and slots, so only the key compare tells them apart:
 * one bit off in every byte of the key, an empty entry whose hash and key
 * match, the deterministic way choice, and random inserts and lookups of
 * near-miss keys against a reference of the last data per key.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <vsw/dpcls.h>
#include <vsw/emc.h>

#include "tl_rng.h"

static void
emc_key(struct vsw_flow_key *k, unsigned i)
{
	memset(k, 0, sizeof(*k));
	k->in_port = (uint16_t)(i % 5);
	k->dl_type = 0x0008;
	memcpy(k->nw_src, &i, sizeof(i));
	k->tp_dst = (uint16_t)(i * 7);
}

static void
test_emc_hit_miss_flush(void **state)
{
	enum { N = 256, BIG = 2048 };
	struct vsw_emc *emc = vsw_emc_create(BIG);
	struct vsw_flow_key keys[32], k;
	unsigned i, j, hit = 0;
	void *res[32];

	(void)state;
	assert_non_null(emc);
	for (i = 0; i < N; i++) {
		emc_key(&k, i);
		vsw_emc_insert(emc, &k, (void *)(uintptr_t)(i + 1));
	}
	for (i = 0; i < N; i += 32) {
		uint32_t map = i % 64 ? 0x5555aaaa : UINT32_MAX, got;

		for (j = 0; j < 32; j++) {
			emc_key(&keys[j], i + j);
			res[j] = NULL;
		}
		got = vsw_emc_lookup(emc, keys, map, res);
		assert_int_equal(got & ~map, 0);
		for (j = 0; j < 32; j++) {
			if (got >> j & 1)
				assert_ptr_equal(
					res[j], (void *)(uintptr_t)(i + j + 1));
			else
				assert_null(res[j]);
		}
		hit += (unsigned)__builtin_popcount(got);
	}
	/* Two slots per key at 1/8 load: (nearly) everything stays. */
	assert_true(hit >= N * 3 / 4 * 95 / 100);
	/* One bit off anywhere in the key: never a hit. */
	for (i = 0; i < 512; i++) {
		emc_key(&k, i % N);
		((uint8_t *)&k)[i % 64] ^= (uint8_t)(1u << (i % 8));
		assert_int_equal(vsw_emc_lookup(emc, &k, 1, res), 0);
	}
	/* Re-insert replaces the data. */
	emc_key(&k, 3);
	vsw_emc_insert(emc, &k, (void *)77);
	assert_int_equal(vsw_emc_lookup(emc, &k, 1, res), 1);
	assert_ptr_equal(res[0], (void *)77);
	vsw_emc_flush(emc);
	for (i = 0; i < N; i++) {
		emc_key(&k, i);
		assert_int_equal(vsw_emc_lookup(emc, &k, 1, res), 0);
	}
	vsw_emc_destroy(emc);
}

/*
 * Inserts that take effect out of n, for 1/inv_prob: each trial inserts one
 * key with fresh data and looks it up (a fresh insert is always found right
 * after, a skipped one leaves the previous data).
 */
static uint64_t
emc_inserts(uint32_t inv_prob, uint64_t n)
{
	struct vsw_emc *emc = vsw_emc_create(2);
	struct vsw_flow_key k;
	uint64_t i, in = 0;
	void *res[1];

	assert_non_null(emc);
	vsw_emc_set_insert_inv_prob(emc, inv_prob);
	emc_key(&k, 1);
	for (i = 0; i < n; i++) {
		res[0] = NULL;
		vsw_emc_insert(emc, &k, (void *)(uintptr_t)(i + 1));
		in += vsw_emc_lookup(emc, &k, 1, res) == 1 &&
		      res[0] == (void *)(uintptr_t)(i + 1);
	}
	vsw_emc_destroy(emc);
	return in;
}

/*
 * The count for 1/N lies within Z standard deviations of n/N, with n large
 * enough that 1/(N+1) (and so 1/(N-1)) sits 2Z deviations away: a wrong
 * probability off by one in N fails as rarely as a right one does, about
 * once in 10^9 runs at Z = 6. (The EMC seeds its generator from its own
 * address, so the trials are not the same from run to run.) n is capped for
 * large N, where the window then only rejects errors of a few percent.
 */
#define EMC_PROB_Z 6.0
#define EMC_PROB_MAX_TRIALS 20000000.0

static void
check_insert_rate(uint32_t inv_prob)
{
	double p = 1.0 / inv_prob, gap = p - 1.0 / (inv_prob + 1.0);
	double n = 4 * EMC_PROB_Z * EMC_PROB_Z * p * (1 - p) / (gap * gap);
	double mean, dev, got;

	if (n < 10000)
		n = 10000;
	if (n > EMC_PROB_MAX_TRIALS)
		n = EMC_PROB_MAX_TRIALS;
	mean = n * p;
	dev = EMC_PROB_Z * sqrt(n * p * (1 - p));
	got = (double)emc_inserts(inv_prob, (uint64_t)n);
	print_message("# 1/%u: %.0f of %.0f inserted, window %.0f +- %.0f "
		      "(1/%u would give %.0f)\n",
		inv_prob, got, n, mean, dev, inv_prob + 1, n / (inv_prob + 1));
	assert_true(got >= mean - dev && got <= mean + dev);
}

static void
test_emc_insert_probability(void **state)
{
	static const uint32_t inv[] = {2, 3, 4, 10, 40, 100};
	unsigned i;

	(void)state;
	assert_int_equal(emc_inserts(0, 10000), 0);
	assert_int_equal(emc_inserts(1, 10000), 10000);
	for (i = 0; i < sizeof(inv) / sizeof(inv[0]); i++)
		check_insert_rate(inv[i]);
}

/* In a two-entry cache both entries are every key's two slots. */
static void
test_emc_way_replaced(void **state)
{
	struct vsw_emc *emc = vsw_emc_create(2);
	struct vsw_flow_key k[3];
	void *res[1];
	unsigned i, found = 0;

	(void)state;
	assert_non_null(emc);
	for (i = 0; i < 3; i++)
		emc_key(&k[i], i + 100);
	vsw_emc_insert(emc, &k[0], (void *)1);
	vsw_emc_insert(emc, &k[1], (void *)2);
	for (i = 0; i < 2; i++) {
		assert_int_equal(vsw_emc_lookup(emc, &k[i], 1, res), 1);
		assert_ptr_equal(res[0], (void *)(uintptr_t)(i + 1));
	}
	/* Re-insert replaces in place: the other key stays. */
	for (i = 0; i < 2; i++) {
		vsw_emc_insert(emc, &k[i], (void *)(uintptr_t)(i + 11));
		assert_int_equal(vsw_emc_lookup(emc, &k[0], 1, res), 1);
		assert_ptr_equal(res[0], (void *)11);
		assert_int_equal(vsw_emc_lookup(emc, &k[1], 1, res), 1);
		assert_ptr_equal(res[0], (void *)(uintptr_t)(i ? 12 : 2));
	}
	/* Full: the third key replaces exactly one way. */
	vsw_emc_insert(emc, &k[2], (void *)3);
	assert_int_equal(vsw_emc_lookup(emc, &k[2], 1, res), 1);
	assert_ptr_equal(res[0], (void *)3);
	for (i = 0; i < 2; i++) {
		res[0] = NULL;
		if (vsw_emc_lookup(emc, &k[i], 1, res) == 1) {
			assert_ptr_equal(res[0], (void *)(uintptr_t)(i + 11));
			found++;
		}
	}
	assert_int_equal(found, 1);
	vsw_emc_destroy(emc);
}

#ifdef VSW_EMC_TEST_HASH
uint32_t emc_test_hash_mask = UINT32_MAX;

/* Every key hashes to 0: one bit off anywhere must still miss. */
static void
test_emc_collide_every_byte(void **state)
{
	struct vsw_emc *emc;
	struct vsw_flow_key k, z;
	unsigned i, b;
	void *res[1];

	(void)state;
	emc_test_hash_mask = 0;
	emc = vsw_emc_create(2);
	assert_non_null(emc);
	/* A flushed entry has hash 0 and the all-zero key, but no data. */
	memset(&z, 0, sizeof(z));
	assert_int_equal(vsw_emc_lookup(emc, &z, 1, res), 0);
	for (i = 0; i < 64; i++)
		for (b = 0; b < 8; b += 7) {
			emc_key(&k, i);
			vsw_emc_insert(emc, &k, (void *)(uintptr_t)(i + 1));
			((uint8_t *)&k)[i] ^= (uint8_t)(1u << b);
			assert_int_equal(vsw_emc_lookup(emc, &k, 1, res), 0);
			((uint8_t *)&k)[i] ^= (uint8_t)(1u << b);
			assert_int_equal(vsw_emc_lookup(emc, &k, 1, res), 1);
			assert_ptr_equal(res[0], (void *)(uintptr_t)(i + 1));
		}
	/* Hash 0: the first slot is entry 0, the second entry 1. A stored
	 * key re-inserted goes back to its own slot, never over the other. */
	vsw_emc_flush(emc);
	emc_key(&k, 1);
	emc_key(&z, 2);
	vsw_emc_insert(emc, &k, (void *)1);
	vsw_emc_insert(emc, &z, (void *)2);
	vsw_emc_insert(emc, &z, (void *)22);
	assert_int_equal(vsw_emc_lookup(emc, &k, 1, res), 1);
	assert_ptr_equal(res[0], (void *)1);
	assert_int_equal(vsw_emc_lookup(emc, &z, 1, res), 1);
	assert_ptr_equal(res[0], (void *)22);
	vsw_emc_destroy(emc);
	emc_test_hash_mask = UINT32_MAX;
}

#define COLLIDE_KEYS 24
#define COLLIDE_OPS 20000

/*
 * Random inserts and burst lookups of keys one or two bits apart, hash cut
 * to 0, 1, 3, 15, 255 bits of mask: every hit returns the data last
 * inserted for exactly that key, and a key just inserted is found.
 */
static void
test_emc_collide_random(void **state)
{
	static const uint32_t masks[] = {0, 1, 3, 15, 255, UINT32_MAX};
	static struct vsw_flow_key keys[COLLIDE_KEYS];
	struct vsw_flow_key burst[32];
	uintptr_t last[COLLIDE_KEYS];
	struct tl_rng rng;
	unsigned m, i, j, op;

	(void)state;
	tl_rng_init(&rng, "emc_collide", 0x15e3c);
	for (m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
		uint32_t entries = 1u << tl_rand_range(&rng, 1, 5);
		struct vsw_emc *emc;

		emc_test_hash_mask = masks[m];
		emc = vsw_emc_create(entries);
		assert_non_null(emc);
		emc_key(&keys[0], tl_rand32(&rng));
		for (i = 1; i < COLLIDE_KEYS; i++) {
			do { /* one bit off an earlier key, all distinct */
				unsigned bit = tl_rand_range(&rng, 0, 511);

				keys[i] = keys[tl_rand_range(&rng, 0, i - 1)];
				((uint8_t *)&keys[i])[bit / 8] ^=
					(uint8_t)(1u << bit % 8);
				for (j = 0; j < i; j++)
					if (memcmp(&keys[i], &keys[j], 64) == 0)
						break;
			} while (j < i);
		}
		memset(last, 0, sizeof(last));
		for (op = 0; op < COLLIDE_OPS; op++) {
			void *res[32];
			unsigned idx[32];
			uint32_t map, got;

			i = tl_rand_range(&rng, 0, COLLIDE_KEYS - 1);
			if (tl_rand_range(&rng, 0, 1) == 0) {
				last[i] = op + 1;
				vsw_emc_insert(emc, &keys[i], (void *)last[i]);
				assert_int_equal(
					vsw_emc_lookup(emc, &keys[i], 1, res),
					1);
				assert_ptr_equal(res[0], (void *)last[i]);
				continue;
			}
			map = tl_rand32(&rng) | 1u;
			for (j = 0; j < 32; j++) {
				idx[j] = tl_rand_range(&rng, 0, COLLIDE_KEYS - 1);
				burst[j] = keys[idx[j]];
				res[j] = NULL;
			}
			got = vsw_emc_lookup(emc, burst, map, res);
			assert_int_equal(got & ~map, 0);
			for (j = 0; j < 32; j++)
				if (got >> j & 1)
					assert_ptr_equal(
						res[j], (void *)last[idx[j]]);
				else
					assert_null(res[j]);
		}
		vsw_emc_destroy(emc);
	}
	emc_test_hash_mask = UINT32_MAX;
}
#endif /* VSW_EMC_TEST_HASH */

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emc_hit_miss_flush),
		cmocka_unit_test(test_emc_way_replaced),
#ifdef VSW_EMC_TEST_HASH
		cmocka_unit_test(test_emc_collide_every_byte),
		cmocka_unit_test(test_emc_collide_random),
#endif
		cmocka_unit_test(test_emc_insert_probability),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
