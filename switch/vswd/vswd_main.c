/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vswd: the daemon. Owns the run directory (pid lock, control socket), the
 * EAL, the libev control loop (control socket, signals, timers) and the
 * order of start-up and shutdown. Runs on the main lcore; PMDs run on the
 * others and never call back into here.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

#include <vsw/vswd.h>

#include "vswd_priv.h"

int vswd_logtype;

/* mkdir -p with mode for the last component. */
static int
make_run_dir(const char *dir)
{
	char path[256];
	size_t len = strlen(dir);

	if (len == 0 || len >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(path, dir, len + 1);
	for (char *p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(path, 0750) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* Take the run directory's pid lock; a second vswd there is refused. */
static int
lock_run_dir(struct vswd *d)
{
	char buf[32];
	int fd, n;

	snprintf(d->pid_path, sizeof(d->pid_path), "%s/%s", d->opts.run_dir,
		VSWD_PID_FILE_NAME);
	fd = open(d->pid_path, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0) {
		fprintf(stderr, "vswd: cannot open %s: %s\n", d->pid_path,
			strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		n = (int)read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		fprintf(stderr, "vswd: another vswd (pid %ld) is already running "
			"on run directory %s; stop it or use --run-dir\n",
			strtol(buf, NULL, 10), d->opts.run_dir);
		close(fd);
		return -1;
	}
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		fprintf(stderr, "vswd: cannot write %s\n", d->pid_path);
	d->pid_fd = fd;
	return 0;
}

static void
unlock_run_dir(struct vswd *d)
{
	if (d->pid_fd < 0)
		return;
	unlink(d->pid_path);
	close(d->pid_fd);
	d->pid_fd = -1;
}

void
vswd_request_stop(struct vswd *d, const char *why)
{
	if (d->stopping)
		return;
	d->stopping = true;
	VSWD_LOG(NOTICE, "stopping (%s)\n", why);
	ev_break(d->loop, EVBREAK_ALL);
}

static void
signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct vswd *d = w->data;

	(void)loop;
	(void)revents;
	vswd_request_stop(d, w->signum == SIGINT ? "SIGINT" : "SIGTERM");
}

/* Once a second: MAC aging; every RERANK_SEC: classifier re-ranking. */
#define RERANK_SEC 5

static void
housekeeping_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct vswd *d = w->data;
	uint64_t now = (uint64_t)ev_now(loop);

	(void)revents;
	if (d->sw == NULL)
		return;
	vsw_switch_mac_age(d->sw, now);
	vsw_switch_overlay_tick(d->sw, now);
	if (now % RERANK_SEC == 0 && vsw_switch_rerank(d->sw) < 0)
		VSWD_LOG(WARNING, "classifier re-ranking: out of memory\n");
}

static int
start_eal(struct vswd *d)
{
	char *argv[VSWD_EAL_ARGS_MAX];
	int rc;

	/* rte_eal_init permutes its argv: hand it a copy of the array. */
	memcpy(argv, d->opts.eal_argv, sizeof(char *) * d->opts.eal_argc);
	rc = rte_eal_init(d->opts.eal_argc, argv);
	if (rc < 0) {
		fprintf(stderr, "vswd: EAL init failed: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

static int
start_control(struct vswd *d)
{
	snprintf(d->ctl_path, sizeof(d->ctl_path), "%s/%s", d->opts.run_dir,
		VSWD_CTL_SOCKET_NAME);
	d->ctl = vsw_ctl_server_create(d->loop, d->ctl_path, d->cmds,
		d->n_cmds, d);
	if (d->ctl == NULL) {
		fprintf(stderr, "vswd: cannot listen on %s: %s\n", d->ctl_path,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* --metrics, after the config: the command line wins over the file. */
static int
start_metrics(struct vswd *d)
{
	char err[160];

	if (d->opts.metrics == NULL)
		return 0;
	if (vswd_metrics_start(d, d->opts.metrics, err, sizeof(err)) < 0) {
		fprintf(stderr, "vswd: --metrics: %s\n", err);
		return -1;
	}
	return 0;
}

/* --log-level, before the config (start-up lines are filtered as asked)
 * and after it: the command line wins over the file. */
static int
apply_log_levels(struct vswd *d)
{
	char err[256];

	for (unsigned i = 0; i < d->opts.n_log_levels; i++)
		if (vswd_log_level_apply(d->opts.log_levels[i], err,
				sizeof(err)) < 0) {
			fprintf(stderr, "vswd: --log-level %s: %s\n",
				d->opts.log_levels[i], err);
			return -1;
		}
	return 0;
}

/*
 * What to run at start-up: --config FILE wins (with or without
 * --no-default-config: the user named a file, so it is never dropped);
 * "" = nothing; NULL = the built-in default.
 */
static const char *
startup_config(const struct vswd_opts *o)
{
	if (o->config != NULL)
		return o->config;
	return o->no_default_config ? "" : NULL;
}

int
main(int argc, char **argv)
{
	static struct vswd d = {.pid_fd = -1};
	ev_signal sigint_w, sigterm_w;
	ev_timer housekeeping_w;

	if (vswd_opts_parse(&d.opts, argc, argv) < 0)
		return 2;
	if (make_run_dir(d.opts.run_dir) < 0) {
		fprintf(stderr, "vswd: cannot create run directory %s: %s\n",
			d.opts.run_dir, strerror(errno));
		return 1;
	}
	if (lock_run_dir(&d) < 0)
		return 1;
	if (vswd_log_open(d.opts.log_dest, d.opts.log_path) < 0) {
		unlock_run_dir(&d);
		return 1;
	}
	if (start_eal(&d) < 0 || apply_log_levels(&d) < 0) {
		vswd_log_close();
		unlock_run_dir(&d);
		return 1;
	}
	vswd_logtype = rte_log_register_type_and_pick_level("vsw.vswd",
		RTE_LOG_INFO);
	d.loop = ev_default_loop(0);
	ev_signal_init(&sigint_w, signal_cb, SIGINT);
	ev_signal_init(&sigterm_w, signal_cb, SIGTERM);
	sigint_w.data = sigterm_w.data = &d;
	ev_signal_start(d.loop, &sigint_w);
	ev_signal_start(d.loop, &sigterm_w);
	signal(SIGPIPE, SIG_IGN);
	ev_timer_init(&housekeeping_w, housekeeping_cb, 1.0, 1.0);
	housekeeping_w.data = &d;
	ev_timer_start(d.loop, &housekeeping_w);
	vswd_log_start(d.loop);

	if (vswd_persist_init(&d) < 0 || vswd_dp_start(&d) < 0 ||
			start_control(&d) < 0 ||
			vswd_persist_start(&d, startup_config(&d.opts)) < 0 ||
			apply_log_levels(&d) < 0 || start_metrics(&d) < 0) {
		d.exit_code = 1;
	} else {
		VSWD_LOG(NOTICE, "ready, control socket %s\n", d.ctl_path);
		ev_run(d.loop, 0);
	}

	vswd_metrics_stop(&d);
	vsw_ctl_server_destroy(d.ctl);
	vswd_dp_stop(&d);
	vswd_persist_free(&d);
	vswd_rule_times_free(&d);
	vswd_log_close();
	rte_eal_cleanup();
	unlock_run_dir(&d);
	vswd_opts_free(&d.opts);
	return d.exit_code;
}
