/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MAC learning table for the "normal" action.
 *
 * PMDs learn and look up concurrently without locks; the control thread ages
 * (vsw_switch_mac_age) and flushes. Each slot's identity is one 64-bit word
 * (MAC << 16 | port + 1, 0 = empty) changed only by compare-and-swap, so a
 * reader sees either a whole old entry or a whole new one. The "last seen"
 * stamp is a coarse epoch (the aging clock), stored only when it changes, so
 * a busy MAC costs a read per packet, not a shared write. Races between
 * learners can at worst send a few packets to a stale port or flood them,
 * as in any learning switch. Trusts the caller for port numbers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "switch_priv.h"

#define PROBE 4 /* slots tried from the hash position */

struct vsw_mac_slot {
	uint64_t word;
	uint32_t seen; /* epoch of the last packet from this MAC */
	uint32_t pad;
};

struct vsw_mac_table {
	uint32_t mask;
	uint32_t max_age;
	uint32_t epoch;
	struct vsw_mac_slot *slot;
};

static inline uint64_t
mac_u64(const uint8_t m[6])
{
	return (uint64_t)m[0] << 40 | (uint64_t)m[1] << 32 |
	       (uint64_t)m[2] << 24 | (uint64_t)m[3] << 16 |
	       (uint64_t)m[4] << 8 | m[5];
}

static inline uint32_t
mac_hash(uint64_t mac)
{
	return (uint32_t)((mac * 0x9e3779b97f4a7c15ull) >> 32);
}

struct vsw_mac_table *
mac_table_create(uint32_t entries, uint32_t max_age)
{
	struct vsw_mac_table *t;
	uint32_t n = 16;

	while (n < entries && n < (1u << 24))
		n <<= 1;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->slot = calloc(n + PROBE, sizeof(*t->slot));
	if (t->slot == NULL) {
		free(t);
		return NULL;
	}
	t->mask = n - 1;
	t->max_age = max_age;
	return t;
}

void
mac_table_destroy(struct vsw_mac_table *t)
{
	if (t == NULL)
		return;
	free(t->slot);
	free(t);
}

uint32_t
mac_table_epoch(const struct vsw_mac_table *t)
{
	return __atomic_load_n(&t->epoch, __ATOMIC_RELAXED);
}

static inline void
touch(struct vsw_mac_slot *s, uint32_t epoch)
{
	if (__atomic_load_n(&s->seen, __ATOMIC_RELAXED) != epoch)
		__atomic_store_n(&s->seen, epoch, __ATOMIC_RELAXED);
}

void
mac_learn(struct vsw_mac_table *t, const uint8_t src[6], uint16_t in_port,
	uint32_t epoch)
{
	uint64_t mac = mac_u64(src);
	uint64_t want = mac << 16 | (uint64_t)(in_port + 1u);
	struct vsw_mac_slot *base, *empty = NULL;
	unsigned i;

	if ((src[0] & 1) || mac == 0)
		return; /* multicast or all-zero sources are bogus */
	base = &t->slot[mac_hash(mac) & t->mask];
	for (i = 0; i < PROBE; i++) {
		uint64_t w = __atomic_load_n(&base[i].word, __ATOMIC_ACQUIRE);

		if (w == want) {
			touch(&base[i], epoch);
			return;
		}
		if (w != 0 && w >> 16 == mac) { /* moved to another port */
			__atomic_store_n(
				&base[i].seen, epoch, __ATOMIC_RELAXED);
			__atomic_compare_exchange_n(&base[i].word, &w, want,
				false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
			return;
		}
		if (w == 0 && empty == NULL)
			empty = &base[i];
	}
	if (empty == NULL)
		empty = &base[0]; /* all busy: replace the home slot */
	uint64_t old = __atomic_load_n(&empty->word, __ATOMIC_RELAXED);
	__atomic_store_n(&empty->seen, epoch, __ATOMIC_RELAXED);
	__atomic_compare_exchange_n(&empty->word, &old, want, false,
		__ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

int
mac_find(const struct vsw_mac_table *t, const uint8_t m[6])
{
	uint64_t mac = mac_u64(m);
	const struct vsw_mac_slot *base = &t->slot[mac_hash(mac) & t->mask];
	unsigned i;

	for (i = 0; i < PROBE; i++) {
		uint64_t w = __atomic_load_n(&base[i].word, __ATOMIC_ACQUIRE);

		if (w != 0 && w >> 16 == mac)
			return (int)(w & 0xffff) - 1;
	}
	return -1;
}

/* Clear a slot unless a PMD changed it meanwhile. */
static unsigned
clear_slot(struct vsw_mac_slot *s, uint64_t w)
{
	return __atomic_compare_exchange_n(&s->word, &w, 0, false,
		       __ATOMIC_RELEASE, __ATOMIC_RELAXED)
		       ? 1
		       : 0;
}

unsigned
mac_table_age(struct vsw_mac_table *t, uint64_t now)
{
	uint32_t e = (uint32_t)now;
	unsigned i, removed = 0;

	__atomic_store_n(&t->epoch, e, __ATOMIC_RELAXED);
	for (i = 0; i <= t->mask + PROBE - 1; i++) {
		struct vsw_mac_slot *s = &t->slot[i];
		uint64_t w = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
		uint32_t seen = __atomic_load_n(&s->seen, __ATOMIC_RELAXED);

		if (w != 0 && (uint32_t)(e - seen) > t->max_age)
			removed += clear_slot(s, w);
	}
	return removed;
}

void
mac_table_flush_port(struct vsw_mac_table *t, int port)
{
	unsigned i;

	for (i = 0; i <= t->mask + PROBE - 1; i++) {
		struct vsw_mac_slot *s = &t->slot[i];
		uint64_t w = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);

		if (w != 0 && (port < 0 || (int)(w & 0xffff) - 1 == port))
			clear_slot(s, w);
	}
}

unsigned
mac_table_count(const struct vsw_mac_table *t)
{
	unsigned i, n = 0;

	for (i = 0; i <= t->mask + PROBE - 1; i++)
		n += __atomic_load_n(&t->slot[i].word, __ATOMIC_RELAXED) != 0;
	return n;
}

void
mac_table_forget(struct vsw_mac_table *t, const uint8_t m[6])
{
	uint64_t mac = mac_u64(m);
	struct vsw_mac_slot *base = &t->slot[mac_hash(mac) & t->mask];
	unsigned i;

	for (i = 0; i < PROBE; i++) {
		uint64_t w = __atomic_load_n(&base[i].word, __ATOMIC_ACQUIRE);

		if (w != 0 && w >> 16 == mac)
			clear_slot(&base[i], w);
	}
}

void
mac_table_walk(const struct vsw_mac_table *t, mac_walk_fn fn, void *arg)
{
	uint32_t e = mac_table_epoch(t);
	unsigned i;

	for (i = 0; i <= t->mask + PROBE - 1; i++) {
		uint64_t w = __atomic_load_n(&t->slot[i].word, __ATOMIC_ACQUIRE);
		uint32_t seen = __atomic_load_n(&t->slot[i].seen,
			__ATOMIC_RELAXED);
		uint8_t mac[6];

		if (w == 0)
			continue;
		for (unsigned b = 0; b < 6; b++)
			mac[b] = (uint8_t)(w >> (56 - 8 * b));
		fn(mac, (int)(w & 0xffff) - 1, e - seen, arg);
	}
}
