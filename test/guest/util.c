/* SPDX-License-Identifier: BSD-3-Clause */
/* Test helpers (see util.h). Test code: trusts its callers. */
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "util.h"

int
tg_eal_init(const char *prog, const char *file_prefix)
{
	char prefix[128];
	char *argv[] = {(char *)(uintptr_t)prog, "--no-huge", "-m", "256",
		"--no-pci", "--no-shconf", prefix, "-l", "0",
		"--log-level=*:error", NULL};

	snprintf(prefix, sizeof(prefix), "--file-prefix=%s", file_prefix);
	return rte_eal_init((int)RTE_DIM(argv) - 1, argv);
}

void
tg_rng_seed(struct tg_rng *r, uint64_t seed)
{
	r->s = seed != 0 ? seed : 0x9e3779b97f4a7c15ull;
}

uint64_t
tg_rand(struct tg_rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dull;
}

uint32_t
tg_rand_range(struct tg_rng *r, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(tg_rand(r) % ((uint64_t)hi - lo + 1));
}

void
tg_rand_bytes(struct tg_rng *r, uint8_t *p, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(tg_rand(r) >> 56);
}

struct rte_mbuf *
tg_mbuf_build(struct rte_mempool *mp, const uint8_t *data, uint32_t len,
	struct tg_rng *r, uint32_t max_seg)
{
	struct rte_mbuf *head = NULL, *last = NULL;
	uint32_t off = 0;

	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		uint32_t room, k;

		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		m->data_off = (uint16_t)tg_rand_range(r, 0, RTE_PKTMBUF_HEADROOM);
		room = rte_pktmbuf_tailroom(m);
		if (max_seg != 0 && room > max_seg)
			room = max_seg;
		k = len - off < room ? len - off : room;
		if (k > 1 && tg_rand_range(r, 0, 1))
			k = tg_rand_range(r, 1, k);
		memcpy(rte_pktmbuf_mtod(m, uint8_t *), data + off, k);
		m->data_len = (uint16_t)k;
		off += k;
		if (head == NULL) {
			head = m;
		} else {
			last->next = m;
			head->nb_segs++;
		}
		last = m;
	} while (off < len);
	head->pkt_len = len;
	return head;
}

bool
tg_mbuf_equal(const struct rte_mbuf *m, const uint8_t *data, uint32_t len)
{
	const struct rte_mbuf *s;
	uint32_t off = 0, nseg = 0;

	if (m->pkt_len != len)
		return false;
	for (s = m; s != NULL; s = s->next) {
		if (off + s->data_len > len ||
			memcmp(rte_pktmbuf_mtod(s, const uint8_t *), data + off,
				s->data_len) != 0)
			return false;
		off += s->data_len;
		nseg++;
	}
	return off == len && nseg == m->nb_segs;
}
