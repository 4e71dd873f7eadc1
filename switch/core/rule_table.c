/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rule table: the control thread's list of rules (by id and by match)
 * and the classifier version the PMDs read.
 *
 * Every change clones the published classifier (or builds a new one),
 * changes the clone, publishes it with rcu_assign_pointer and, after
 * synchronize_rcu(), frees the old classifier, the removed rules and their
 * ids. PMDs flush their EMC when the table version changes, so an EMC entry
 * never outlives its rule's grace period. Rule ids index per-PMD counters;
 * an id is reused only after the grace period, with a fresh baseline.
 * Trusts rules to come from vsw_rule_parse(); checks the action count.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <urcu-qsbr.h>

#include "switch_priv.h"

static uint32_t
match_hash(const struct vsw_rule *r)
{
	const uint64_t *k = vsw_flow_key_words(&r->key);
	const uint64_t *m = vsw_flow_key_words(&r->mask.m);
	uint64_t h = (uint64_t)(uint32_t)r->priority;
	unsigned i;

	for (i = 0; i < VSW_FLOW_KEY_WORDS; i++)
		h = (h ^ k[i] ^ (m[i] * 31)) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32);
}

static struct vsw_sw_rule **
hash_slot(struct vsw_switch *sw, const struct vsw_rule *match)
{
	struct vsw_sw_rule **pp = &sw->hash[match_hash(match) & sw->hash_mask];

	while (*pp != NULL && !vsw_rule_match_equal(&(*pp)->rule, match))
		pp = &(*pp)->hnext;
	return pp;
}

static void
rule_stats_sum(
	const struct vsw_switch *sw, uint32_t id, struct vsw_rule_stats *s)
{
	unsigned i;

	s->packets = s->bytes = 0;
	for (i = 0; i < sw->cfg.n_pmds; i++) {
		s->packets += ctr_read(&sw->pmd[i]->rule_ctr[id].packets);
		s->bytes += ctr_read(&sw->pmd[i]->rule_ctr[id].bytes);
	}
}

static struct vsw_sw_rule *
rule_new(struct vsw_switch *sw, const struct vsw_rule *r, int32_t id, int *err)
{
	struct vsw_sw_rule *sr;

	*err = -ENOSPC;
	if (id < 0 && sw->n_free == 0)
		return NULL;
	*err = -ENOMEM;
	/* The rule holds 64-byte aligned keys: malloc's 16 is not enough. */
	sr = aligned_alloc(64, (sizeof(*sr) + 63) & ~(size_t)63);
	if (sr == NULL)
		return NULL;
	memset(sr, 0, sizeof(*sr));
	sr->rule = *r;
	*err = actions_compile(sr);
	if (*err < 0) {
		free(sr);
		return NULL;
	}
	if (id >= 0) {
		sr->id = (uint32_t)id; /* replacing: keep id and counters */
	} else {
		sr->id = sw->free_ids[--sw->n_free];
		rule_stats_sum(sw, sr->id, &sw->rule_base[sr->id]);
	}
	return sr;
}

/* Free rules that no published table holds any more, releasing their ids
 * unless a successor took the id over (keep[] = ids still live). */
static void
rules_release(struct vsw_switch *sw, struct vsw_sw_rule **gone, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		if (sw->by_id[gone[i]->id] == NULL)
			sw->free_ids[sw->n_free++] = gone[i]->id;
		free(gone[i]);
	}
}

/* rules_changed = false: same rules, new subtable order (re-ranking). */
static int
publish_cls(struct vsw_switch *sw, struct vsw_dpcls *cls, bool rules_changed)
{
	struct vsw_rule_table *old = sw->rules, *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -ENOMEM;
	t->cls = cls;
	t->version = rules_changed ? ++sw->rules_version : sw->rules_version;
	t->gen = ++sw->rules_gen;
	port_pair_build(sw, t);
	rcu_assign_pointer(sw->rules, t);
	synchronize_rcu();
	if (old != NULL) {
		vsw_dpcls_destroy(old->cls);
		free(old);
	}
	return 0;
}

static int
publish(struct vsw_switch *sw, struct vsw_dpcls *cls)
{
	return publish_cls(sw, cls, true);
}

int
rule_table_init(struct vsw_switch *sw)
{
	uint32_t n = sw->cfg.max_rules, i, hn = 16;
	struct vsw_dpcls *cls;

	while (hn < n)
		hn <<= 1;
	sw->by_id = calloc(n, sizeof(*sw->by_id));
	sw->free_ids = calloc(n, sizeof(*sw->free_ids));
	sw->rule_base = calloc(n, sizeof(*sw->rule_base));
	sw->hash = calloc(hn, sizeof(*sw->hash));
	cls = vsw_dpcls_create();
	if (sw->by_id == NULL || sw->free_ids == NULL ||
		sw->rule_base == NULL || sw->hash == NULL || cls == NULL) {
		vsw_dpcls_destroy(cls);
		return -ENOMEM;
	}
	sw->hash_mask = hn - 1;
	for (i = 0; i < n; i++) /* popped from the end: lowest id first */
		sw->free_ids[i] = n - 1 - i;
	sw->n_free = n;
	return publish(sw, cls) < 0 ? (vsw_dpcls_destroy(cls), -ENOMEM) : 0;
}

void
rule_table_fini(struct vsw_switch *sw)
{
	uint32_t i;

	if (sw->rules != NULL) {
		vsw_dpcls_destroy(sw->rules->cls);
		free(sw->rules);
		sw->rules = NULL;
	}
	for (i = 0; sw->by_id != NULL && i < sw->cfg.max_rules; i++)
		free(sw->by_id[i]);
	free(sw->by_id);
	free(sw->free_ids);
	free(sw->rule_base);
	free(sw->hash);
}

/* Undo log of one change, so a failure leaves everything as it was. */
struct change {
	struct vsw_sw_rule **added;    /* new objects, in order */
	struct vsw_sw_rule **replaced; /* what each one displaced, or NULL */
	unsigned n;
};

static void
link_rule(struct vsw_switch *sw, struct vsw_sw_rule *sr,
	struct vsw_sw_rule **slot)
{
	struct vsw_sw_rule *old = *slot;

	if (old != NULL) { /* take the old one's place in its chain */
		sr->hnext = old->hnext;
		old->hnext = NULL;
	} else {
		sr->hnext = NULL;
		sw->n_rules++;
	}
	*slot = sr;
	sw->by_id[sr->id] = sr;
}

static void
change_undo(struct vsw_switch *sw, struct change *c)
{
	while (c->n > 0) {
		struct vsw_sw_rule *sr = c->added[--c->n];
		struct vsw_sw_rule *old = c->replaced[c->n];
		struct vsw_sw_rule **slot = hash_slot(sw, &sr->rule);

		if (old != NULL) {
			link_rule(sw, old, slot);
		} else {
			*slot = sr->hnext;
			sw->by_id[sr->id] = NULL;
			sw->n_rules--;
			sw->free_ids[sw->n_free++] = sr->id;
		}
		free(sr);
	}
}

static int
change_add(struct vsw_switch *sw, struct vsw_dpcls *cls, struct change *c,
	const struct vsw_rule *r)
{
	struct vsw_sw_rule **slot = hash_slot(sw, r), *old = *slot, *sr;
	int rc;

	if (r->priority < 0 || r->priority > VSW_RULE_PRIORITY_MAX)
		return -EINVAL;
	sr = rule_new(sw, r, old != NULL ? (int32_t)old->id : -1, &rc);
	if (sr == NULL)
		return rc;
	if (vsw_dpcls_insert(cls, &r->key, &r->mask, r->priority, sr) < 0) {
		if (old == NULL)
			sw->free_ids[sw->n_free++] = sr->id;
		free(sr);
		return -ENOMEM;
	}
	link_rule(sw, sr, slot);
	c->added[c->n] = sr;
	c->replaced[c->n++] = old;
	return 0;
}

/* Apply rules[0..n) to cls and the control lists; all or nothing. */
static int
change_run(struct vsw_switch *sw, struct vsw_dpcls *cls,
	const struct vsw_rule *rules, unsigned n, struct change *c)
{
	unsigned i;
	int rc = 0;

	c->n = 0;
	c->added = calloc(n + 1, sizeof(*c->added));
	c->replaced = calloc(n + 1, sizeof(*c->replaced));
	if (c->added == NULL || c->replaced == NULL)
		rc = -ENOMEM;
	for (i = 0; i < n && rc == 0; i++)
		rc = change_add(sw, cls, c, &rules[i]);
	if (rc < 0)
		change_undo(sw, c);
	return rc;
}

static void
change_free(struct change *c)
{
	free(c->added);
	free(c->replaced);
}

int
vsw_switch_rules_add(
	struct vsw_switch *sw, const struct vsw_rule *rules, unsigned n)
{
	struct vsw_dpcls *cls = vsw_dpcls_clone(sw->rules->cls);
	struct change c;
	unsigned i, n_gone = 0;
	int rc;

	if (cls == NULL)
		return -ENOMEM;
	rc = change_run(sw, cls, rules, n, &c);
	if (rc == 0 && (rc = publish(sw, cls)) < 0)
		change_undo(sw, &c);
	if (rc < 0) {
		vsw_dpcls_destroy(cls);
		change_free(&c);
		return rc;
	}
	for (i = 0; i < c.n; i++) /* displaced rules: now unreachable */
		if (c.replaced[i] != NULL)
			c.replaced[n_gone++] = c.replaced[i];
	rules_release(sw, c.replaced, n_gone);
	change_free(&c);
	return 0;
}

int
vsw_switch_rule_del(struct vsw_switch *sw, const struct vsw_rule *match)
{
	struct vsw_sw_rule **slot = hash_slot(sw, match), *sr = *slot;
	struct vsw_dpcls *cls;
	int rc;

	if (sr == NULL)
		return -ENOENT;
	cls = vsw_dpcls_clone(sw->rules->cls);
	if (cls == NULL)
		return -ENOMEM;
	sr->dying = true; /* no pair in the table without it */
	if (vsw_dpcls_remove(cls, &sr->rule.key, &sr->rule.mask,
		    sr->rule.priority) < 0 ||
		(rc = publish(sw, cls)) < 0) {
		sr->dying = false;
		vsw_dpcls_destroy(cls);
		return -ENOMEM;
	}
	*slot = sr->hnext;
	sw->by_id[sr->id] = NULL;
	sw->n_rules--;
	rules_release(sw, &sr, 1);
	return 0;
}

/* Does rule r match at least everything match names, with its values? */
static bool
covers(const struct vsw_rule *match, const struct vsw_rule *r)
{
	const uint64_t *mk = vsw_flow_key_words(&match->key);
	const uint64_t *mm = vsw_flow_key_words(&match->mask.m);
	const uint64_t *rk = vsw_flow_key_words(&r->key);
	const uint64_t *rm = vsw_flow_key_words(&r->mask.m);
	unsigned i;

	for (i = 0; i < VSW_FLOW_KEY_WORDS; i++)
		if ((rm[i] & mm[i]) != mm[i] || (rk[i] & mm[i]) != mk[i])
			return false;
	return true;
}

int
vsw_switch_rules_del_matching(
	struct vsw_switch *sw, const struct vsw_rule *match)
{
	struct vsw_sw_rule **gone = calloc(sw->n_rules + 1, sizeof(*gone));
	struct vsw_dpcls *cls = NULL;
	unsigned n = 0, i;
	uint32_t id;

	if (gone == NULL)
		return -ENOMEM;
	for (id = 0; id < sw->cfg.max_rules; id++)
		if (sw->by_id[id] != NULL &&
			covers(match, &sw->by_id[id]->rule))
			gone[n++] = sw->by_id[id];
	if (n > 0 && (cls = vsw_dpcls_clone(sw->rules->cls)) == NULL)
		n = UINT32_MAX;
	for (i = 0; cls != NULL && i < n; i++)
		gone[i]->dying = true;
	for (i = 0; cls != NULL && i < n; i++)
		if (vsw_dpcls_remove(cls, &gone[i]->rule.key,
			    &gone[i]->rule.mask, gone[i]->rule.priority) < 0)
			n = UINT32_MAX;
	if (n == UINT32_MAX || (cls != NULL && publish(sw, cls) < 0)) {
		for (id = 0; id < sw->cfg.max_rules; id++)
			if (sw->by_id[id] != NULL)
				sw->by_id[id]->dying = false;
		vsw_dpcls_destroy(cls);
		free(gone);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		struct vsw_sw_rule **slot = hash_slot(sw, &gone[i]->rule);

		*slot = gone[i]->hnext;
		sw->by_id[gone[i]->id] = NULL;
		sw->n_rules--;
	}
	rules_release(sw, gone, n);
	free(gone);
	return (int)n;
}

/* Detach every rule from the control lists; returns them (or NULL). */
static struct vsw_sw_rule **
detach_all(struct vsw_switch *sw, unsigned *n)
{
	struct vsw_sw_rule **all = calloc(sw->n_rules + 1, sizeof(*all));
	uint32_t i;

	*n = 0;
	if (all == NULL)
		return NULL;
	for (i = 0; i < sw->cfg.max_rules; i++) {
		if (sw->by_id[i] == NULL)
			continue;
		all[(*n)++] = sw->by_id[i];
		sw->by_id[i] = NULL;
	}
	memset(sw->hash, 0, (sw->hash_mask + 1) * sizeof(*sw->hash));
	sw->n_rules = 0;
	return all;
}

static void
reattach_all(struct vsw_switch *sw, struct vsw_sw_rule **all, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		link_rule(sw, all[i], hash_slot(sw, &all[i]->rule));
}

int
vsw_switch_rules_replace(
	struct vsw_switch *sw, const struct vsw_rule *rules, unsigned n)
{
	struct vsw_dpcls *cls = vsw_dpcls_create();
	struct vsw_sw_rule **old;
	unsigned n_old, i, n_gone = 0;
	struct change c;
	int rc;

	if (cls == NULL)
		return -ENOMEM;
	old = detach_all(sw, &n_old);
	if (old == NULL) {
		vsw_dpcls_destroy(cls);
		return -ENOMEM;
	}
	/* Old ids stay taken until the grace period: rule_new won't reuse. */
	rc = change_run(sw, cls, rules, n, &c);
	if (rc == 0 && (rc = publish(sw, cls)) < 0)
		change_undo(sw, &c);
	if (rc < 0) {
		reattach_all(sw, old, n_old);
		vsw_dpcls_destroy(cls);
		change_free(&c);
		free(old);
		return rc;
	}
	for (i = 0; i < c.n; i++) /* duplicates within rules[] */
		if (c.replaced[i] != NULL)
			c.replaced[n_gone++] = c.replaced[i];
	rules_release(sw, c.replaced, n_gone);
	rules_release(sw, old, n_old);
	change_free(&c);
	free(old);
	return 0;
}

unsigned
vsw_switch_n_rules(const struct vsw_switch *sw)
{
	return sw->n_rules;
}

static int
by_priority_desc(const void *a, const void *b)
{
	const struct vsw_sw_rule *x = *(const struct vsw_sw_rule *const *)a;
	const struct vsw_sw_rule *y = *(const struct vsw_sw_rule *const *)b;

	if (x->rule.priority != y->rule.priority)
		return x->rule.priority < y->rule.priority ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

void
vsw_switch_rules_dump(struct vsw_switch *sw, vsw_switch_rule_cb cb, void *arg)
{
	struct vsw_sw_rule **all = calloc(sw->n_rules + 1, sizeof(*all));
	unsigned n = 0, i;

	if (all == NULL)
		return;
	for (i = 0; i < sw->cfg.max_rules; i++)
		if (sw->by_id[i] != NULL)
			all[n++] = sw->by_id[i];
	qsort(all, n, sizeof(*all), by_priority_desc);
	for (i = 0; i < n; i++) {
		struct vsw_rule_stats s;
		const struct vsw_rule_stats *b = &sw->rule_base[all[i]->id];

		rule_stats_sum(sw, all[i]->id, &s);
		s.packets -= b->packets;
		s.bytes -= b->bytes;
		cb(&all[i]->rule, &s, arg);
	}
	free(all);
}

int
vsw_switch_rerank(struct vsw_switch *sw)
{
	const struct vsw_rule_table *rt = sw->rules;
	uint32_t n = vsw_dpcls_n_subtables(rt->cls), i, p;
	uint64_t hits[VSW_PMD_RANKED_SUBTABLES] = {0};
	struct vsw_dpcls *cls;
	int rc;

	if (n < 2 || n > VSW_PMD_RANKED_SUBTABLES)
		return 0; /* nothing to order, or not all positions counted */
	for (p = 0; p < sw->cfg.n_pmds; p++) {
		const struct vsw_pmd *pmd = sw->pmd[p];

		/* Counts of an older classifier have other positions. */
		if (__atomic_load_n(&pmd->hits_gen, __ATOMIC_ACQUIRE) !=
			rt->gen)
			continue;
		for (i = 0; i < n; i++)
			hits[i] += ctr_read(&pmd->subtable_hits[i]);
	}
	cls = vsw_dpcls_clone(rt->cls);
	if (cls == NULL)
		return -ENOMEM;
	rc = vsw_dpcls_rerank(cls, hits, n);
	if (rc == 0)
		rc = publish_cls(sw, cls, false);
	if (rc < 0)
		vsw_dpcls_destroy(cls);
	return rc;
}
