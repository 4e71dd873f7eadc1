/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-PMD output batches, one per (destination port, tx queue), and their
 * flushing.
 *
 * Runs on the owning PMD only. Room for a whole input burst is made before
 * the burst is acted on (out_ensure_room), so actions append with no
 * "is it full" branch (seed 000); batches are sent once per poll iteration.
 * A burst from rx queue q_in goes to the (q_in % owned)-th tx queue this PMD
 * owns on the destination (vsw/port.h): the queue is chosen here, per burst,
 * not carried in the mbuf. Batches come from a fixed pool bound for one
 * iteration; should one iteration need more (port, queue) pairs than the
 * pool holds, every batch is sent early: order per queue is kept.
 *
 * tx_burst owns what it is given: it frees what it did not deliver; the
 * switch counts that as drop_tx_undelivered. A queue PMDs share is sent
 * under its (port, queue) spinlock: the only lock on a PMD.
 * Trusts the port table snapshot the PMD holds for this iteration.
 */
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "switch_priv.h"

static uint16_t
tx_locked(struct vsw_pmd *pmd, const struct vsw_port *p,
	struct vsw_out_batch *b, struct rte_mbuf **pkts, uint16_t n)
{
	rte_spinlock_t *l =
		&pmd->sw->txq_lock[b->port][b->txq % VSW_SWITCH_MAX_PMDS];
	uint16_t sent;

	ctr_add(&pmd->ctr[VSW_PMD_TXQ_LOCKED], 1);
	if (!rte_spinlock_trylock(l)) {
		ctr_add(&pmd->ctr[VSW_PMD_TXQ_CONTENDED], 1);
		rte_spinlock_lock(l);
	}
	sent = p->ops->tx_burst(p->ctx, b->txq, pkts, n);
	rte_spinlock_unlock(l);
	return sent;
}

void
out_tx(struct vsw_pmd *pmd, const struct vsw_port *p, struct vsw_out_batch *b,
	struct rte_mbuf **pkts, uint16_t n)
{
	struct vsw_port_ctr *pc = &pmd->port_ctr[b->port];
	uint16_t sent;

	if (likely(!b->locked))
		sent = p->ops->tx_burst(p->ctx, b->txq, pkts, n);
	else
		sent = tx_locked(pmd, p, b, pkts, n);
	if (unlikely(sent > n))
		sent = n; /* a broken port: never trust past n */
	ctr_add(&pmd->ctr[VSW_PMD_DROP_TX_UNDELIVERED], n - sent);
	ctr_add(&pmd->ctr[VSW_PMD_TX], sent);
	ctr_add(&pmd->ctr[VSW_PMD_BATCHES], 1);
	ctr_add(&pmd->ctr[VSW_PMD_BATCH_PKTS], n);
	ctr_add(&pc->tx, sent);
	ctr_add(&pc->tx_drops, n - sent);
}

void
out_flush_one(struct vsw_pmd *pmd, struct vsw_out_batch *b)
{
	const struct vsw_port *p = pmd->pt->port[b->port];
	uint32_t capa;

	if (unlikely(p == NULL)) {
		/* Not reached while appends check presence; kept safe. */
		rte_pktmbuf_free_bulk(b->pkts, b->n);
		ctr_add(&pmd->ctr[VSW_PMD_DROP_PORT_GONE], b->n);
		ctr_add(&pmd->ctr[VSW_PMD_BATCHES], 1);
		ctr_add(&pmd->ctr[VSW_PMD_BATCH_PKTS], b->n);
		ctr_add(&pmd->port_ctr[b->port].tx_drops, b->n);
		b->n = 0;
		return;
	}
	/* Per batch: a port that takes every offload sends as it is; for
	 * the others, one pass over the flags decides (offload.c). */
	capa = p->ops->tx_offloads != NULL ? p->ops->tx_offloads(p->ctx) : 0;
	if (unlikely(capa != VSW_PORT_OL_ALL &&
		    offload_needed(b->pkts, b->n, capa)))
		offload_send(pmd, p, b, capa);
	else
		out_tx(pmd, p, b, b->pkts, b->n);
	b->n = 0;
}

void
out_ensure_room(struct vsw_pmd *pmd, unsigned n)
{
	unsigned i;

	for (i = 0; i < pmd->n_batches; i++) {
		struct vsw_out_batch *b = &pmd->batch[i];

		if (b->n + n > VSW_OUT_BATCH_CAP)
			out_flush_one(pmd, b);
	}
}

void
out_flush_all(struct vsw_pmd *pmd)
{
	unsigned i;

	for (i = 0; i < pmd->n_batches; i++) {
		struct vsw_out_batch *b = &pmd->batch[i];

		if (b->n != 0)
			out_flush_one(pmd, b);
		pmd->batch_of[b->port][b->slot] = 0;
	}
	pmd->n_batches = 0;
}

struct vsw_out_batch *
out_batch_find(struct vsw_pmd *pmd, uint16_t port)
{
	const struct vsw_port_txq *t = &pmd->pt->port[port]->txq[pmd->idx];
	unsigned q = pmd->in_queue, slot = q < t->n_spread ? q : q % t->n_spread;
	unsigned idx = pmd->batch_of[port][slot];
	struct vsw_out_batch *b;

	if (idx != 0)
		return &pmd->batch[idx - 1];
	if (unlikely(pmd->n_batches == VSW_OUT_BATCHES))
		out_flush_all(pmd); /* whole packets only: safe mid-burst */
	b = &pmd->batch[pmd->n_batches++];
	b->n = 0;
	b->port = port;
	b->slot = (uint8_t)slot;
	b->txq = (uint16_t)(t->first + slot * t->stride);
	b->locked = t->locked;
	pmd->batch_of[port][slot] = pmd->n_batches;
	return b;
}
