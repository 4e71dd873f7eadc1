/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for the exact-match cache (switch/emc.c): hits return what was
 * inserted, keys one bit off never hit, re-insert replaces, flush empties,
 * and the insertion probability 1/inv_prob is met (0 = off, 1 = always).
 */
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

/* Fraction of inserts that take effect, for 1/inv_prob. */
static double
emc_insert_rate(uint32_t inv_prob)
{
	struct vsw_emc *emc = vsw_emc_create(1024);
	unsigned i, n = 20000, in = 0;
	struct vsw_flow_key k;
	void *res[1];

	assert_non_null(emc);
	vsw_emc_set_insert_inv_prob(emc, inv_prob);
	for (i = 0; i < n; i++) {
		emc_key(&k, i);
		/* A fresh insert is always found right after. */
		vsw_emc_insert(emc, &k, (void *)1);
		in += vsw_emc_lookup(emc, &k, 1, res);
	}
	vsw_emc_destroy(emc);
	return (double)in / n;
}

static void
test_emc_insert_probability(void **state)
{
	double r;

	(void)state;
	assert_true(emc_insert_rate(0) == 0.0);
	assert_true(emc_insert_rate(1) == 1.0);
	r = emc_insert_rate(2);
	assert_true(r > 0.47 && r < 0.53);
	r = emc_insert_rate(10);
	assert_true(r > 0.085 && r < 0.115);
	r = emc_insert_rate(100);
	assert_true(r > 0.006 && r < 0.014);
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
