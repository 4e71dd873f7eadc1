/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vswd internals shared by the daemon's files (main, options, commands).
 * Control thread only.
 */
#ifndef VSWD_PRIV_H
#define VSWD_PRIV_H

#include <stdbool.h>
#include <sys/types.h>
#include <stddef.h>

#include <rte_log.h>

#include <vsw/ctl.h>

#include <vsw/port.h>
#include <vsw/switch.h>
#include <vsw/vport.h>

struct ev_loop;
struct rte_mempool;
struct vswd_persist;
struct vswd_metrics;
struct vswd_rule_times;

#define VSWD_EAL_ARGS_MAX 64

extern int vswd_logtype;
#define VSWD_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, vswd_logtype, "vswd: " fmt, ##__VA_ARGS__)

enum vswd_log_dest {
	VSWD_LOG_STDERR,      /* default: the journal captures it */
	VSWD_LOG_SYSLOG,      /* openlog/syslog */
	VSWD_LOG_SYSLOG_PATH, /* syslog:PATH, datagrams to that socket */
	VSWD_LOG_FILE,        /* --log-file PATH, log-reopen */
};

#define VSWD_LOG_LEVELS_MAX 16

struct vswd_opts {
	const char *run_dir;
	const char *config;     /* NULL: built-in default config */
	const char *pmd_cpus;   /* NULL: every CPU but the main one */
	const char *state;      /* NULL: the running configuration is not kept */
	const char *memory;     /* MB, NULL: the default */
	bool no_default_config; /* --no-default-config: start empty */
	const char *metrics;    /* --metrics [ADDR:]PORT; NULL: off */
	bool allow_devargs_files; /* --allow-devargs-files */
	enum vswd_log_dest log_dest;
	const char *log_path;   /* file or syslog socket */
	unsigned n_log_levels;  /* --log-level TYPE:LEVEL, in order */
	const char *log_levels[VSWD_LOG_LEVELS_MAX];
	int eal_argc;
	char *eal_argv[VSWD_EAL_ARGS_MAX];
};

enum vswd_port_type {
	VSWD_PORT_VHOST, /* vhost-user socket (server or client) */
	VSWD_PORT_DPDK,  /* DPDK ethdev port by devargs */
};

/* What "port-add" asked for, parsed. */
struct vswd_port_args {
	enum vswd_port_type type;
	bool client;          /* vhost-user: connect instead of listen */
	char path[108];       /* vhost-user socket; "" = RUN_DIR/NAME.sock */
	char devargs[256];    /* dpdk */
	uint16_t queues;      /* queue pairs */
	bool no_offloads;     /* vhost-user: offloads=off */
	uint32_t sock_mode;   /* 0 = default 0660 */
	uid_t owner;
	gid_t group;
	uint32_t max_ring_size; /* vhost-user; 0 = VSW_VPORT_RING_SIZE_DEFAULT */
};

struct vswd_port {
	char name[VSW_PORT_NAME_MAX];
	enum vswd_port_type type;
	char path[256];       /* socket path or ethdev name */
	uint16_t port_no;     /* the switch's number */
	uint16_t queues;
	bool no_offloads;     /* vhost-user: offloads=off at port-add */
	uint16_t eth_port;
	uint32_t max_ring_size; /* vhost-user: the cap in force */
	struct vsw_vport *vport;
	struct rte_mempool *pool;
	bool own_pool;        /* dpdk: pool is the port's (eth_pool) */
	/* What the switch polls (switch/ports/): the port pointer it gets. */
	struct vsw_port_vhost vhost;
	struct vsw_port_eth eth;
	struct vswd_port *next;
};

struct vswd {
	struct vswd_opts opts;
	struct rte_mempool *pool;
	struct vsw_switch *sw;
	unsigned n_pmds;
	unsigned pmd_lcores[VSW_SWITCH_MAX_PMDS];
	struct vswd_port *ports;
	/* tx-retries-set without a port: for vhost ports added later too. */
	bool tx_retries_set;
	unsigned tx_retries;
	struct ev_loop *loop;
	struct vsw_ctl_server *ctl;
	/* The table the control socket and the config file run: vswd_commands
	 * wrapped by vswd_persist.c to record and save changes. */
	const struct vsw_ctl_command *cmds;
	size_t n_cmds;
	struct vswd_persist *persist;
	struct vswd_metrics *metrics;       /* NULL: endpoint off */
	struct vswd_rule_times *rule_times; /* install time per rule */
	char ctl_path[256];
	char pid_path[256];
	int pid_fd;
	bool stopping;
	int exit_code;
	uint16_t overlay_mtu_given; /* overlay-set mtu=N, 0: the device's */
};

/* Parse argv into opts (EAL defaults filled in). 0, or -1 after a message. */
int vswd_opts_parse(struct vswd_opts *o, int argc, char **argv);
void vswd_opts_free(struct vswd_opts *o);

/* The first devargs key (into key) that makes vswd open a file, socket,
 * host interface or program by name, or NULL (vswd_devargs.c). */
const char *vswd_devargs_named_key(const char *devargs, char *key,
	size_t len);

/* The command table (vswd_cmds.c). */
extern const struct vsw_ctl_command vswd_commands[];
extern const size_t vswd_n_commands;

/* Run a config file (or the built-in default when path is NULL): every
 * line a command. Returns 0, or -1 after printing "file:line: error". */
int vswd_config_run(struct vswd *d, const char *path);

/* Running configuration and state file (vswd_persist.c). init wraps the
 * command table into d->cmds; start runs the state file if there is one,
 * else config (as vswd_config_run), then writes the state. 0 or -1 after a
 * message. */
int vswd_persist_init(struct vswd *d);
int vswd_persist_start(struct vswd *d, const char *config);
void vswd_persist_free(struct vswd *d);

/* Datapath (vswd_dp.c): mempool, switch, PMDs. 0 or -1 after a message. */
int vswd_dp_start(struct vswd *d);
/* Stop PMDs, delete every port, log the pool counts, free the switch. */
void vswd_dp_stop(struct vswd *d);

/* Ports (vswd_ports.c). err gets a one-line reason on failure. */
int vswd_port_add(struct vswd *d, const char *name,
	const struct vswd_port_args *a, char *err, size_t errlen);
int vswd_port_del(struct vswd *d, const char *name);
struct vswd_port *vswd_port_find(struct vswd *d, const char *name);
void vswd_ports_del_all(struct vswd *d);

/* Command handlers, by group (vswd_cmds_*.c); the table is vswd_cmds.c. */
#define VSWD_CMD(fn) \
	void fn(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
VSWD_CMD(vswd_cmd_port_add);
VSWD_CMD(vswd_cmd_port_del);
VSWD_CMD(vswd_cmd_port_show);
VSWD_CMD(vswd_cmd_flow_add);
VSWD_CMD(vswd_cmd_flow_del);
VSWD_CMD(vswd_cmd_flow_dump);
VSWD_CMD(vswd_cmd_flow_flush);
VSWD_CMD(vswd_cmd_pmd_stats_show);
VSWD_CMD(vswd_cmd_pmd_stats_clear);
VSWD_CMD(vswd_cmd_pmd_perf_show);
VSWD_CMD(vswd_cmd_pmd_rxq_show);
VSWD_CMD(vswd_cmd_pmd_rxq_rebalance);
VSWD_CMD(vswd_cmd_pmd_sleep_set);
VSWD_CMD(vswd_cmd_tx_retries_set);
VSWD_CMD(vswd_cmd_copy_impl_show);
VSWD_CMD(vswd_cmd_copy_impl_set);
VSWD_CMD(vswd_cmd_datapath_impl_show);
VSWD_CMD(vswd_cmd_datapath_impl_set);
VSWD_CMD(vswd_cmd_lookup_impl_show);
VSWD_CMD(vswd_cmd_lookup_impl_set);
VSWD_CMD(vswd_cmd_emc_set);
VSWD_CMD(vswd_cmd_config_show);

/* Overlay (vswd_cmds_overlay.c sets, vswd_cmds_overlay_show.c shows);
 * config lines for the running configuration, emitted after the ports. */
VSWD_CMD(vswd_cmd_overlay_set);
VSWD_CMD(vswd_cmd_overlay_show);
VSWD_CMD(vswd_cmd_domain_add);
VSWD_CMD(vswd_cmd_domain_port);
VSWD_CMD(vswd_cmd_vtep);
VSWD_CMD(vswd_cmd_mac);
VSWD_CMD(vswd_cmd_domain_show);
typedef void (*vswd_emit_fn)(struct vsw_ctl_reply *r, const char *line,
	bool first);
void vswd_overlay_config_lines(struct vswd *d, struct vsw_ctl_reply *r,
	vswd_emit_fn emit, bool *first);
/* A VNI argument (1..2^24-1; else an error reply and -1), an address
 * and a MAC as text: shared by the overlay command files. */
int vswd_overlay_parse_vni(
	const char *s, uint32_t *vni, struct vsw_ctl_reply *r);
void vswd_overlay_ip_str(uint32_t ip, char *buf, size_t len);
void vswd_overlay_mac_str(const uint8_t m[6], char *buf, size_t len);
/* vswd_overlay_mtu.c: the vhost-user ports' MTU limits after an overlay
 * change; a domain's guest MTUs in domain-show (text or JSON, opening
 * with the "], \"port_mtu\": [" that closes the port list). */
struct vsw_domain_info;
void vswd_overlay_mtu_sync(struct vswd *d);
void vswd_overlay_mtu_show(struct vswd *d, const struct vsw_domain_info *in,
	struct vsw_ctl_reply *r);

/* Metrics (vswd_metrics*.c): the Prometheus text page, and the HTTP
 * endpoint serving it from the libev loop. */
#define VSWD_METRICS_PORT_DEFAULT 9477
#define VSWD_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
void vswd_metrics_format(struct vswd *d, struct vsw_ctl_reply *r);
/* Shared by the metrics files: a family's HELP and TYPE lines; a label
 * value, escaped. The overlay's families (vswd_metrics_overlay.c). */
void metrics_family(struct vsw_ctl_reply *r, const char *name, const char *type,
	const char *help);
void metrics_label(struct vsw_ctl_reply *r, const char *s);
void vswd_metrics_overlay(struct vswd *d, struct vsw_ctl_reply *r);
/* spec: on, PORT, ADDR:PORT or [ADDR6]:PORT; replaces a running endpoint.
 * 0, or -1 with a one-line reason in err (the endpoint is then off). */
int vswd_metrics_start(struct vswd *d, const char *spec, char *err,
	size_t errlen);
void vswd_metrics_stop(struct vswd *d);
VSWD_CMD(vswd_cmd_metrics);
VSWD_CMD(vswd_cmd_metrics_endpoint);

/* Rule install times (vswd_cmds_flow.c), freed at shutdown. */
/* A rule given as several words, joined with ',' into buf (flow-add,
 * trace); false when it does not fit. */
bool rule_join_args(int argc, char **argv, char *buf, size_t len);
VSWD_CMD(vswd_cmd_trace);
/* The deleted ports rule names (in_port=, output:), at most max. */
unsigned rule_gone_ports(struct vswd *d, const struct vsw_rule *r,
	uint16_t *out, unsigned max);
void vswd_rule_times_free(struct vswd *d);

/* The log (vswd_log.c): destinations, the ring PMD lines go through,
 * log-reopen. open before EAL init (0 or -1 after a message); start adds
 * the drain watchers to the loop; close drains and restores stderr. */
extern const char *const vswd_log_types[];
int vswd_log_parse_dest(const char *spec, enum vswd_log_dest *dest,
	const char **path);
int vswd_log_open(enum vswd_log_dest dest, const char *path);
void vswd_log_start(struct ev_loop *loop);
void vswd_log_drain(void);
int vswd_log_reopen(char *err, size_t errlen);
void vswd_log_close(void);
bool vswd_log_pattern_known(const char *pattern);
struct vswd_log_stats {
	enum vswd_log_dest dest;
	const char *path;
	unsigned long written;
	unsigned long write_errors;
	unsigned long dropped;
};
void vswd_log_get_stats(struct vswd_log_stats *st);
/* "TYPE:LEVEL" or "LEVEL" (vsw.*) as --log-level gives it: 0 or -1 with a
 * reason in err. */
int vswd_log_level_apply(const char *spec, char *err, size_t errlen);
VSWD_CMD(vswd_cmd_log_level);
VSWD_CMD(vswd_cmd_log_show);
VSWD_CMD(vswd_cmd_log_reopen);

/* Ask the loop to stop (signal, "shutdown" command). */
void vswd_request_stop(struct vswd *d, const char *why);

#endif /* VSWD_PRIV_H */
