/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vswd command-line options and the EAL arguments derived from them.
 * Control thread, before EAL init. Defaults must work on a bare machine:
 * hugepages when free ones exist, otherwise --no-huge with a sized -m; the
 * first allowed CPU is the main (control) lcore, the rest are PMDs.
 */
#include <dirent.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsw/vswd.h>

#include "vswd_priv.h"

#define NO_HUGE_MEM_MB "1024"

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: vswd [OPTIONS] [-- EAL-ARGS...]\n"
		"  --run-dir DIR       control socket, pid lock (default %s)\n"
		"  --config FILE       start-up commands, one per line\n"
		"  --no-default-config\n"
		"                      without --config: start with no ports and\n"
		"                      no rules (--config FILE is always used)\n"
		"  --state FILE        keep the running configuration in FILE and\n"
		"                      start from it when it exists (instead of\n"
		"                      --config)\n"
		"  --pmd-cpus LIST     PMD cores, e.g. 1,3 (default, or empty: all\n"
		"                      CPUs but the first, at least one)\n"
		"  --memory MB         DPDK memory (default, or empty: hugepages\n"
		"                      if free, else --no-huge -m %s)\n"
		"  --metrics [ADDR:]PORT  Prometheus endpoint http://ADDR:PORT/\n"
		"                      metrics (ADDR 127.0.0.1; 'on' = port %d)\n"
		"  --allow-devargs-files\n"
		"                      let port-add ... dpdk devargs= name files,\n"
		"                      sockets, host interfaces or programs\n"
		"                      (net_pcap tx_pcap=, net_af_packet iface=,\n"
		"                      ...) that vswd opens as its user; refused\n"
		"                      without it\n"
		"  --log DEST          stderr (default), syslog, syslog:SOCKET\n"
		"                      (a unix datagram socket) or file:PATH\n"
		"  --log-file PATH     log to PATH (--log file:PATH); vswctl\n"
		"                      log-reopen after logrotate moved it\n"
		"  --log-level [TYPE:]LEVEL\n"
		"                      e.g. vsw.virtq:debug (repeatable; after\n"
		"                      the config, as log-level TYPE LEVEL)\n"
		"  --commands          print the control commands as JSON (what\n"
		"                      'vswctl help --json' answers) and exit\n"
		"  --help\n"
		"EAL arguments after '--' override the defaults (memory,\n"
		"lcores, file prefix, --no-pci: pass -a BDF for a PCI NIC).\n",
		VSWD_RUN_DIR_DEFAULT, NO_HUGE_MEM_MB,
		VSWD_METRICS_PORT_DEFAULT);
}

/* The command table as JSON, for the man page and completion generator. */
static void
print_commands(void)
{
	struct vsw_ctl_reply r;
	char line[] = "help --json";

	vsw_ctl_reply_init(&r, false);
	vsw_ctl_execute(vswd_commands, vswd_n_commands, NULL, line, &r);
	fwrite(r.buf, 1, r.len, stdout);
	vsw_ctl_reply_free(&r);
}

/* Free 2 MiB or 1 GiB hugepages anywhere on the machine? */
static bool
hugepages_free(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages",
		"/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages",
	};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		FILE *f = fopen(dirs[i], "r");
		long n = 0;

		if (f == NULL)
			continue;
		if (fscanf(f, "%ld", &n) != 1)
			n = 0;
		fclose(f);
		if (n > 0)
			return true;
	}
	return false;
}

static bool
eal_has(const struct vswd_opts *o, const char *const *names)
{
	for (int i = 1; i < o->eal_argc; i++)
		for (const char *const *n = names; *n != NULL; n++)
			if (strncmp(o->eal_argv[i], *n, strlen(*n)) == 0)
				return true;
	return false;
}

static int
eal_push(struct vswd_opts *o, const char *arg)
{
	if (o->eal_argc >= VSWD_EAL_ARGS_MAX - 1) {
		fprintf(stderr, "vswd: too many EAL arguments\n");
		return -1;
	}
	o->eal_argv[o->eal_argc] = strdup(arg);
	if (o->eal_argv[o->eal_argc] == NULL)
		return -1;
	o->eal_argc++;
	return 0;
}

/* "-l MAIN,PMDS": the first allowed CPU not in pmd_cpus is the main. */
static int
default_lcores(struct vswd_opts *o)
{
	cpu_set_t set;
	char list[512] = "";
	int main_cpu = -1;
	size_t len = 0;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		CPU_ZERO(&set);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &set))
			continue;
		if (main_cpu < 0)
			main_cpu = c;
		if (o->pmd_cpus == NULL) {
			len += (size_t)snprintf(list + len, sizeof(list) - len,
				"%s%d", len ? "," : "", c);
			if (len >= sizeof(list))
				return -1;
		}
	}
	if (main_cpu < 0)
		main_cpu = 0;
	if (o->pmd_cpus != NULL) {
		snprintf(list, sizeof(list), "%d,%s", main_cpu, o->pmd_cpus);
	} else if (strchr(list, ',') == NULL) {
		/* One CPU: the PMD shares it with the main lcore. */
		snprintf(list, sizeof(list), "0@%d,1@%d", main_cpu, main_cpu);
		return eal_push(o, "--lcores") < 0 ? -1 : eal_push(o, list);
	}
	return eal_push(o, "-l") < 0 ? -1 : eal_push(o, list);
}

static int
add_eal_defaults(struct vswd_opts *o)
{
	static const char *const mem[] = {"-m", "--socket-mem", "--no-huge",
		NULL};
	static const char *const cores[] = {"-l", "-c", "--lcores", NULL};
	static const char *const prefix[] = {"--file-prefix", "--in-memory",
		"--no-shconf", NULL};
	static const char *const no_huge[] = {"--no-huge", NULL};
	static const char *const pci[] = {"-a", "--allow", "-b", "--block",
		"--no-pci", NULL};

	if (!eal_has(o, mem)) {
		bool huge = hugepages_free();

		if (!huge && eal_push(o, "--no-huge") < 0)
			return -1;
		if ((!huge || o->memory != NULL) && (eal_push(o, "-m") < 0 ||
				eal_push(o, o->memory ? o->memory :
					NO_HUGE_MEM_MB) < 0))
			return -1;
	}
	if (!eal_has(o, cores) && default_lcores(o) < 0)
		return -1;
	/* Never probe the host's own NICs unless asked to (-a BDF). */
	if (!eal_has(o, pci) && eal_push(o, "--no-pci") < 0)
		return -1;
	/* No shared runtime files, so several instances (and DPDK guests)
	 * never collide; --in-memory needs hugepages, --no-shconf does not. */
	if (!eal_has(o, prefix) && eal_push(o, eal_has(o, no_huge) ?
			"--no-shconf" : "--in-memory") < 0)
		return -1;
	return 0;
}

/* One option from getopt_long (its argument in optarg): 0 or -1. */
static int
opt_apply(struct vswd_opts *o, int c)
{
	switch (c) {
	case 'r':
		o->run_dir = optarg;
		return 0;
	case 'c':
		o->config = optarg;
		return 0;
	case 'p':
		/* empty: the default (a unit passes "${VAR}" as is) */
		o->pmd_cpus = *optarg ? optarg : NULL;
		return 0;
	case 's':
		o->state = *optarg ? optarg : NULL;
		return 0;
	case 'M':
		if (*optarg != '\0' && (strspn(optarg, "0123456789") !=
				strlen(optarg) || strlen(optarg) > 7)) {
			fprintf(stderr, "vswd: --memory wants MB\n");
			return -1;
		}
		o->memory = *optarg ? optarg : NULL;
		return 0;
	case 'C':
		print_commands();
		exit(0);
	case 'n':
		o->no_default_config = true;
		return 0;
	case 'm':
		o->metrics = optarg;
		return 0;
	case 'A':
		o->allow_devargs_files = true;
		return 0;
	case 'L':
		if (*optarg != '\0' && vswd_log_parse_dest(optarg, &o->log_dest,
				&o->log_path) < 0) {
			fprintf(stderr, "vswd: --log wants stderr, syslog, "
				"syslog:SOCKET or file:PATH\n");
			return -1;
		}
		return 0;
	case 'F':
		/* empty: the default (a unit passes "${VAR}") */
		o->log_dest = *optarg ? VSWD_LOG_FILE : o->log_dest;
		o->log_path = *optarg ? optarg : o->log_path;
		return 0;
	case 'V':
		if (o->n_log_levels == VSWD_LOG_LEVELS_MAX) {
			fprintf(stderr, "vswd: too many --log-level\n");
			return -1;
		}
		o->log_levels[o->n_log_levels++] = optarg;
		return 0;
	case 'h':
		usage(stdout);
		exit(0);
	default:
		usage(stderr);
		return -1;
	}
}

int
vswd_opts_parse(struct vswd_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{"run-dir", required_argument, NULL, 'r'},
		{"config", required_argument, NULL, 'c'},
		{"pmd-cpus", required_argument, NULL, 'p'},
		{"no-default-config", no_argument, NULL, 'n'},
		{"state", required_argument, NULL, 's'},
		{"memory", required_argument, NULL, 'M'},
		{"commands", no_argument, NULL, 'C'},
		{"metrics", required_argument, NULL, 'm'},
		{"allow-devargs-files", no_argument, NULL, 'A'},
		{"log", required_argument, NULL, 'L'},
		{"log-file", required_argument, NULL, 'F'},
		{"log-level", required_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->run_dir = VSWD_RUN_DIR_DEFAULT;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1)
		if (opt_apply(o, c) < 0)
			return -1;
	if (eal_push(o, "vswd") < 0)
		return -1;
	for (int i = optind; i < argc; i++)
		if (eal_push(o, argv[i]) < 0)
			return -1;
	return add_eal_defaults(o);
}

void
vswd_opts_free(struct vswd_opts *o)
{
	for (int i = 0; i < o->eal_argc; i++)
		free(o->eal_argv[i]);
	o->eal_argc = 0;
}
