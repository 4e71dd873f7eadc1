/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The classifier tests' reference: see dpcls_ref.h. A key's answer is a
 * rule that matches it with the highest priority among all matching rules
 * (among equal priorities any matching one is accepted, as the API
 * documents).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpcls_ref.h"

struct tl_rng test_rng; /* tl_rng_init in main */

static uint64_t *
kw(struct vsw_flow_key *k)
{
	return (uint64_t *)(void *)k;
}

static const uint64_t *
ckw(const struct vsw_flow_key *k)
{
	return (const uint64_t *)(const void *)k;
}

static void
key_and(struct vsw_flow_key *out, const struct vsw_flow_key *k,
	const struct vsw_flow_mask *m)
{
	unsigned i;

	for (i = 0; i < 8; i++)
		kw(out)[i] = ckw(k)[i] & ckw(&m->m)[i];
}

static int
ref_matches(const struct ref_rule *r, const struct vsw_flow_key *k)
{
	unsigned i;

	for (i = 0; i < 8; i++)
		if ((ckw(k)[i] & ckw(&r->mask.m)[i]) != ckw(&r->key)[i])
			return 0;
	return 1;
}

/* Matchable fields: byte offset and length in the key. */
static const struct {
	unsigned off, len;
} fields[] = {
	{0, 6},
	{6, 6},
	{12, 2},
	{14, 2},
	{16, 2},
	{18, 1},
	{19, 1},
	{20, 1},
	{21, 1},
	{22, 2},
	{24, 2},
	{26, 2},
	{32, 4},
	{48, 4},
	{32, 16},
	{48, 16},
};
#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))


int wide_masks;

/*
 * A mask of 1..4 fields, some of them prefixes or arbitrary bit masks;
 * with wide_masks, plus one random non-zero byte in each of the 8 words.
 */
static void
random_mask(struct vsw_flow_mask *m)
{
	unsigned n = 1 + rnd() % 4, i, b;
	uint8_t *p = (uint8_t *)&m->m;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < n; i++) {
		unsigned f = rnd() % N_FIELDS, kind = rnd() % 4;

		for (b = 0; b < fields[f].len; b++) {
			if (kind == 0) /* arbitrary bits */
				p[fields[f].off + b] |= (uint8_t)rnd();
			else
				p[fields[f].off + b] = 0xff;
		}
		if (kind == 1) { /* prefix: clear a tail of bits */
			unsigned bits = fields[f].len * 8;
			unsigned keep = 1 + rnd() % (bits - 1);

			for (b = keep; b < bits; b++)
				p[fields[f].off + b / 8] &=
					(uint8_t) ~(0x80u >> (b % 8));
		}
	}
	for (i = 0; wide_masks && i < 8; i++)
		p[i * 8 + rnd() % 8] |= (uint8_t)(1 + rnd() % 255);
}

void
small_key(struct vsw_flow_key *k)
{
	uint8_t *p = (uint8_t *)k;
	unsigned i;

	for (i = 0; i < sizeof(*k); i++)
		p[i] = (uint8_t)((rnd() % 3) * 0x55);
}

static void
ref_gen_masks(struct ref *ref, unsigned n_masks)
{
	unsigned tries = 0, i;

	ref->n_masks = 0;
	while (ref->n_masks < n_masks && tries++ < 10000) {
		struct vsw_flow_mask m;

		random_mask(&m);
		for (i = 0; i < 8 && ckw(&m.m)[i] == 0; i++)
			;
		if (i == 8)
			continue; /* catch-all: would make every key hit */
		for (i = 0; i < ref->n_masks; i++)
			if (memcmp(&m, &ref->masks[i], sizeof(m)) == 0)
				break;
		if (i == ref->n_masks)
			ref->masks[ref->n_masks++] = m;
	}
}

int32_t
random_prio(unsigned prio_range)
{
	if (prio_range == 0) /* anything, including the extremes */
		switch (rnd() % 8) {
		case 0:
			return INT32_MIN;
		case 1:
			return INT32_MAX;
		default:
			return (int32_t)rnd() ^ (int32_t)(rnd() << 16);
		}
	return (int32_t)(rnd() % prio_range) - 3;
}

static void *
rule_data(unsigned idx)
{
	return (void *)(uintptr_t)(idx + 1);
}

void
ref_insert(struct ref *ref, struct vsw_dpcls *cls,
	const struct vsw_flow_key *key, const struct vsw_flow_mask *mask,
	int32_t prio)
{
	struct ref_rule nr;
	unsigned i;

	key_and(&nr.key, key, mask);
	nr.mask = *mask;
	nr.prio = prio;
	nr.live = 1;
	for (i = 0; i < ref->n; i++) {
		if (ref->r[i].live && ref->r[i].prio == prio &&
			memcmp(&ref->r[i].key, &nr.key, sizeof(nr.key)) == 0 &&
			memcmp(&ref->r[i].mask, mask, sizeof(*mask)) == 0) {
			ref->r[i].live = 0; /* replaced: new data wins */
			break;
		}
	}
	assert_true(ref->n < MAX_RULES);
	ref->r[ref->n] = nr;
	assert_int_equal(
		vsw_dpcls_insert(cls, key, mask, prio, rule_data(ref->n)), 0);
	ref->n++;
}

void
ref_build(struct ref *ref, struct vsw_dpcls *cls, unsigned n_masks,
	unsigned n_rules, unsigned prio_range)
{
	unsigned i;

	memset(ref, 0, sizeof(*ref));
	ref_gen_masks(ref, n_masks);
	for (i = 0; i < n_rules; i++) {
		struct vsw_flow_key k;

		small_key(&k);
		ref_insert(ref, cls, &k, &ref->masks[rnd() % ref->n_masks],
			random_prio(prio_range));
	}
}

unsigned
ref_live(const struct ref *ref)
{
	unsigned i, n = 0;

	for (i = 0; i < ref->n; i++)
		n += (unsigned)ref->r[i].live;
	return n;
}

unsigned
ref_live_masks(const struct ref *ref)
{
	unsigned i, j, n = 0;

	for (i = 0; i < ref->n; i++) {
		if (!ref->r[i].live)
			continue;
		for (j = 0; j < i; j++)
			if (ref->r[j].live &&
				memcmp(&ref->r[j].mask, &ref->r[i].mask,
					sizeof(ref->r[i].mask)) == 0)
				break;
		n += j == i;
	}
	return n;
}

/* -1: no rule matches; else the best priority (found in *prio). */
static int
ref_lookup(const struct ref *ref, const struct vsw_flow_key *k, int32_t *prio)
{
	int found = -1;
	unsigned i;

	for (i = 0; i < ref->n; i++) {
		if (!ref->r[i].live || !ref_matches(&ref->r[i], k))
			continue;
		if (found < 0 || ref->r[i].prio > *prio) {
			*prio = ref->r[i].prio;
			found = (int)i;
		}
	}
	return found;
}

static void
gen_key(const struct ref *ref, struct vsw_flow_key *k)
{
	const struct ref_rule *r = &ref->r[rnd() % ref->n];
	unsigned i, kind = rnd() % 8;

	small_key(k);
	if (kind >= 3 && kind <= 5) {
		/* Surely matches r (if live): r's bits under its mask. */
		for (i = 0; i < 8; i++)
			kw(k)[i] = (kw(k)[i] & ~ckw(&r->mask.m)[i]) |
				   ckw(&r->key)[i];
	} else if (kind == 6) {
		for (i = 0; i < 8; i++)
			kw(k)[i] = (uint64_t)rnd() << 32 ^ rnd() ^
				   (uint64_t)rnd() << 17;
	} else if (kind == 7) {
		switch (rnd() % 4) {
		case 0:
			memset(k, 0, sizeof(*k));
			break;
		case 1:
			memset(k, 0xff, sizeof(*k));
			break;
		case 2:
			*k = r->key;
			break;
		default: /* an IPv4/TCP packet's key */
			memset(k, 0, sizeof(*k));
			k->in_port = 1;
			k->dl_type = 0x0008;
			k->nw_proto = 6;
			k->nw_ttl = 64;
			k->tp_src = 0x5000;
			k->tp_dst = (uint16_t)rnd();
			k->nw_src[0] = 10;
			k->nw_dst[0] = 10;
			k->nw_dst[3] = (uint8_t)rnd();
			break;
		}
	}
}

void
keyset_make(struct keyset *ks, const struct ref *ref, unsigned n)
{
	unsigned i;

	ks->n = n;
	ks->keys = aligned_alloc(64, n * sizeof(*ks->keys));
	ks->best = calloc(n, sizeof(*ks->best));
	ks->prio = calloc(n, sizeof(*ks->prio));
	ks->maps = calloc(n / 32, sizeof(*ks->maps));
	assert_true(ks->keys && ks->best && ks->prio && ks->maps);
	for (i = 0; i < n; i++) {
		gen_key(ref, &ks->keys[i]);
		ks->best[i] = ref_lookup(ref, &ks->keys[i], &ks->prio[i]);
	}
	for (i = 0; i < n / 32; i++) {
		switch (rnd() % 16) {
		case 0:
		case 1:
			ks->maps[i] = rnd() ^ (rnd() << 16);
			break;
		case 2:
			ks->maps[i] = 1u << (rnd() % 32);
			break;
		default:
			ks->maps[i] = UINT32_MAX;
			break;
		}
	}
}

void
keyset_free(struct keyset *ks)
{
	free(ks->keys);
	free(ks->best);
	free(ks->prio);
	free(ks->maps);
}

unsigned
burst_errors(const struct ref *ref, const struct vsw_dpcls *cls,
	const struct keyset *ks, unsigned b, const char *impl,
	struct vsw_dpcls_lookup_stats *st, uint32_t *found)
{
	static char sentinel;
	const struct vsw_flow_key *keys = &ks->keys[b * 32];
	uint32_t map = ks->maps[b];
	unsigned i, bad = 0;
	void *res[32];

	for (i = 0; i < 32; i++)
		res[i] = &sentinel;
	*found = vsw_dpcls_lookup(cls, keys, map, res, st);
	for (i = 0; i < 32; i++) {
		unsigned idx = b * 32 + i, hit = *found >> i & 1;
		uintptr_t r = (uintptr_t)res[i] - 1;
		int ok;

		if (!(map >> i & 1) || ks->best[idx] < 0)
			ok = !hit && res[i] == &sentinel;
		else /* any matching rule of the best priority is right */
			ok = hit && r < ref->n && ref->r[r].live &&
			     ref_matches(&ref->r[r], &keys[i]) &&
			     ref->r[r].prio == ks->prio[idx];
		if (!ok && bad++ == 0)
			fprintf(stderr,
				"%s: key %u: found %u rule %ld, want "
				"rule %d prio %d\n",
				impl, idx, hit, (long)r, ks->best[idx],
				ks->prio[idx]);
	}
	return bad;
}

void
check_burst(const struct ref *ref, const struct vsw_dpcls *cls,
	const struct keyset *ks, unsigned b, const char *impl)
{
	struct vsw_dpcls_lookup_stats st = {0};
	uint32_t found;

	assert_int_equal(burst_errors(ref, cls, ks, b, impl, &st, &found), 0);
	assert_int_equal(st.lookups, __builtin_popcount(ks->maps[b]));
	assert_int_equal(st.hits, __builtin_popcount(found));
}

void
check_all_impls(const struct ref *ref, const struct vsw_dpcls *cls,
	const struct keyset *ks)
{
	const char *names[8], *saved = vsw_dpcls_impl_get();
	uint64_t mism = vsw_dpcls_validator_mismatches();
	unsigned n = vsw_dpcls_impl_list(names, 8), i, b;

	assert_true(n >= 3);
	for (i = 0; i < n; i++) {
		assert_int_equal(vsw_dpcls_impl_set(names[i]), 0);
		assert_string_equal(vsw_dpcls_impl_get(), names[i]);
		for (b = 0; b < ks->n / 32; b++)
			check_burst(ref, cls, ks, b, names[i]);
	}
	assert_int_equal(vsw_dpcls_validator_mismatches(), mism);
	assert_int_equal(vsw_dpcls_impl_set(saved), 0);
}
