/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The next version of a classifier: a deep copy (vsw_dpcls_clone) and the
 * re-ranking of its subtables by hit count (vsw_dpcls_rerank).
 *
 * Control thread only, on a classifier no reader can see yet (see
 * vsw/dpcls.h): the PMDs keep walking the published version meanwhile.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dpcls_priv.h"

static struct dpcls_rule *
rule_copy(const struct dpcls_subtable *st, const struct dpcls_rule *src)
{
	struct dpcls_rule *r = dpcls_rule_alloc(st);

	if (r != NULL)
		memcpy(r, src, sizeof(*r) + st->n_words * sizeof(uint64_t));
	return r;
}

/* Copy one chain head and its lower list; NULL on allocation failure. */
static struct dpcls_rule *
subtable_copy_list(const struct dpcls_subtable *st, const struct dpcls_rule *h)
{
	struct dpcls_rule *first = NULL, **tail = &first, *r;

	for (; h != NULL; h = h->lower) {
		r = rule_copy(st, h);
		if (r == NULL)
			break;
		r->next = NULL;
		r->lower = NULL;
		*tail = r;
		tail = &r->lower;
	}
	if (h == NULL)
		return first;
	for (; first != NULL; first = r) {
		r = first->lower;
		free(first);
	}
	return NULL;
}

/* Copy bucket src into dst (same table size): ways, then overflow. */
static int
bucket_copy(const struct dpcls_subtable *st, struct dpcls_bucket *dst,
	const struct dpcls_bucket *src)
{
	struct dpcls_rule *h, **tail = &dst->overflow;
	unsigned w;

	for (w = 0; w < DPCLS_BUCKET_WAYS; w++) {
		dst->hash[w] = src->hash[w];
		if (src->rule[w] == NULL)
			continue;
		dst->rule[w] = subtable_copy_list(st, src->rule[w]);
		if (dst->rule[w] == NULL)
			return -ENOMEM;
	}
	for (h = src->overflow; h != NULL; h = h->next) {
		*tail = subtable_copy_list(st, h);
		if (*tail == NULL)
			return -ENOMEM;
		tail = &(*tail)->next;
	}
	return 0;
}

static struct dpcls_subtable *
subtable_clone(const struct dpcls_subtable *src)
{
	struct dpcls_subtable *st = aligned_alloc(64, sizeof(*st));
	uint32_t b;

	if (st == NULL)
		return NULL;
	*st = *src;
	st->buckets = dpcls_buckets_alloc(src->bucket_mask + 1);
	if (st->buckets == NULL) {
		free(st);
		return NULL;
	}
	for (b = 0; b <= src->bucket_mask; b++) {
		if (bucket_copy(src, &st->buckets[b], &src->buckets[b]) != 0) {
			dpcls_subtable_destroy(st);
			return NULL;
		}
	}
	dpcls_subtable_resolve_fns(st);
	return st;
}

struct vsw_dpcls *
vsw_dpcls_clone(const struct vsw_dpcls *cls)
{
	struct vsw_dpcls *c = vsw_dpcls_create();
	uint32_t i;

	if (c == NULL)
		return NULL;
	c->cap = cls->n_subtables ? cls->n_subtables : 1;
	c->subtables = calloc(c->cap, sizeof(*c->subtables));
	if (c->subtables == NULL) {
		free(c);
		return NULL;
	}
	for (i = 0; i < cls->n_subtables; i++) {
		c->subtables[i] = subtable_clone(cls->subtables[i]);
		if (c->subtables[i] == NULL) {
			vsw_dpcls_destroy(c);
			return NULL;
		}
		c->n_subtables++;
	}
	c->n_rules = cls->n_rules;
	return c;
}

int
vsw_dpcls_rerank(struct vsw_dpcls *cls, const uint64_t *hits, uint32_t n)
{
	uint64_t *key;
	uint32_t i, j;

	if (n != cls->n_subtables || (n != 0 && hits == NULL))
		return -EINVAL;
	key = malloc((n ? n : 1) * sizeof(*key));
	if (key == NULL)
		return -ENOMEM;
	/* Insertion sort: max priority descending, then hits descending. */
	for (i = 0; i < n; i++)
		key[i] = hits[i];
	for (i = 1; i < n; i++) {
		struct dpcls_subtable *st = cls->subtables[i];
		uint64_t k = key[i];

		for (j = i; j > 0; j--) {
			struct dpcls_subtable *p = cls->subtables[j - 1];

			if (p->max_priority > st->max_priority ||
				(p->max_priority == st->max_priority &&
					key[j - 1] >= k))
				break;
			cls->subtables[j] = p;
			key[j] = key[j - 1];
		}
		cls->subtables[j] = st;
		key[j] = k;
	}
	free(key);
	return 0;
}
