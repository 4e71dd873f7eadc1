/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vswd's command table: the index of everything the control socket and the
 * start-up config can do. Handlers run on the control thread, parse their
 * arguments here (never in the datapath) and call typed setters/getters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>

#include <vsw/vswd.h>

#include "vswd_priv.h"

/* The configuration vswd runs when no --config is given. */
static const char *const default_config[] = {
	"port-add vm1 vhost-user",
	"port-add vm2 vhost-user",
	"flow-add priority=0,actions=normal",
	NULL,
};

static void
cmd_version(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	(void)ctx;
	(void)argc;
	(void)argv;
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"version\": \"%s\"}\n",
			VSWD_VERSION);
	else
		vsw_ctl_reply_printf(r, "vswd %s\n", VSWD_VERSION);
}

static void
cmd_shutdown(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	(void)argc;
	(void)argv;
	vswd_request_stop(ctx, "vswctl shutdown");
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"shutdown\": true}\n");
	else
		vsw_ctl_reply_printf(r, "shutting down\n");
}

const struct vsw_ctl_command vswd_commands[] = {
	{"port-add", "NAME vhost-user|vhost-user-client|dpdk [KEY=VALUE...]", 2,
		9, vswd_cmd_port_add, "add a port (see README: ports)"},
	{"port-del", "NAME", 1, 1, vswd_cmd_port_del, "delete a port"},
	{"port-show", "[NAME]", 0, 1, vswd_cmd_port_show,
		"ports: counters, drops by reason, features, link state"},
	{"flow-add", "RULE", 1, 32, vswd_cmd_flow_add,
		"add a rule, e.g. in_port=vm1,ip,actions=output:vm2"},
	{"flow-del", "MATCH", 1, 32, vswd_cmd_flow_del,
		"delete the rule with exactly this match and priority"},
	{"flow-dump", "", 0, 0, vswd_cmd_flow_dump, "rules with their hits"},
	{"flow-flush", "", 0, 0, vswd_cmd_flow_flush, "delete every rule"},
	{"trace", "FLOW", 1, 32, vswd_cmd_trace,
		"where a packet would go: subtable, rule, actions, outputs "
		"(FLOW as a match, with in_port=)"},
	{"pmd-stats-show", "[PMD]", 0, 1, vswd_cmd_pmd_stats_show,
		"per-PMD packet, cache, drop and cycle counters"},
	{"pmd-stats-clear", "[PMD]", 0, 1, vswd_cmd_pmd_stats_clear,
		"reset PMD counters"},
	{"pmd-perf-show", "[PMD]", 0, 1, vswd_cmd_pmd_perf_show,
		"iterations, busy ratio, cycles per packet"},
	{"pmd-rxq-show", "", 0, 0, vswd_cmd_pmd_rxq_show,
		"which PMD polls which rx queue, and its measured cycles"},
	{"pmd-rxq-rebalance", "[cycles|roundrobin]", 0, 1,
		vswd_cmd_pmd_rxq_rebalance,
		"reassign rx queues to PMDs by measured cycles (default)"},
	{"pmd-sleep-set", "MICROSECONDS", 1, 1, vswd_cmd_pmd_sleep_set,
		"idle PMDs sleep in growing steps up to this (0 = off)"},
	{"tx-retries-set", "N [PORT]", 1, 2, vswd_cmd_tx_retries_set,
		"vhost-user tx retries on a full guest ring (all or one port)"},
	{"copy-impl-show", "", 0, 0, vswd_cmd_copy_impl_show,
		"copy engine implementations"},
	{"copy-impl-set", "NAME", 1, 1, vswd_cmd_copy_impl_set,
		"select the copy implementation (auto, scalar, avx2, ...)"},
	{"lookup-impl-show", "", 0, 0, vswd_cmd_lookup_impl_show,
		"classifier lookup implementations"},
	{"lookup-impl-set", "NAME", 1, 1, vswd_cmd_lookup_impl_set,
		"select the classifier lookup implementation"},
	{"emc-set", "on|off|INV_PROB", 1, 1, vswd_cmd_emc_set,
		"exact-match cache insertion probability 1/INV_PROB"},
	{"config-show", "", 0, 0, vswd_cmd_config_show,
		"the running configuration, as config-file commands"},
	{"metrics", "", 0, 0, vswd_cmd_metrics,
		"counters in the Prometheus text format (as /metrics)"},
	{"metrics-endpoint", "[on|off|[ADDR:]PORT]", 0, 1,
		vswd_cmd_metrics_endpoint,
		"show or set the HTTP metrics endpoint (127.0.0.1)"},
	{"log-level", "[TYPE] LEVEL", 1, 2, vswd_cmd_log_level,
		"set the log level of TYPE (a pattern; default vsw.*)"},
	{"log-show", "", 0, 0, vswd_cmd_log_show,
		"log destination, lines written/dropped, level per type"},
	{"log-reopen", "", 0, 0, vswd_cmd_log_reopen,
		"reopen the log file (after logrotate moved it)"},
	{"overlay-set", "underlay=PORT local-ip=A.B.C.D [mtu=N]", 2, 3,
		vswd_cmd_overlay_set,
		"the local VXLAN VTEP on a dpdk port (mtu: the underlay's)"},
	{"overlay-show", "", 0, 0, vswd_cmd_overlay_show,
		"local VTEP, neighbour table (remote VTEP MACs), counters"},
	{"domain-add", "VNI", 1, 1, vswd_cmd_domain_add,
		"add an L2 domain (VXLAN VNI 1..16777215)"},
	{"domain-del", "VNI", 1, 1, vswd_cmd_domain_add, "delete a domain"},
	{"domain-port-add", "VNI PORT", 2, 2, vswd_cmd_domain_port,
		"switch PORT's frames in the domain instead of by rules"},
	{"domain-port-del", "VNI PORT", 2, 2, vswd_cmd_domain_port,
		"PORT leaves the domain (back to the rules)"},
	{"vtep-add", "VNI IP", 2, 2, vswd_cmd_vtep,
		"a remote VTEP in the domain's flood list"},
	{"vtep-del", "VNI IP", 2, 2, vswd_cmd_vtep,
		"remove a remote VTEP from the flood list"},
	{"mac-add", "VNI MAC IP", 3, 3, vswd_cmd_mac,
		"a remote MAC behind VTEP IP"},
	{"mac-del", "VNI MAC", 2, 2, vswd_cmd_mac, "remove a remote MAC"},
	{"domain-show", "[VNI]", 0, 1, vswd_cmd_domain_show,
		"domains: ports, VTEPs, MAC table, counters"},
	{"version", "", 0, 0, cmd_version, "show vswd's version"},
	{"shutdown", "", 0, 0, cmd_shutdown, "stop vswd gracefully"},
};
const size_t vswd_n_commands = sizeof(vswd_commands) / sizeof(vswd_commands[0]);

static int
run_line(struct vswd *d, const char *where, unsigned lineno, char *line)
{
	struct vsw_ctl_reply r;
	int rc;

	/* Blank lines and comments are fine in a config file. */
	line += strspn(line, " \t\r\n");
	if (*line == '\0' || *line == '#')
		return 0;
	vsw_ctl_reply_init(&r, false);
	rc = vsw_ctl_execute(d->cmds, d->n_cmds, d, line, &r);
	if (rc != 0) {
		fprintf(stderr, "vswd: %s:%u: %.*s", where, lineno, (int)r.len,
			r.buf);
		vsw_ctl_reply_free(&r);
		return -1;
	}
	vsw_ctl_reply_free(&r);
	return 0;
}

int
vswd_config_run(struct vswd *d, const char *path)
{
	char line[VSW_CTL_LINE_MAX + 1];
	unsigned lineno = 0;
	FILE *f;
	int rc = 0;

	if (path != NULL && path[0] == '\0')
		return 0;
	if (path == NULL) {
		for (size_t i = 0; default_config[i] != NULL; i++) {
			snprintf(line, sizeof(line), "%s", default_config[i]);
			if (run_line(d, "default config", (unsigned)i + 1,
					line) < 0)
				return -1;
		}
		return 0;
	}
	f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "vswd: cannot read config %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			fprintf(stderr, "vswd: %s:%u: line too long\n", path,
				lineno);
			rc = -1;
			break;
		}
		rc = run_line(d, path, lineno, line);
	}
	fclose(f);
	return rc;
}
