/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vswd internals shared by the daemon's files (main, options, commands).
 * Control thread only.
 */
#ifndef VSWD_PRIV_H
#define VSWD_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include <rte_log.h>

#include <vsw/ctl.h>

struct ev_loop;

#define VSWD_EAL_ARGS_MAX 64

extern int vswd_logtype;
#define VSWD_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, vswd_logtype, "vswd: " fmt, ##__VA_ARGS__)

struct vswd_opts {
	const char *run_dir;
	const char *config;     /* NULL: built-in default config */
	const char *pmd_cpus;   /* NULL: every CPU but the main one */
	bool no_default_config; /* --no-default-config: start empty */
	int eal_argc;
	char *eal_argv[VSWD_EAL_ARGS_MAX];
};

struct vswd {
	struct vswd_opts opts;
	struct ev_loop *loop;
	struct vsw_ctl_server *ctl;
	char ctl_path[256];
	char pid_path[256];
	int pid_fd;
	bool stopping;
	int exit_code;
};

/* Parse argv into opts (EAL defaults filled in). 0, or -1 after a message. */
int vswd_opts_parse(struct vswd_opts *o, int argc, char **argv);
void vswd_opts_free(struct vswd_opts *o);

/* The command table (vswd_cmds.c). */
extern const struct vsw_ctl_command vswd_commands[];
extern const size_t vswd_n_commands;

/* Run a config file (or the built-in default when path is NULL): every
 * line a command. Returns 0, or -1 after printing "file:line: error". */
int vswd_config_run(struct vswd *d, const char *path);

/* Ask the loop to stop (signal, "shutdown" command). */
void vswd_request_stop(struct vswd *d, const char *why);

#endif /* VSWD_PRIV_H */
