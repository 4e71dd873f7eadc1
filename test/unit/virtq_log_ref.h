/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dirty logging checked against a reference, for split and packed rings
 * alike (test_virtq_log.c): guest memory is snapshotted before a burst and
 * compared after, and every 4 KiB page whose bytes changed must have its
 * bit in the log (bit p % 8 of byte p / 8, page p = gpa >> 12). A ring type
 * plugs in through struct vlog_ring; test_virtq_log_split.c and
 * test_virtq_packed_log.c give one each and add their own limit cases.
 */
#ifndef VSW_TEST_VIRTQ_LOG_REF_H
#define VSW_TEST_VIRTQ_LOG_REF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "guest.h"

#define VLOG_PAGE 4096u

struct rte_mempool;
struct tl_rng;
struct vsw_virtq;
struct vsw_virtq_config;

/* One RX round's feature set and ring size. */
struct vlog_cfg {
	uint32_t size;
	uint64_t features;
};

/* A ring type under test; q is its fixture. */
struct vlog_ring {
	const char *name; /* the cmocka group's */
	struct tl_rng *rng;
	struct rte_mempool **pool;
	int (*setup)(void **state); /* the group's pool */
	int (*teardown)(void **state);
	/* a started queue of size entries, no log */
	void *(*create)(uint32_t size, uint64_t features);
	/* the queue created again from its config, where it left off */
	void (*restart)(void *q);
	void (*destroy)(void *q);
	struct vsw_virtq_config *(*cfg)(void *q);
	struct tg_guest *(*guest)(void *q);
	struct vsw_virtq *(*vq)(void *q);
	/* posts a random set of RX chains and makes them visible */
	void (*rx_post_random)(void *q, bool mrg);
	/* the guest takes every used RX buffer; nothing stays posted */
	void (*rx_drain)(void *q);
	/* posts one TX frame (random layout), visible to the device */
	void (*tx_post)(void *q, const uint8_t *frame, uint32_t len);
	/* dequeues up to n and frees them */
	uint16_t (*tx_dequeue)(void *q, uint16_t n);
	/* the guest takes every used TX entry */
	void (*tx_reap)(void *q);
	/* a page every TX burst writes (the used index or descriptors) */
	uint64_t (*tx_used_gpa)(void *q);
	const struct vlog_cfg *rx_cfgs;
	unsigned n_rx_cfgs;
	unsigned rounds;  /* RX bursts per config */
	uint32_t tx_size; /* the ring of the TX and config cases */
};

struct vlog_snap {
	uint8_t *copy[TG_NREGIONS];
};

void vlog_snap_take(struct tg_guest *g, struct vlog_snap *s);
void vlog_snap_free(struct vlog_snap *s);
bool vlog_bit(const uint8_t *log, uint64_t gpa);
/* Every changed page logged (else fails); returns how many changed and
 * adds to *extra those logged though unchanged. */
uint32_t vlog_snap_check(struct tg_guest *g, const struct vlog_snap *s,
	const uint8_t *log, uint32_t *extra);

/* The shared cases (RX rounds, TX rounds, log size) for ring r, then the
 * ring's own extra[0..n_extra), as one cmocka group. */
int vlog_run(const struct vlog_ring *r, const struct CMUnitTest *extra,
	size_t n_extra);

#endif /* VSW_TEST_VIRTQ_LOG_REF_H */
