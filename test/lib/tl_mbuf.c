/* SPDX-License-Identifier: BSD-3-Clause */
/* mbufs for tests (see tl_mbuf.h). Test code: trusts its callers. */
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "tl_mbuf.h"
#include "tl_rng.h"

int
tl_eal_init(const char *prog, const char *file_prefix)
{
	char prefix[128];
	char *argv[] = {(char *)(uintptr_t)prog, "--no-huge", "-m", "256",
		"--no-pci", "--no-shconf", prefix, "-l", "0",
		"--log-level=*:error", NULL};

	snprintf(prefix, sizeof(prefix), "--file-prefix=%s", file_prefix);
	return rte_eal_init((int)RTE_DIM(argv) - 1, argv);
}

/* head_off < 0: the pool's default headroom (or a random one with r). */
static struct rte_mbuf *
build(struct rte_mempool *mp, const uint8_t *data, uint32_t len,
	struct tl_rng *r, uint32_t max_seg, int head_off)
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
		if (r != NULL)
			m->data_off = (uint16_t)tl_rand_range(
				r, 0, RTE_PKTMBUF_HEADROOM);
		else if (head == NULL && head_off >= 0)
			m->data_off = (uint16_t)head_off;
		room = rte_pktmbuf_tailroom(m);
		if (max_seg != 0 && room > max_seg)
			room = max_seg;
		k = len - off < room ? len - off : room;
		if (r != NULL && k > 1 && tl_rand_range(r, 0, 1))
			k = tl_rand_range(r, 1, k);
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

struct rte_mbuf *
tl_mbuf_build(struct rte_mempool *mp, const uint8_t *data, uint32_t len,
	struct tl_rng *r, uint32_t max_seg)
{
	return build(mp, data, len, r, max_seg, -1);
}

struct rte_mbuf *
tl_mbuf_build_at(struct rte_mempool *mp, const uint8_t *data, uint32_t len,
	uint32_t max_seg, uint16_t data_off)
{
	return build(mp, data, len, NULL, max_seg, data_off);
}

bool
tl_mbuf_equal(const struct rte_mbuf *m, const uint8_t *data, uint32_t len)
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
