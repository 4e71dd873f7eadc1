/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vswd's datapath assembly: the mbuf pool, the switch core and its PMDs on
 * the EAL worker lcores, and the orderly teardown (PMDs stop first, then
 * ports go, then every mbuf must be back in the pool). Control thread.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <vsw/switch.h>

#include "vswd_priv.h"

#define POOL_MBUFS 32767u /* 2^n - 1 is the mempool's sweet spot */
#define POOL_CACHE 256u

int
vswd_dp_start(struct vswd *d)
{
	struct vsw_switch_config cfg;
	unsigned lcore;
	int rc;

	d->pool = rte_pktmbuf_pool_create("vsw_mbufs", POOL_MBUFS, POOL_CACHE,
		0, RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (d->pool == NULL) {
		fprintf(stderr, "vswd: cannot create the mbuf pool (%u mbufs): "
			"%s; give the EAL more memory (-m)\n", POOL_MBUFS,
			rte_strerror(rte_errno));
		return -1;
	}
	vsw_switch_config_init(&cfg);
	cfg.seg_pool = d->pool; /* software segmentation: same mbufs */
	cfg.pmd_thread_init = vsw_vport_pmd_bind; /* the watchdog's slot */
	cfg.n_pmds = 0;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (cfg.n_pmds == VSW_SWITCH_MAX_PMDS)
			break;
		cfg.pmd_lcores[cfg.n_pmds++] = lcore;
	}
	if (cfg.n_pmds == 0) {
		fprintf(stderr, "vswd: no PMD lcore: give at least two lcores "
			"(the main one is for control), e.g. --pmd-cpus 1\n");
		return -1;
	}
	d->n_pmds = cfg.n_pmds;
	memcpy(d->pmd_lcores, cfg.pmd_lcores, sizeof(d->pmd_lcores));
	d->sw = vsw_switch_create(&cfg);
	if (d->sw == NULL) {
		fprintf(stderr, "vswd: cannot create the switch: %s\n",
			strerror(errno));
		return -1;
	}
	rc = vsw_switch_pmds_start(d->sw);
	if (rc < 0) {
		fprintf(stderr, "vswd: cannot start PMDs: %s\n", strerror(-rc));
		return -1;
	}
	VSWD_LOG(INFO, "%u PMD(s) started, pool of %u mbufs\n", d->n_pmds,
		POOL_MBUFS);
	return 0;
}

void
vswd_dp_stop(struct vswd *d)
{
	if (d->sw != NULL) {
		vsw_switch_pmds_stop(d->sw);
		vswd_ports_del_all(d);
		vsw_switch_destroy(d->sw);
		d->sw = NULL;
	}
	if (d->pool != NULL) {
		unsigned in_use = rte_mempool_in_use_count(d->pool);

		VSWD_LOG(NOTICE, "mbuf pool: %u in use, %u available of %u%s\n",
			in_use, rte_mempool_avail_count(d->pool), POOL_MBUFS,
			in_use ? " (LEAK)" : "");
		if (in_use != 0)
			d->exit_code = 1;
		rte_mempool_free(d->pool);
		d->pool = NULL;
	}
}
