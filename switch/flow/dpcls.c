/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wildcard classifier (tuple space search): subtables, rule insert/remove
 * and the burst lookup that walks the subtables. Clone and re-ranking, which
 * build the next version of a classifier, are in dpcls_clone.c.
 *
 * Insert/remove/clone/rerank run on the control thread on a classifier no
 * reader can see yet (see vsw/dpcls.h); vsw_dpcls_lookup() runs on any
 * number of PMDs at once and writes only to its caller's arrays and stats.
 * Trusts its callers for keys zeroed outside their fields (the extractor
 * guarantees it); the masked compare makes stray bits harmless anyway.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dpcls_priv.h"

_Static_assert(sizeof(uint32_t) * 8 == VSW_DPCLS_BURST,
	"keys_map must have one bit per key of a burst");

#ifdef VSW_DPCLS_TEST_HASH
uint32_t dpcls_test_hash_mask = UINT32_MAX;
#endif

#define SUBTABLE_MIN_BUCKETS 4
/* Grow when the heads average this many per bucket (of 4 ways). */
#define SUBTABLE_MAX_LOAD 2

struct dpcls_bucket *
dpcls_buckets_alloc(uint32_t n)
{
	struct dpcls_bucket *b = aligned_alloc(64, n * sizeof(*b));

	if (b != NULL)
		memset(b, 0, n * sizeof(*b));
	return b;
}

/*
 * Every chain head of bucket b in turn, NULL at the end: *pos (start at 0)
 * counts the ways, then *chain walks the overflow chain. The caller may
 * free or move the returned head.
 */
static struct dpcls_rule *
bucket_head(
	const struct dpcls_bucket *b, unsigned *pos, struct dpcls_rule **chain)
{
	struct dpcls_rule *r;

	while (*pos < DPCLS_BUCKET_WAYS) {
		r = b->rule[(*pos)++];
		if (r != NULL)
			return r;
	}
	if (*pos == DPCLS_BUCKET_WAYS) {
		*chain = b->overflow;
		(*pos)++;
	}
	r = *chain;
	if (r != NULL)
		*chain = r->next;
	return r;
}

/* Place a chain head into a free way of b, else onto its overflow chain. */
static void
bucket_put(struct dpcls_bucket *b, struct dpcls_rule *r)
{
	unsigned w;

	for (w = 0; w < DPCLS_BUCKET_WAYS; w++) {
		if (b->rule[w] == NULL) {
			b->hash[w] = r->hash;
			b->rule[w] = r;
			r->next = NULL;
			return;
		}
	}
	r->next = b->overflow;
	b->overflow = r;
}

static void
mask_pack(const struct dpcls_subtable *st, const struct vsw_flow_key *key,
	uint64_t *packed)
{
	const uint64_t *w = vsw_flow_key_words(key);
	unsigned j;

	for (j = 0; j < st->n_words; j++)
		packed[j] = w[st->words[j]] & st->wmask[j];
}

static struct dpcls_subtable *
subtable_create(const struct vsw_flow_mask *mask)
{
	const uint64_t *mw = vsw_flow_key_words(&mask->m);
	struct dpcls_subtable *st;
	unsigned i;

	st = aligned_alloc(64, sizeof(*st));
	if (st == NULL)
		return NULL;
	memset(st, 0, sizeof(*st));
	st->buckets = dpcls_buckets_alloc(SUBTABLE_MIN_BUCKETS);
	if (st->buckets == NULL) {
		free(st);
		return NULL;
	}
	st->bucket_mask = SUBTABLE_MIN_BUCKETS - 1;
	st->mask = *mask;
	for (i = 0; i < VSW_FLOW_KEY_WORDS; i++) {
		if (mw[i] == 0)
			continue;
		st->words[st->n_words] = (uint8_t)i;
		st->wmask[st->n_words] = mw[i];
		st->n_words++;
		st->word_map |= (uint8_t)(1u << i);
	}
	st->max_priority = INT32_MIN;
	dpcls_subtable_resolve_fns(st);
	return st;
}

void
dpcls_subtable_destroy(struct dpcls_subtable *st)
{
	struct dpcls_rule *h, *r, *rn, *chain = NULL;
	uint32_t b;
	unsigned pos;

	for (b = 0; b <= st->bucket_mask; b++) {
		pos = 0;
		while ((h = bucket_head(&st->buckets[b], &pos, &chain)) !=
			NULL) {
			for (r = h; r != NULL; r = rn) {
				rn = r->lower;
				free(r);
			}
		}
	}
	free(st->buckets);
	free(st);
}

struct dpcls_rule *
dpcls_rule_alloc(const struct dpcls_subtable *st)
{
	return malloc(
		sizeof(struct dpcls_rule) + st->n_words * sizeof(uint64_t));
}

/*
 * The link (a bucket way or an overflow chain's next pointer) that points
 * to the chain head holding this masked key, or NULL.
 */
static struct dpcls_rule **
subtable_find(struct dpcls_subtable *st, const uint64_t *packed, uint32_t hash)
{
	struct dpcls_bucket *b = &st->buckets[hash & st->bucket_mask];
	struct dpcls_rule **link;
	unsigned w;

	for (w = 0; w < DPCLS_BUCKET_WAYS; w++) {
		link = &b->rule[w];
		if (*link != NULL && (*link)->hash == hash &&
			dpcls_words_eq((*link)->key, packed, st->n_words))
			return link;
	}
	for (link = &b->overflow; *link != NULL; link = &(*link)->next)
		if ((*link)->hash == hash &&
			dpcls_words_eq((*link)->key, packed, st->n_words))
			return link;
	return NULL;
}

static int
subtable_grow(struct dpcls_subtable *st)
{
	uint32_t n = (st->bucket_mask + 1) * 2, b;
	struct dpcls_rule *h, *chain = NULL;
	struct dpcls_bucket *nb;
	unsigned pos;

	nb = dpcls_buckets_alloc(n);
	if (nb == NULL)
		return -ENOMEM;
	for (b = 0; b <= st->bucket_mask; b++) {
		pos = 0;
		while ((h = bucket_head(&st->buckets[b], &pos, &chain)) != NULL)
			bucket_put(&nb[h->hash & (n - 1)], h);
	}
	free(st->buckets);
	st->buckets = nb;
	st->bucket_mask = n - 1;
	return 0;
}

static void
subtable_recompute_max(struct dpcls_subtable *st)
{
	struct dpcls_rule *h, *chain = NULL;
	uint32_t b;
	unsigned pos;

	st->max_priority = INT32_MIN;
	for (b = 0; b <= st->bucket_mask; b++) {
		pos = 0;
		while ((h = bucket_head(&st->buckets[b], &pos, &chain)) != NULL)
			if (h->priority > st->max_priority)
				st->max_priority = h->priority;
	}
}

/* Stable sort by descending max priority: keeps the hit order of ties. */
static void
cls_sort(struct vsw_dpcls *cls)
{
	uint32_t i, j;

	for (i = 1; i < cls->n_subtables; i++) {
		struct dpcls_subtable *st = cls->subtables[i];

		for (j = i; j > 0 && cls->subtables[j - 1]->max_priority <
					     st->max_priority;
			j--)
			cls->subtables[j] = cls->subtables[j - 1];
		cls->subtables[j] = st;
	}
}

static int
cls_find_subtable(const struct vsw_dpcls *cls, const struct vsw_flow_mask *mask)
{
	uint32_t i;

	for (i = 0; i < cls->n_subtables; i++)
		if (dpcls_words_eq(
			    vsw_flow_key_words(&cls->subtables[i]->mask.m),
			    vsw_flow_key_words(&mask->m), VSW_FLOW_KEY_WORDS))
			return (int)i;
	return -1;
}

static struct dpcls_subtable *
cls_add_subtable(struct vsw_dpcls *cls, const struct vsw_flow_mask *mask)
{
	struct dpcls_subtable *st;

	if (cls->n_subtables == cls->cap) {
		uint32_t cap = cls->cap ? cls->cap * 2 : 8;
		struct dpcls_subtable **v;

		v = realloc(cls->subtables, cap * sizeof(*v));
		if (v == NULL)
			return NULL;
		cls->subtables = v;
		cls->cap = cap;
	}
	st = subtable_create(mask);
	if (st != NULL)
		cls->subtables[cls->n_subtables++] = st;
	return st;
}

static void
cls_del_subtable(struct vsw_dpcls *cls, uint32_t idx)
{
	dpcls_subtable_destroy(cls->subtables[idx]);
	memmove(&cls->subtables[idx], &cls->subtables[idx + 1],
		(cls->n_subtables - idx - 1) * sizeof(cls->subtables[0]));
	cls->n_subtables--;
}

struct vsw_dpcls *
vsw_dpcls_create(void)
{
	return calloc(1, sizeof(struct vsw_dpcls));
}

void
vsw_dpcls_destroy(struct vsw_dpcls *cls)
{
	uint32_t i;

	if (cls == NULL)
		return;
	for (i = 0; i < cls->n_subtables; i++)
		dpcls_subtable_destroy(cls->subtables[i]);
	free(cls->subtables);
	free(cls);
}

uint32_t
vsw_dpcls_n_rules(const struct vsw_dpcls *cls)
{
	return cls->n_rules;
}

uint32_t
vsw_dpcls_n_subtables(const struct vsw_dpcls *cls)
{
	return cls->n_subtables;
}

/* Put r into the priority-sorted list headed at *link (a chain link). */
static void
chain_add_rule(struct dpcls_rule **link, struct dpcls_rule *r)
{
	struct dpcls_rule *head = *link, **l;

	if (r->priority > head->priority) {
		r->next = head->next;
		r->lower = head;
		head->next = NULL;
		*link = r;
		return;
	}
	for (l = &head->lower; *l != NULL && (*l)->priority >= r->priority;
		l = &(*l)->lower)
		;
	r->next = NULL;
	r->lower = *l;
	*l = r;
}

static int
subtable_insert(struct dpcls_subtable *st, const uint64_t *packed,
	uint32_t hash, int32_t priority, void *data)
{
	struct dpcls_rule **link = subtable_find(st, packed, hash), *r;

	for (r = link ? *link : NULL; r != NULL; r = r->lower) {
		if (r->priority == priority) {
			r->data = data;
			return 0;
		}
	}
	if (link == NULL &&
		st->n_heads >= (st->bucket_mask + 1) * SUBTABLE_MAX_LOAD &&
		subtable_grow(st) != 0)
		return -ENOMEM;
	r = dpcls_rule_alloc(st);
	if (r == NULL)
		return -ENOMEM;
	memcpy(r->key, packed, st->n_words * sizeof(uint64_t));
	r->hash = hash;
	r->priority = priority;
	r->data = data;
	r->lower = NULL;
	if (link != NULL) {
		chain_add_rule(link, r);
	} else {
		bucket_put(&st->buckets[hash & st->bucket_mask], r);
		st->n_heads++;
	}
	st->n_rules++;
	if (priority > st->max_priority)
		st->max_priority = priority;
	return 1;
}

int
vsw_dpcls_insert(struct vsw_dpcls *cls, const struct vsw_flow_key *key,
	const struct vsw_flow_mask *mask, int32_t priority, void *data)
{
	uint64_t packed[VSW_FLOW_KEY_WORDS];
	struct dpcls_subtable *st;
	int idx = cls_find_subtable(cls, mask), rc;
	bool fresh = idx < 0;

	st = fresh ? cls_add_subtable(cls, mask) : cls->subtables[idx];
	if (st == NULL)
		return -ENOMEM;
	mask_pack(st, key, packed);
	rc = subtable_insert(st, packed,
		dpcls_hash_words(packed, st->n_words, DPCLS_HASH_BASIS),
		priority, data);
	if (rc < 0) {
		if (fresh)
			cls_del_subtable(cls, cls->n_subtables - 1);
		return rc;
	}
	if (rc > 0) {
		cls->n_rules++;
		cls_sort(cls);
	}
	return 0;
}

int
vsw_dpcls_remove(struct vsw_dpcls *cls, const struct vsw_flow_key *key,
	const struct vsw_flow_mask *mask, int32_t priority)
{
	uint64_t packed[VSW_FLOW_KEY_WORDS];
	struct dpcls_rule **link, **l, *r;
	struct dpcls_subtable *st;
	int idx = cls_find_subtable(cls, mask);

	if (idx < 0)
		return -ENOENT;
	st = cls->subtables[idx];
	mask_pack(st, key, packed);
	link = subtable_find(st, packed,
		dpcls_hash_words(packed, st->n_words, DPCLS_HASH_BASIS));
	if (link == NULL)
		return -ENOENT;
	for (l = link; *l != NULL && (*l)->priority != priority;
		l = &(*l)->lower)
		;
	if (*l == NULL)
		return -ENOENT;
	r = *l;
	if (l == link) {
		/* The head leaves; the next lower rule takes its place. */
		if (r->lower != NULL) {
			r->lower->next = r->next;
			*link = r->lower;
		} else {
			*link = r->next;
			st->n_heads--;
		}
	} else {
		*l = r->lower;
	}
	free(r);
	st->n_rules--;
	cls->n_rules--;
	if (st->n_rules == 0) {
		cls_del_subtable(cls, (uint32_t)idx);
	} else if (priority == st->max_priority) {
		subtable_recompute_max(st);
		cls_sort(cls);
	}
	return 0;
}

uint32_t
vsw_dpcls_lookup(const struct vsw_dpcls *cls, const struct vsw_flow_key *keys,
	uint32_t keys_map, void **results, struct vsw_dpcls_lookup_stats *stats)
{
	const struct dpcls_rule *rules[VSW_DPCLS_BURST];
	int32_t best[VSW_DPCLS_BURST];
	enum dpcls_impl impl = dpcls_impl_current();
	uint32_t remaining = keys_map, found = 0, m, i;
	uint64_t visits = 0;
	unsigned k;

	for (i = 0; i < cls->n_subtables && remaining != 0; i++) {
		const struct dpcls_subtable *st = cls->subtables[i];

		/* Keys whose match no remaining subtable can beat are done. */
		for (m = found & remaining; m != 0; m &= m - 1) {
			k = (unsigned)__builtin_ctz(m);
			if (best[k] >= st->max_priority)
				remaining &= ~(1u << k);
		}
		if (remaining == 0)
			break;
		visits += (uint64_t)__builtin_popcount(remaining);
		m = st->fns[impl](st, keys, remaining, rules);
		if (stats != NULL && i < stats->n_subtable_hits)
			stats->subtable_hits[i] +=
				(uint64_t)__builtin_popcount(m);
		for (; m != 0; m &= m - 1) {
			k = (unsigned)__builtin_ctz(m);
			if (!(found & (1u << k)) ||
				rules[k]->priority > best[k]) {
				best[k] = rules[k]->priority;
				results[k] = rules[k]->data;
				found |= 1u << k;
			}
		}
	}
	if (stats != NULL) {
		stats->lookups += (uint64_t)__builtin_popcount(keys_map);
		stats->hits += (uint64_t)__builtin_popcount(found);
		stats->subtable_lookups += visits;
	}
	return found;
}
