/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Classifier key compare under forced hash collisions (issue 11, gap 1).
 *
 * This binary carries its own copy of the classifier, compiled with the
 * tiny-hash knob (VSW_DPCLS_TEST_HASH, dpcls_priv.h): with the hash cut to
 * 0..3 bits, rules and keys one bit apart share a hash and a bucket, so only
 * the masked key compare keeps them apart. Every lookup implementation, the
 * autovalidator included, is checked against a linear scan on masks of 0 to
 * 8 words (the full key): one rule and its neighbours one byte off in every
 * byte of every masked word, then the exact limits (first and last bit of
 * the key), then random rule sets and near-miss keys. The untouched 32-bit
 * hash runs too, as the control.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpcls_priv.h"
#include "tl_rng.h"

#define MAX_RULES 400
#define MAX_KEYS 512
#define RANDOM_ROUNDS 150 /* per hash width */

struct ref_rule {
	struct vsw_flow_key key; /* masked */
	struct vsw_flow_mask mask;
	int32_t prio;
	bool live;
};

struct ref {
	struct ref_rule r[MAX_RULES];
	unsigned n;
};

static struct ref ref;
static struct vsw_flow_key keys[MAX_KEYS];
static unsigned n_keys;
static unsigned hash_bits;
static unsigned long n_checked, n_hit; /* lookups checked, of them hits */

static struct tl_rng rng; /* tl_rng_init in main */

static uint64_t
rnd64(void)
{
	return tl_rand(&rng);
}

static unsigned
rnd(unsigned n)
{
	return tl_rand32(&rng) % n;
}

/* Key words through memcpy: the key's fields are narrower types. */
static uint64_t
wget(const struct vsw_flow_key *k, unsigned i)
{
	uint64_t w;

	memcpy(&w, (const uint8_t *)k + 8 * i, sizeof(w));
	return w;
}

static void
wset(struct vsw_flow_key *k, unsigned i, uint64_t w)
{
	memcpy((uint8_t *)k + 8 * i, &w, sizeof(w));
}

static void
wxor(struct vsw_flow_key *k, unsigned i, uint64_t x)
{
	wset(k, i, wget(k, i) ^ x);
}

static uint8_t *
kb(struct vsw_flow_key *k)
{
	return (uint8_t *)(void *)k;
}

static void
hash_bits_set(unsigned bits)
{
	hash_bits = bits;
	dpcls_test_hash_mask = bits >= 32 ? UINT32_MAX : (1u << bits) - 1;
}

static void
random_key(struct vsw_flow_key *k)
{
	unsigned i;

	for (i = 0; i < VSW_FLOW_KEY_WORDS; i++)
		wset(k, i, rnd64());
}

static bool
ref_matches(const struct ref_rule *r, const struct vsw_flow_key *k)
{
	unsigned i;

	for (i = 0; i < VSW_FLOW_KEY_WORDS; i++)
		if ((wget(k, i) & wget(&r->mask.m, i)) != wget(&r->key, i))
			return false;
	return true;
}

/* Index of a best matching live rule, or -1. */
static int
ref_lookup(const struct vsw_flow_key *k)
{
	int best = -1;
	unsigned i;

	for (i = 0; i < ref.n; i++)
		if (ref.r[i].live && ref_matches(&ref.r[i], k) &&
			(best < 0 || ref.r[i].prio > ref.r[best].prio))
			best = (int)i;
	return best;
}

static void *
rule_data(unsigned idx)
{
	return (void *)(uintptr_t)(idx + 1);
}

/* Insert into both; a duplicate (key, mask, prio) replaces the old one. */
static void
ref_insert(struct vsw_dpcls *cls, const struct vsw_flow_key *key,
	const struct vsw_flow_mask *mask, int32_t prio)
{
	struct ref_rule *nr = &ref.r[ref.n];
	unsigned i;

	assert_true(ref.n < MAX_RULES);
	for (i = 0; i < VSW_FLOW_KEY_WORDS; i++)
		wset(&nr->key, i, wget(key, i) & wget(&mask->m, i));
	nr->mask = *mask;
	nr->prio = prio;
	nr->live = true;
	for (i = 0; i < ref.n; i++)
		if (ref.r[i].live && ref.r[i].prio == prio &&
			memcmp(&ref.r[i].key, &nr->key, sizeof(nr->key)) == 0 &&
			memcmp(&ref.r[i].mask, mask, sizeof(*mask)) == 0)
			ref.r[i].live = false;
	assert_int_equal(
		vsw_dpcls_insert(cls, key, mask, prio, rule_data(ref.n)), 0);
	ref.n++;
}

static void
ref_remove(struct vsw_dpcls *cls, unsigned i)
{
	struct ref_rule *r = &ref.r[i];

	assert_int_equal(vsw_dpcls_remove(cls, &r->key, &r->mask, r->prio), 0);
	r->live = false;
}

static void
add_key(const struct vsw_flow_key *k)
{
	assert_true(n_keys < MAX_KEYS);
	keys[n_keys++] = *k;
}

/* Wrong answers for keys[base..base+n) (n <= 32) with impl. */
static unsigned
burst_errors(const struct vsw_dpcls *cls, unsigned base, unsigned n,
	const char *impl, const char *what)
{
	static char sentinel;
	uint32_t map = n == 32 ? UINT32_MAX : (1u << n) - 1, found;
	unsigned i, bad = 0;
	void *res[32];

	for (i = 0; i < 32; i++)
		res[i] = &sentinel;
	found = vsw_dpcls_lookup(cls, &keys[base], map, res, NULL);
	assert_int_equal(found & ~map, 0);
	for (i = 0; i < n; i++) {
		int want = ref_lookup(&keys[base + i]);
		uintptr_t r = (uintptr_t)res[i] - 1;
		bool hit = found >> i & 1, ok;

		n_checked++;
		n_hit += want >= 0;
		if (want < 0)
			ok = !hit && res[i] == &sentinel;
		else /* any matching rule of the best priority is right */
			ok = hit && r < ref.n && ref.r[r].live &&
			     ref_matches(&ref.r[r], &keys[base + i]) &&
			     ref.r[r].prio == ref.r[want].prio;
		if (!ok && bad++ == 0)
			fprintf(stderr,
				"%s, %u hash bits, %s: key %u: hit %d rule "
				"%ld, want rule %d\n",
				impl, hash_bits, what, base + i, hit,
				hit ? (long)r : -1L, want);
	}
	return bad;
}

/*
 * keys[] against the reference with every implementation; all of them run
 * before the verdict so a failure names each one that is wrong.
 */
static void
check_all_impls(const struct vsw_dpcls *cls, const char *what)
{
	const char *names[8], *saved = vsw_dpcls_impl_get();
	uint64_t mism = vsw_dpcls_validator_mismatches();
	unsigned n = vsw_dpcls_impl_list(names, 8), i, b, bad = 0;

	assert_true(n >= 3);
	for (i = 0; i < n; i++) {
		assert_int_equal(vsw_dpcls_impl_set(names[i]), 0);
		for (b = 0; b < n_keys; b += 32)
			bad += burst_errors(cls, b,
				n_keys - b < 32 ? n_keys - b : 32, names[i],
				what);
	}
	assert_int_equal(vsw_dpcls_impl_set(saved), 0);
	assert_int_equal(bad, 0);
	assert_int_equal(vsw_dpcls_validator_mismatches(), mism);
}

static void
reset(void)
{
	memset(&ref, 0, sizeof(ref));
	n_keys = 0;
}

/* A mask with all-ones in the words of word_map. */
static void
mask_words(struct vsw_flow_mask *m, unsigned word_map)
{
	unsigned i;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < VSW_FLOW_KEY_WORDS; i++)
		if (word_map >> i & 1)
			wset(&m->m, i, UINT64_MAX);
}

/*
 * One base rule; for every byte of every masked word a neighbour rule with
 * one bit of that byte flipped, and a probe with another bit of it flipped
 * that no rule has. Base, neighbours (with random bits outside the mask)
 * must find themselves, probes nothing.
 */
static void
every_byte_case(unsigned word_map)
{
	struct vsw_dpcls *cls = vsw_dpcls_create();
	struct vsw_flow_key base, k;
	struct vsw_flow_mask m;
	unsigned pos, bit, i;
	char what[64];

	assert_non_null(cls);
	reset();
	mask_words(&m, word_map);
	random_key(&base);
	ref_insert(cls, &base, &m, 100);
	add_key(&base);
	for (pos = 0; pos < sizeof(base); pos++) {
		if (!(word_map >> (pos / 8) & 1))
			continue;
		bit = rnd(8);
		k = base;
		kb(&k)[pos] ^= (uint8_t)(1u << bit);
		ref_insert(cls, &k, &m, pos & 1 ? 150 + (int)pos : 50);
		for (i = 0; i < VSW_FLOW_KEY_WORDS; i++)
			if (!(word_map >> i & 1))
				wset(&k, i, rnd64());
		add_key(&k);
		k = base;
		kb(&k)[pos] ^= (uint8_t)(1u << ((bit + 1 + rnd(7)) % 8));
		add_key(&k);
	}
	snprintf(what, sizeof(what), "every byte, word map %#x", word_map);
	check_all_impls(cls, what);
	vsw_dpcls_destroy(cls);
}

static unsigned
random_word_map(unsigned nw)
{
	unsigned map = 0;

	while ((unsigned)__builtin_popcount(map) < nw)
		map |= 1u << rnd(VSW_FLOW_KEY_WORDS);
	return map;
}

static void
test_every_byte(void **state)
{
	static const unsigned bits[] = {0, 2, 32};
	unsigned b, nw, all;

	(void)state;
	for (b = 0; b < sizeof(bits) / sizeof(bits[0]); b++) {
		hash_bits_set(bits[b]);
		for (nw = 0; nw <= VSW_FLOW_KEY_WORDS; nw++) {
			/* First nw words, last nw words, two random sets. */
			all = (1u << nw) - 1;
			every_byte_case(all);
			if (nw == 0 || nw == VSW_FLOW_KEY_WORDS)
				continue;
			every_byte_case(all << (VSW_FLOW_KEY_WORDS - nw));
			every_byte_case(random_word_map(nw));
			every_byte_case(random_word_map(nw));
		}
	}
	hash_bits_set(32);
}

/* A rule on one bit; keys with that bit flipped miss, others hit. */
static void
one_bit_case(unsigned word, unsigned bit)
{
	struct vsw_dpcls *cls = vsw_dpcls_create();
	struct vsw_flow_key k;
	struct vsw_flow_mask m;
	unsigned i;

	assert_non_null(cls);
	reset();
	memset(&m, 0, sizeof(m));
	wset(&m.m, word, 1ull << bit);
	random_key(&k);
	ref_insert(cls, &k, &m, 7);
	for (i = 0; i < 16; i++) {
		random_key(&k);
		add_key(&k);
		wxor(&k, word, 1ull << bit);
		add_key(&k);
	}
	check_all_impls(cls, "one bit");
	vsw_dpcls_destroy(cls);
}

/*
 * The first and the last bit of the key, alone or in a full-width mask;
 * 1 to 6 colliding heads, across the bucket's four ways into its overflow
 * chain, told apart by the last bit of the key only.
 */
static void
test_exact_limits(void **state)
{
	struct vsw_flow_key base, k;
	struct vsw_flow_mask m;
	struct vsw_dpcls *cls;
	unsigned heads, i;

	(void)state;
	hash_bits_set(0);
	one_bit_case(0, 0);
	one_bit_case(7, 63);
	one_bit_case(7, 0);
	one_bit_case(0, 63);
	mask_words(&m, 0xff);
	for (heads = 1; heads <= 6; heads++) {
		cls = vsw_dpcls_create();
		assert_non_null(cls);
		reset();
		random_key(&base);
		for (i = 0; i < heads; i++) {
			k = base;
			wxor(&k, 7, (uint64_t)i << 61);
			ref_insert(cls, &k, &m, (int32_t)i);
			add_key(&k);
		}
		for (i = 0; i < 8; i++) {
			k = base;
			wxor(&k, 7, (uint64_t)i << 61 | 1ull << 63);
			add_key(&k);
			k = base;
			wxor(&k, 0, 1);
			add_key(&k);
		}
		check_all_impls(cls, "limits");
		vsw_dpcls_destroy(cls);
	}
	hash_bits_set(32);
}

/* A non-zero mask word: all ones, random bits, one bit, a byte, a half. */
static uint64_t
random_mask_word(void)
{
	uint64_t w;

	switch (rnd(6)) {
	case 0:
		return UINT64_MAX;
	case 1:
		w = rnd64() & rnd64();
		return w != 0 ? w : 1;
	case 2:
		return 1ull << (rnd(3) == 0 ? 63 : rnd(64));
	case 3:
		return 0xffull << (8 * rnd(8));
	case 4:
		return UINT32_MAX;
	default:
		return (uint64_t)UINT32_MAX << 32;
	}
}

static void
random_mask(struct vsw_flow_mask *m)
{
	unsigned nw = rnd(3) == 0 ? VSW_FLOW_KEY_WORDS : rnd(9);
	unsigned map = random_word_map(nw), i;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < VSW_FLOW_KEY_WORDS; i++)
		if (map >> i & 1)
			wset(&m->m, i, random_mask_word());
}

/* Flip 1..2 masked bits of k under m (m must not be empty). */
static void
flip_masked_bits(struct vsw_flow_key *k, const struct vsw_flow_mask *m)
{
	unsigned n = 1 + rnd(2), w, b;

	while (n > 0) {
		w = rnd(VSW_FLOW_KEY_WORDS);
		b = rnd(64);
		if (wget(&m->m, w) >> b & 1) {
			wxor(k, w, 1ull << b);
			n--;
		}
	}
}

static bool
mask_empty(const struct vsw_flow_mask *m)
{
	unsigned i;

	for (i = 0; i < VSW_FLOW_KEY_WORDS; i++)
		if (wget(&m->m, i) != 0)
			return false;
	return true;
}

/*
 * Rules close to a few base keys in 1..4 random masks; about a fifth removed
 * again; keys that are rules' keys (random outside the mask), rules' keys a
 * masked bit or two off, and random ones.
 */
static void
random_case(void)
{
	struct vsw_flow_mask masks[4];
	struct vsw_flow_key bases[3], k;
	struct vsw_dpcls *cls = vsw_dpcls_create();
	unsigned n_masks = 1 + rnd(4), n_rules = 20 + rnd(150), i, j;

	assert_non_null(cls);
	reset();
	for (i = 0; i < n_masks; i++)
		random_mask(&masks[i]);
	for (i = 0; i < 3; i++)
		random_key(&bases[i]);
	for (i = 0; i < n_rules; i++) {
		const struct vsw_flow_mask *m = &masks[rnd(n_masks)];

		k = bases[rnd(3)];
		if (!mask_empty(m) && rnd(4) != 0)
			flip_masked_bits(&k, m);
		ref_insert(cls, &k, m, (int32_t)rnd(8));
	}
	for (i = 0; i < ref.n; i++)
		if (ref.r[i].live && rnd(5) == 0)
			ref_remove(cls, i);
	while (n_keys < 256) {
		const struct ref_rule *r = &ref.r[rnd(ref.n)];

		k = rnd(4) == 0 ? bases[rnd(3)] : r->key;
		for (j = 0; j < VSW_FLOW_KEY_WORDS; j++)
			wset(&k, j,
				wget(&k, j) | (rnd64() & ~wget(&r->mask.m, j)));
		if (rnd(8) == 0)
			random_key(&k);
		else if (rnd(2) == 0 && !mask_empty(&r->mask))
			flip_masked_bits(&k, &r->mask);
		add_key(&k);
	}
	check_all_impls(cls, "random");
	vsw_dpcls_destroy(cls);
}

static void
test_random_collisions(void **state)
{
	static const unsigned bits[] = {0, 1, 3, 32};
	unsigned b, round;

	(void)state;
	for (b = 0; b < sizeof(bits) / sizeof(bits[0]); b++) {
		hash_bits_set(bits[b]);
		for (round = 0; round < RANDOM_ROUNDS; round++)
			random_case();
	}
	hash_bits_set(32);
}

static int
report(void **state)
{
	(void)state;
	print_message("# %lu lookups checked (%lu hits)\n", n_checked, n_hit);
	n_checked = 0;
	n_hit = 0;
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_every_byte, report),
		cmocka_unit_test_teardown(test_exact_limits, report),
		cmocka_unit_test_teardown(test_random_collisions, report),
	};
	const char *names[8];
	unsigned n = vsw_dpcls_impl_list(names, 8), i;

	printf("# implementations:");
	for (i = 0; i < n; i++)
		printf(" %s", names[i]);
	printf("\n");
	tl_rng_init(&rng, "test_dpcls_collide", 0x9e3779b97f4a7c15ull);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
