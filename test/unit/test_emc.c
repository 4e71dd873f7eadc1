/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for the exact-match cache (switch/emc.c): hits return what was
 * inserted, keys one bit off never hit, re-insert replaces, flush empties,
 * and the insertion probability 1/inv_prob is met (0 = off, 1 = always).
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emc_hit_miss_flush),
		cmocka_unit_test(test_emc_insert_probability),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
