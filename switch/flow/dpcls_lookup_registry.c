/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Registry of subtable lookup implementations, and the autovalidator.
 *
 * The table below is the index of implementations: {name, probe, resolve}.
 * probe says whether this CPU/build can run it; resolve picks the function
 * for one subtable's mask shape. Every subtable resolves a function for each
 * implementation when it is created (control thread), so switching the
 * implementation at run time is one atomic store of an index, read once per
 * lookup burst by PMDs. The autovalidator is entry 0: it runs the generic
 * lookup and every other available one on the same burst, counts and logs
 * (rate-limited) any disagreement, and returns the generic result. Built
 * with -Dvalidator=true it is the default, so every test exercises every
 * implementation.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpcls_priv.h"

struct dpcls_impl_info {
	const char *name;
	bool (*probe)(void);
	dpcls_subtable_lookup_fn (*resolve)(unsigned n_words);
};

static bool
probe_always(void)
{
	return true;
}

/* VSW_CPU_HIDE lists avx512 (see dpcls.h); set once at start-up. */
static bool avx512_hidden;

/* Whether the comma-separated VSW_CPU_HIDE names feature. */
static bool
env_hides(const char *feature)
{
	const char *p = getenv("VSW_CPU_HIDE");
	size_t len, n = strlen(feature);

	for (; p != NULL && *p != '\0'; p += len + (p[len] != '\0')) {
		len = strcspn(p, ",");
		if (len == n && strncmp(p, feature, n) == 0)
			return true;
	}
	return false;
}

static bool
probe_avx512(void)
{
#ifdef VSW_DPCLS_HAVE_AVX512
	return !avx512_hidden && __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512vl");
#else
	return false;
#endif
}

static dpcls_subtable_lookup_fn
resolve_validator(unsigned n_words)
{
	(void)n_words;
	return dpcls_lookup_autovalidator;
}

static dpcls_subtable_lookup_fn
resolve_generic(unsigned n_words)
{
	(void)n_words;
	return dpcls_lookup_generic;
}

static dpcls_subtable_lookup_fn
resolve_avx512(unsigned n_words)
{
#ifdef VSW_DPCLS_HAVE_AVX512
	return dpcls_lookup_avx512_resolve(n_words);
#else
	(void)n_words;
	return NULL;
#endif
}

static const struct dpcls_impl_info dpcls_impls[] = {
	[DPCLS_IMPL_AUTOVALIDATOR] = {"autovalidator", probe_always,
		resolve_validator},
	[DPCLS_IMPL_GENERIC] = {"generic", probe_always, resolve_generic},
	[DPCLS_IMPL_UNROLLED] = {"unrolled", probe_always,
		dpcls_lookup_unrolled_resolve},
	[DPCLS_IMPL_AVX512] = {"avx512", probe_avx512, resolve_avx512},
};

_Static_assert(sizeof(dpcls_impls) / sizeof(dpcls_impls[0]) == DPCLS_IMPL_COUNT,
	"one registry entry per enum dpcls_impl");

/*
 * Default: the autovalidator in validator builds; otherwise the fastest
 * available in vsw-bench-dpcls (batches of 32): AVX-512, else unrolled.
 */
#ifdef VSW_DPCLS_VALIDATOR_DEFAULT
#define DPCLS_IMPL_DEFAULT DPCLS_IMPL_AUTOVALIDATOR
#else
#define DPCLS_IMPL_DEFAULT DPCLS_IMPL_UNROLLED
#endif

static _Atomic unsigned dpcls_impl_cur = DPCLS_IMPL_DEFAULT;

static void
dpcls_impl_init(void) __attribute__((constructor));

static void
dpcls_impl_init(void)
{
	avx512_hidden = env_hides("avx512");
	if (DPCLS_IMPL_DEFAULT != DPCLS_IMPL_AUTOVALIDATOR && probe_avx512())
		atomic_store(&dpcls_impl_cur, DPCLS_IMPL_AVX512);
}
static _Atomic uint64_t dpcls_validator_mismatches;
static _Atomic unsigned dpcls_validator_logged;

#define VALIDATOR_LOG_MAX 16

enum dpcls_impl
dpcls_impl_current(void)
{
	return (enum dpcls_impl)atomic_load_explicit(
		&dpcls_impl_cur, memory_order_relaxed);
}

void
dpcls_subtable_resolve_fns(struct dpcls_subtable *st)
{
	unsigned k;

	for (k = 0; k < DPCLS_IMPL_COUNT; k++) {
		dpcls_subtable_lookup_fn fn = NULL;

		if (dpcls_impls[k].probe())
			fn = dpcls_impls[k].resolve(st->n_words);
		/* Unavailable or no variant for this shape: generic. */
		st->fns[k] = fn != NULL ? fn : dpcls_lookup_generic;
	}
}

int
vsw_dpcls_impl_set(const char *name)
{
	unsigned k;

	for (k = 0; k < DPCLS_IMPL_COUNT; k++) {
		if (strcmp(name, dpcls_impls[k].name) != 0)
			continue;
		if (!dpcls_impls[k].probe())
			return -ENOTSUP;
		atomic_store_explicit(&dpcls_impl_cur, k, memory_order_relaxed);
		return 0;
	}
	return -ENOENT;
}

const char *
vsw_dpcls_impl_get(void)
{
	return dpcls_impls[dpcls_impl_current()].name;
}

unsigned
vsw_dpcls_impl_list(const char **names, unsigned max)
{
	unsigned k, n = 0;

	for (k = 0; k < DPCLS_IMPL_COUNT; k++)
		if (dpcls_impls[k].probe() && n < max)
			names[n++] = dpcls_impls[k].name;
	return n;
}

uint64_t
vsw_dpcls_validator_mismatches(void)
{
	return atomic_load_explicit(
		&dpcls_validator_mismatches, memory_order_relaxed);
}

static void
validator_report(
	const struct dpcls_subtable *st, unsigned k, uint32_t ref, uint32_t got)
{
	atomic_fetch_add_explicit(
		&dpcls_validator_mismatches, 1, memory_order_relaxed);
	if (atomic_fetch_add_explicit(&dpcls_validator_logged, 1,
		    memory_order_relaxed) < VALIDATOR_LOG_MAX)
		fprintf(stderr,
			"vsw dpcls autovalidator: %s disagrees with "
			"generic (subtable of %u words, hit maps %#x vs %#x)\n",
			dpcls_impls[k].name, st->n_words, got, ref);
}

uint32_t
dpcls_lookup_autovalidator(const struct dpcls_subtable *st,
	const struct vsw_flow_key *keys, uint32_t keys_map,
	const struct dpcls_rule **rules)
{
	const struct dpcls_rule *alt[VSW_DPCLS_BURST];
	uint32_t ref, got, m;
	unsigned k, i;

	ref = dpcls_lookup_generic(st, keys, keys_map, rules);
	for (k = 0; k < DPCLS_IMPL_COUNT; k++) {
		bool bad;

		if (k == DPCLS_IMPL_AUTOVALIDATOR ||
			st->fns[k] == st->fns[DPCLS_IMPL_GENERIC])
			continue;
		got = st->fns[k](st, keys, keys_map, alt);
		bad = got != ref;
		for (m = got & ref; m != 0 && !bad; m &= m - 1) {
			i = (unsigned)__builtin_ctz(m);
			bad = alt[i] != rules[i];
		}
		if (bad)
			validator_report(st, k, ref, got);
	}
	return ref;
}
