/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests for the classifier (switch/dpcls*.c); the exact-match cache
 * has test_emc.c, rule sets that change (removal, clones, implementation
 * switches under lookups) test_dpcls_update.c.
 *
 * The oracle is a linear scan over the test's own list of rules
 * (dpcls_ref.c): a key's answer is a rule that matches it with the highest
 * priority among all matching rules (among equal priorities any matching
 * one is accepted, as the API documents). Random rule sets with
 * overlapping masks, many ties and priorities over the whole int32 range;
 * random, rule-derived and crafted keys; >= 100 000 lookups per
 * configuration for every lookup implementation, the autovalidator
 * included.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <vsw/dpcls.h>

#include "dpcls_ref.h"

static void
run_config(
	unsigned n_masks, unsigned n_rules, unsigned prio_range, int catch_all)
{
	static struct ref ref;
	struct vsw_dpcls *cls = vsw_dpcls_create();
	struct keyset ks;

	assert_non_null(cls);
	ref_build(&ref, cls, n_masks, n_rules, prio_range);
	if (catch_all) {
		/* A default rule: empty mask, matches everything. */
		struct vsw_flow_mask none;
		struct vsw_flow_key k;

		memset(&none, 0, sizeof(none));
		small_key(&k);
		ref_insert(&ref, cls, &k, &none, -2);
	}
	assert_int_equal(vsw_dpcls_n_rules(cls), ref_live(&ref));
	assert_int_equal(vsw_dpcls_n_subtables(cls), ref_live_masks(&ref));
	keyset_make(&ks, &ref, N_LOOKUPS * 6 / 5 / 32 * 32);
	{
		unsigned i, hits = 0, mapped = 0;

		for (i = 0; i < ks.n; i++) {
			hits += ks.best[i] >= 0;
			mapped += (unsigned)(ks.maps[i / 32] >> (i % 32) & 1);
		}
		printf("# %u subtables, %u rules: %u of %u keys match, "
		       "%u looked up per impl\n",
			vsw_dpcls_n_subtables(cls), vsw_dpcls_n_rules(cls),
			hits, ks.n, mapped);
		/* A configuration where nothing (or everything) hits tests
		 * little. */
		assert_true(hits > ks.n / 10 && (hits < ks.n || catch_all));
		assert_true(mapped >= N_LOOKUPS);
	}
	check_all_impls(&ref, cls, &ks);
	keyset_free(&ks);
	vsw_dpcls_destroy(cls);
}

static void
test_one_rule(void **state)
{
	(void)state;
	run_config(1, 1, 1, 0);
}

static void
test_ties_4x100(void **state)
{
	(void)state;
	run_config(4, 100, 1, 0);
}

static void
test_ties_8x300(void **state)
{
	(void)state;
	run_config(8, 300, 2, 0);
}

static void
test_prio_16x500(void **state)
{
	(void)state;
	run_config(16, 500, 8, 0);
}

static void
test_prio_64x1000(void **state)
{
	(void)state;
	run_config(64, 1000, 0, 0);
}

/* A catch-all rule below overlapping ones (and a zero-word subtable). */
static void
test_default_rule_12x400(void **state)
{
	(void)state;
	run_config(12, 400, 5, 1);
}

/* Every subtable spans the full key width (8-word pack, hash, compare). */
static void
test_wide_8x300(void **state)
{
	(void)state;
	wide_masks = 1;
	run_config(8, 300, 4, 0);
	wide_masks = 0;
}

static void
test_empty(void **state)
{
	struct vsw_dpcls *cls = vsw_dpcls_create();
	struct vsw_flow_key keys[32];
	struct vsw_flow_mask m;
	void *res[32];

	(void)state;
	memset(keys, 0, sizeof(keys));
	memset(&m, 0xff, sizeof(m));
	assert_int_equal(vsw_dpcls_lookup(cls, keys, UINT32_MAX, res, NULL), 0);
	assert_int_equal(vsw_dpcls_remove(cls, &keys[0], &m, 0), -ENOENT);
	assert_int_equal(vsw_dpcls_n_rules(cls), 0);
	vsw_dpcls_destroy(cls);
}

static void
test_replace_and_same_key(void **state)
{
	struct vsw_dpcls *cls = vsw_dpcls_create();
	struct vsw_flow_key k = {0};
	struct vsw_flow_mask m = {0};
	void *res[32];

	(void)state;
	m.m.tp_dst = 0xffff;
	k.tp_dst = 80;
	assert_int_equal(vsw_dpcls_insert(cls, &k, &m, 5, (void *)1), 0);
	assert_int_equal(vsw_dpcls_insert(cls, &k, &m, 5, (void *)2), 0);
	assert_int_equal(vsw_dpcls_n_rules(cls), 1);
	assert_int_equal(vsw_dpcls_lookup(cls, &k, 1, res, NULL), 1);
	assert_ptr_equal(res[0], (void *)2);
	/* Same masked key, several priorities: best wins, then the next. */
	assert_int_equal(vsw_dpcls_insert(cls, &k, &m, 9, (void *)3), 0);
	assert_int_equal(vsw_dpcls_insert(cls, &k, &m, 7, (void *)4), 0);
	assert_int_equal(vsw_dpcls_n_rules(cls), 3);
	assert_int_equal(vsw_dpcls_n_subtables(cls), 1);
	vsw_dpcls_lookup(cls, &k, 1, res, NULL);
	assert_ptr_equal(res[0], (void *)3);
	assert_int_equal(vsw_dpcls_remove(cls, &k, &m, 9), 0);
	vsw_dpcls_lookup(cls, &k, 1, res, NULL);
	assert_ptr_equal(res[0], (void *)4);
	assert_int_equal(vsw_dpcls_remove(cls, &k, &m, 5), 0);
	vsw_dpcls_lookup(cls, &k, 1, res, NULL);
	assert_ptr_equal(res[0], (void *)4);
	assert_int_equal(vsw_dpcls_remove(cls, &k, &m, 7), 0);
	assert_int_equal(vsw_dpcls_lookup(cls, &k, 1, res, NULL), 0);
	assert_int_equal(vsw_dpcls_n_subtables(cls), 0);
	vsw_dpcls_destroy(cls);
}

/*
 * Two equal-priority subtables, keys that only match the second one: each
 * key visits both. After re-ranking with the hit counts the lookup
 * collected, the busy subtable goes first and each key visits one.
 * A higher-priority subtable stays first whatever its hits.
 */
static void
test_early_exit_rerank(void **state)
{
	struct vsw_dpcls *cls = vsw_dpcls_create(), *copy;
	struct vsw_flow_mask ma = {0}, mb = {0};
	struct vsw_flow_key keys[32], k = {0};
	struct vsw_dpcls_lookup_stats st = {0};
	uint64_t hits[2] = {0, 0};
	void *res[32];
	unsigned i;

	(void)state;
	ma.m.in_port = 0xffff;
	mb.m.tp_dst = 0xffff;
	k.in_port = 1;
	assert_int_equal(vsw_dpcls_insert(cls, &k, &ma, 10, (void *)1), 0);
	k.in_port = 0;
	k.tp_dst = 53;
	assert_int_equal(vsw_dpcls_insert(cls, &k, &mb, 10, (void *)2), 0);
	memset(keys, 0, sizeof(keys));
	for (i = 0; i < 32; i++) {
		keys[i].in_port = 2;
		keys[i].tp_dst = 53;
	}
	st.subtable_hits = hits;
	st.n_subtable_hits = 2;
	assert_int_equal(
		vsw_dpcls_lookup(cls, keys, UINT32_MAX, res, &st), UINT32_MAX);
	assert_int_equal(st.subtable_lookups, 64);
	assert_true(hits[0] == 0 && hits[1] == 32);
	copy = vsw_dpcls_clone(cls);
	assert_int_equal(vsw_dpcls_rerank(copy, hits, 2), 0);
	assert_int_equal(vsw_dpcls_rerank(copy, hits, 3), -EINVAL);
	memset(&st, 0, sizeof(st));
	assert_int_equal(
		vsw_dpcls_lookup(copy, keys, UINT32_MAX, res, &st), UINT32_MAX);
	assert_int_equal(st.subtable_lookups, 32);
	assert_ptr_equal(res[7], (void *)2);
	/* Keys matching both: equal priority, early exit after the first. */
	for (i = 0; i < 32; i++)
		keys[i].in_port = 1;
	memset(&st, 0, sizeof(st));
	vsw_dpcls_lookup(copy, keys, UINT32_MAX, res, &st);
	assert_int_equal(st.subtable_lookups, 32);
	/* A higher priority in the idle subtable puts it back in front. */
	k.in_port = 1;
	k.tp_dst = 0;
	assert_int_equal(vsw_dpcls_insert(copy, &k, &ma, 11, (void *)3), 0);
	memset(&st, 0, sizeof(st));
	vsw_dpcls_lookup(copy, keys, UINT32_MAX, res, &st);
	assert_int_equal(st.subtable_lookups, 32);
	assert_ptr_equal(res[0], (void *)3);
	hits[0] = 0;
	hits[1] = 1000;
	assert_int_equal(vsw_dpcls_rerank(copy, hits, 2), 0);
	memset(&st, 0, sizeof(st));
	vsw_dpcls_lookup(copy, keys, UINT32_MAX, res, &st);
	assert_ptr_equal(res[0], (void *)3);
	assert_int_equal(st.subtable_lookups, 32);
	vsw_dpcls_destroy(copy);
	vsw_dpcls_destroy(cls);
}

/* VSW_CPU_HIDE=...avx512... (./vswdev test): AVX-512 lookups are off. */
static void
test_cpu_hide_env(void **state)
{
	const char *env = getenv("VSW_CPU_HIDE"), *names[8];
	unsigned n = vsw_dpcls_impl_list(names, 8), i;

	(void)state;
	if (env == NULL || strstr(env, "avx512") == NULL)
		skip();
	printf("# VSW_CPU_HIDE=%s: classifier starts on %s\n", env,
		vsw_dpcls_impl_get());
	for (i = 0; i < n; i++)
		assert_string_not_equal(names[i], "avx512");
	assert_string_not_equal(vsw_dpcls_impl_get(), "avx512");
	assert_int_equal(vsw_dpcls_impl_set("avx512"), -ENOTSUP);
}

static void
test_impl_api(void **state)
{
	const char *names[8], *saved = vsw_dpcls_impl_get();
	unsigned n = vsw_dpcls_impl_list(names, 8), i, seen = 0;

	(void)state;
	for (i = 0; i < n; i++) {
		seen |= strcmp(names[i], "generic") == 0 ? 1u : 0;
		seen |= strcmp(names[i], "unrolled") == 0 ? 2u : 0;
		seen |= strcmp(names[i], "autovalidator") == 0 ? 4u : 0;
	}
	assert_int_equal(seen, 7);
	assert_int_equal(vsw_dpcls_impl_list(names, 1), 1);
	assert_int_equal(vsw_dpcls_impl_set("no-such-impl"), -ENOENT);
	assert_string_equal(vsw_dpcls_impl_get(), saved);
	/* avx512 is listed and selectable only where the CPU can run it. */
	for (i = 0; i < n && strcmp(names[i], "avx512") != 0; i++)
		;
	if (i == n) {
		assert_int_equal(vsw_dpcls_impl_set("avx512"), -ENOTSUP);
	} else {
#if defined(__x86_64__)
		assert_true(__builtin_cpu_supports("avx512f") &&
			    __builtin_cpu_supports("avx512vl"));
#endif
		assert_int_equal(vsw_dpcls_impl_set("avx512"), 0);
		assert_int_equal(vsw_dpcls_impl_set(saved), 0);
	}
#ifdef VSW_TEST_VALIDATOR_DEFAULT
	assert_string_equal(saved, "autovalidator");
#endif
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_hide_env),
		cmocka_unit_test(test_impl_api),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_replace_and_same_key),
		cmocka_unit_test(test_early_exit_rerank),
		cmocka_unit_test(test_one_rule),
		cmocka_unit_test(test_ties_4x100),
		cmocka_unit_test(test_ties_8x300),
		cmocka_unit_test(test_prio_16x500),
		cmocka_unit_test(test_prio_64x1000),
		cmocka_unit_test(test_default_rule_12x400),
		cmocka_unit_test(test_wide_8x300),
		cmocka_unit_test(test_insert_remove_clone),
		cmocka_unit_test(test_concurrent_impl_switch),
	};

	/* The configurations' sanity checks (some keys hit, not all) hold
	 * for this seed, not for every seed (about 1 in 5 fails them). */
	tl_rng_init(&test_rng, "test_dpcls", 0x9e3779b97f4a7c15ull);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
