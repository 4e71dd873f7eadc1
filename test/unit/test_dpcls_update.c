/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Classifier rule sets that change, against the reference (dpcls_ref.c):
 * rules removed (whole subtables too), a clone that answers like the
 * original and independently of it, and lookups from two threads while
 * the implementation is switched back and forth. Run from test_dpcls.c's
 * main, in its table's order.
 */
#include <errno.h>
#include <pthread.h>
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
check_some(const struct ref *ref, const struct vsw_dpcls *cls, unsigned n)
{
	struct keyset ks;
	unsigned b;

	keyset_make(&ks, ref, n);
	for (b = 0; b < ks.n / 32; b++)
		check_burst(ref, cls, &ks, b, vsw_dpcls_impl_get());
	keyset_free(&ks);
}

static void
ref_remove(struct ref *ref, struct vsw_dpcls *cls, unsigned i)
{
	struct ref_rule *r = &ref->r[i];

	assert_int_equal(vsw_dpcls_remove(cls, &r->key, &r->mask, r->prio), 0);
	r->live = 0;
	assert_int_equal(
		vsw_dpcls_remove(cls, &r->key, &r->mask, r->prio), -ENOENT);
}

void
test_insert_remove_clone(void **state)
{
	static struct ref ref, saved;
	struct vsw_dpcls *cls = vsw_dpcls_create(), *copy;
	unsigned i;

	(void)state;
	ref_build(&ref, cls, 16, 600, 6);
	/* Remove about half, including whole subtables' worth of rules. */
	for (i = 0; i < ref.n; i++)
		if (ref.r[i].live && rnd() % 2)
			ref_remove(&ref, cls, i);
	assert_int_equal(vsw_dpcls_n_rules(cls), ref_live(&ref));
	assert_int_equal(vsw_dpcls_n_subtables(cls), ref_live_masks(&ref));
	check_some(&ref, cls, 20000);

	/* A wrong priority or mask does not remove anything. */
	for (i = 0; i < ref.n && !ref.r[i].live; i++)
		;
	assert_true(i < ref.n);
	assert_int_equal(vsw_dpcls_remove(cls, &ref.r[i].key, &ref.r[i].mask,
				 ref.r[i].prio + 1000),
		-ENOENT);

	/* A clone answers like the original, and independently of it. */
	copy = vsw_dpcls_clone(cls);
	assert_non_null(copy);
	saved = ref;
	for (i = 0; i < ref.n; i++)
		if (ref.r[i].live)
			ref_remove(&ref, cls, i);
	assert_int_equal(vsw_dpcls_n_rules(cls), 0);
	assert_int_equal(vsw_dpcls_n_subtables(cls), 0);
	check_some(&ref, cls, 2048);
	assert_int_equal(vsw_dpcls_n_rules(copy), ref_live(&saved));
	check_some(&saved, copy, 20000);
	/* Refill the original; the clone is unaffected. */
	for (i = 0; i < 50; i++) {
		struct vsw_flow_key k;

		small_key(&k);
		ref_insert(&ref, cls, &k, &ref.masks[rnd() % ref.n_masks],
			random_prio(6));
	}
	check_some(&ref, cls, 20000);
	check_some(&saved, copy, 4096);
	vsw_dpcls_destroy(copy);
	vsw_dpcls_destroy(cls);
}

struct reader {
	const struct ref *ref;
	const struct vsw_dpcls *cls;
	const struct keyset *ks;
	unsigned long bad;
};

static _Atomic unsigned readers_running;

static void *
reader_main(void *arg)
{
	struct reader *rd = arg;
	struct vsw_dpcls_lookup_stats st = {0};
	unsigned pass, b;
	uint32_t found;

	for (pass = 0; pass < 3; pass++)
		for (b = 0; b < rd->ks->n / 32; b++)
			rd->bad += burst_errors(rd->ref, rd->cls, rd->ks, b,
				"concurrent", &st, &found);
	readers_running--;
	return NULL;
}

/*
 * Two threads look up in one classifier while the main thread switches
 * the implementation back and forth: every answer stays right.
 */
void
test_concurrent_impl_switch(void **state)
{
	static struct ref ref;
	struct vsw_dpcls *cls = vsw_dpcls_create();
	const char *names[8], *saved = vsw_dpcls_impl_get();
	unsigned n = vsw_dpcls_impl_list(names, 8), i, t;
	struct reader rd[2];
	pthread_t th[2];
	struct keyset ks;

	(void)state;
	ref_build(&ref, cls, 16, 300, 4);
	keyset_make(&ks, &ref, 16384);
	readers_running = 2;
	for (t = 0; t < 2; t++) {
		rd[t] = (struct reader){&ref, cls, &ks, 0};
		assert_int_equal(
			pthread_create(&th[t], NULL, reader_main, &rd[t]), 0);
	}
	for (i = 0; readers_running > 0; i++)
		assert_int_equal(vsw_dpcls_impl_set(names[i % n]), 0);
	print_message("# %u implementation switches during the lookups\n", i);
	for (t = 0; t < 2; t++) {
		assert_int_equal(pthread_join(th[t], NULL), 0);
		assert_int_equal(rd[t].bad, 0);
	}
	assert_int_equal(vsw_dpcls_impl_set(saved), 0);
	keyset_free(&ks);
	vsw_dpcls_destroy(cls);
}
