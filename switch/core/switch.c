/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Switch lifetime: configuration, creation of the PMD contexts (EMC, output
 * batches, counter arrays), tables, MAC table; destruction.
 *
 * Control thread only. Everything a PMD needs is allocated here, before any
 * PMD runs, so the poll loop never allocates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "l2domain_priv.h"

void
vsw_switch_config_init(struct vsw_switch_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->n_pmds = 1;
	cfg->pmd_lcores[0] = 1;
	cfg->max_rules = 65536;
	cfg->emc_entries = 8192;
	cfg->emc_insert_inv_prob = 100;
	cfg->mac_entries = 4096;
	cfg->mac_max_age = 300;
}

static void
pmd_destroy(struct vsw_pmd *pmd)
{
	if (pmd == NULL)
		return;
	vsw_emc_destroy(pmd->emc);
	free(pmd->rule_ctr);
	free(pmd);
}

static struct vsw_pmd *
pmd_create(struct vsw_switch *sw, unsigned idx)
{
	size_t size = (sizeof(struct vsw_pmd) + 63) & ~(size_t)63;
	struct vsw_pmd *pmd = aligned_alloc(64, size);

	if (pmd == NULL)
		return NULL;
	memset(pmd, 0, sizeof(*pmd));
	pmd->sw = sw;
	pmd->idx = idx;
	pmd->lcore = sw->cfg.pmd_lcores[idx];
	pmd->cls_stats.subtable_hits = pmd->subtable_hits;
	pmd->cls_stats.n_subtable_hits = VSW_PMD_RANKED_SUBTABLES;
	pmd->rule_ctr = calloc(sw->cfg.max_rules, sizeof(*pmd->rule_ctr));
	if (sw->cfg.emc_entries > 0) {
		pmd->emc = vsw_emc_create(sw->cfg.emc_entries);
		if (pmd->emc != NULL)
			vsw_emc_set_insert_inv_prob(
				pmd->emc, sw->cfg.emc_insert_inv_prob);
		pmd->emc_inv_prob = sw->cfg.emc_insert_inv_prob;
	}
	if (pmd->rule_ctr == NULL ||
		(sw->cfg.emc_entries > 0 && pmd->emc == NULL)) {
		pmd_destroy(pmd);
		return NULL;
	}
	return pmd;
}

struct vsw_switch *
vsw_switch_create(const struct vsw_switch_config *cfg)
{
	struct vsw_switch *sw;
	unsigned i;

	if (cfg == NULL || cfg->n_pmds == 0 ||
		cfg->n_pmds > VSW_SWITCH_MAX_PMDS || cfg->max_rules == 0) {
		errno = EINVAL;
		return NULL;
	}
	sw = calloc(1, sizeof(*sw));
	if (sw == NULL)
		return NULL;
	sw->cfg = *cfg;
	sw->emc_inv_prob = cfg->emc_insert_inv_prob;
	for (i = 0; i < VSW_SWITCH_MAX_PORTS * VSW_SWITCH_MAX_PMDS; i++)
		rte_spinlock_init(&sw->txq_lock[0][0] + i);
	for (i = 0; i < cfg->n_pmds; i++)
		if ((sw->pmd[i] = pmd_create(sw, i)) == NULL)
			goto fail;
	sw->mac = mac_table_create(cfg->mac_entries, cfg->mac_max_age);
	if (sw->mac == NULL || port_table_init(sw) < 0 ||
		rule_table_init(sw) < 0 || overlay_init(sw) < 0)
		goto fail;
	return sw;
fail:
	vsw_switch_destroy(sw);
	errno = ENOMEM;
	return NULL;
}

void
vsw_switch_destroy(struct vsw_switch *sw)
{
	unsigned i;

	if (sw == NULL)
		return;
	overlay_fini(sw);
	rule_table_fini(sw);
	port_table_fini(sw);
	mac_table_destroy(sw->mac);
	for (i = 0; i < VSW_SWITCH_MAX_PMDS; i++)
		pmd_destroy(sw->pmd[i]);
	free(sw);
}

struct vsw_pmd *
vsw_switch_pmd(struct vsw_switch *sw, unsigned idx)
{
	return idx < sw->cfg.n_pmds ? sw->pmd[idx] : NULL;
}

void
vsw_switch_set_emc_insert_inv_prob(struct vsw_switch *sw, uint32_t inv_prob)
{
	__atomic_store_n(&sw->emc_inv_prob, inv_prob, __ATOMIC_RELAXED);
}

unsigned
vsw_switch_mac_age(struct vsw_switch *sw, uint64_t now)
{
	return mac_table_age(sw->mac, now);
}

int
vsw_switch_mac_lookup(struct vsw_switch *sw, const uint8_t mac[6])
{
	int port = mac_find(sw->mac, mac);

	return port < 0 ? -ENOENT : port;
}

unsigned
vsw_switch_mac_count(struct vsw_switch *sw)
{
	return mac_table_count(sw->mac);
}

void
vsw_switch_mac_flush(struct vsw_switch *sw)
{
	mac_table_flush_port(sw->mac, -1);
}
