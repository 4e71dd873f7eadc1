/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-PMD output batches (one per destination port) and their flushing.
 *
 * Runs on the owning PMD only. Room for a whole input burst is made before
 * the burst is acted on (out_ensure_room), so actions append with no
 * "is it full" branch (seed 000); batches are sent once per poll iteration.
 * Trusts the port table snapshot the PMD holds for this iteration; whatever
 * a port's tx_burst refuses is freed here and counted as a tx drop.
 */
#include <rte_mbuf.h>

#include "switch_priv.h"

static void
flush_one(struct vsw_pmd *pmd, uint16_t port_no)
{
	struct vsw_out_batch *b = &pmd->batch[port_no];
	const struct vsw_port *p = pmd->pt->port[port_no];
	struct vsw_port_ctr *pc = &pmd->port_ctr[port_no];
	uint16_t n = b->n, sent = 0;

	if (likely(p != NULL)) {
		sent = p->ops->tx_burst(
			p->ctx, (uint16_t)(pmd->idx % p->n_txq), b->pkts, n);
		if (unlikely(sent > n))
			sent = n; /* a broken port: never trust past n */
		ctr_add(&pmd->ctr[VSW_PMD_DROP_TX_FULL], n - sent);
	} else {
		ctr_add(&pmd->ctr[VSW_PMD_DROP_PORT_GONE], n);
	}
	if (unlikely(sent < n))
		rte_pktmbuf_free_bulk(&b->pkts[sent], n - sent);
	ctr_add(&pmd->ctr[VSW_PMD_TX], sent);
	ctr_add(&pmd->ctr[VSW_PMD_BATCHES], 1);
	ctr_add(&pmd->ctr[VSW_PMD_BATCH_PKTS], n);
	ctr_add(&pc->tx, sent);
	ctr_add(&pc->tx_drops, n - sent);
	b->n = 0;
}

void
out_ensure_room(struct vsw_pmd *pmd, unsigned n)
{
	unsigned i, j = 0;

	/* Flushed batches leave the dirty list; the rest keep their order. */
	for (i = 0; i < pmd->n_dirty; i++) {
		uint16_t port = pmd->dirty[i];

		if (pmd->batch[port].n + n > VSW_OUT_BATCH_CAP)
			flush_one(pmd, port);
		else
			pmd->dirty[j++] = port;
	}
	pmd->n_dirty = (uint16_t)j;
}

void
out_flush_all(struct vsw_pmd *pmd)
{
	unsigned i;

	for (i = 0; i < pmd->n_dirty; i++)
		flush_one(pmd, pmd->dirty[i]);
	pmd->n_dirty = 0;
}
