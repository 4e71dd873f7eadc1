/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The running configuration and the state file that keeps it across
 * restarts (vswd --state FILE), as ovs-vsctl users expect of conf.db.
 *
 * vswd's command table is wrapped: every command that changes the
 * configuration is recorded and, once it succeeded, the whole configuration
 * is written to the state file. Control thread only.
 *
 * The text is the config file's own syntax, one command per line, in an
 * order that recreates the state: settings (the last accepted
 * copy-impl-set, lookup-impl-set, emc-set), log levels (the last
 * log-level per pattern, in the order given: a later "vsw.*" overrides an
 * earlier "vsw.virtq", so order matters), ports (each port-add as it was
 * given, for the ports that exist), rules (as the switch holds them, by
 * vsw_rule_format, which vsw_rule_parse reads back). config-show prints it.
 *
 * Crash safety: write a temp file in the state file's directory, fsync it,
 * rename it over the state file, fsync the directory. rename() replaces
 * atomically, so a crash at any point leaves the old file or the new one,
 * never a mix; a leftover temp file is never read and is overwritten.
 * VSWD_TEST_CRASH_SAVE=WHERE:N (mid-write or before-rename) makes the Nth
 * save _exit() there, for the test that proves it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsw/rule.h>
#include <vsw/switch.h>
#include <vsw/vswd.h>

#include "vswd_priv.h"

/* Commands whose last accepted form is the setting (with no argument,
 * metrics-endpoint only shows). */
static const char *const settings[] = {
	"copy-impl-set", "lookup-impl-set", "emc-set", "metrics-endpoint",
};
#define N_SETTINGS (sizeof(settings) / sizeof(settings[0]))

/* Commands after whose success the state is written. */
static const char *const changes[] = {
	"port-add", "port-del", "flow-add", "flow-del", "flow-flush",
	"copy-impl-set", "lookup-impl-set", "emc-set", "metrics-endpoint",
	"log-level", "overlay-set", "domain-add", "domain-del",
	"domain-port-add", "domain-port-del", "vtep-add", "vtep-del",
	"mac-add", "mac-del",
};

/* A port-add line as given, for a port that may still exist. */
struct persist_port {
	char name[VSW_PORT_NAME_MAX];
	char *line;
	struct persist_port *next;
};

struct vswd_persist {
	struct vsw_ctl_command *table; /* vswd_commands, wrapped */
	char tmp[4096];                /* "" when there is no state file */
	char *setting[N_SETTINGS];
	struct persist_port *ports;
	struct persist_port *levels;   /* log-level lines, oldest first */
	bool replaying;                /* start-up: no write per command */
	unsigned long saves;
	unsigned long crash_at;        /* VSWD_TEST_CRASH_SAVE */
	bool crash_mid_write;
};

static int
name_index(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return (int)i;
	return -1;
}

/* Append w as one word that vsw_ctl_split() reads back unchanged: bare
 * when it can be, else single-quoted ('\'' for a quote inside). */
static void
put_word(struct vsw_ctl_reply *r, const char *w)
{
	if (*w != '\0' && strpbrk(w, " \t'\"\\#") == NULL) {
		vsw_ctl_reply_printf(r, "%s", w);
		return;
	}
	vsw_ctl_reply_printf(r, "'");
	for (const char *q; (q = strchr(w, '\'')) != NULL; w = q + 1)
		vsw_ctl_reply_printf(r, "%.*s'\\''", (int)(q - w), w);
	vsw_ctl_reply_printf(r, "%s'", w);
}

/* argv[0..argc) as one line, NULL when out of memory. */
static char *
join_words(int argc, char **argv)
{
	struct vsw_ctl_reply r;
	char *line;

	vsw_ctl_reply_init(&r, false);
	for (int i = 0; i < argc; i++) {
		if (i > 0)
			vsw_ctl_reply_printf(&r, " ");
		put_word(&r, argv[i]);
	}
	line = r.oom ? NULL : strndup(r.buf ? r.buf : "", r.len);
	vsw_ctl_reply_free(&r);
	return line;
}

static void
list_free(struct persist_port **list)
{
	while (*list != NULL) {
		struct persist_port *next = (*list)->next;

		free((*list)->line);
		free(*list);
		*list = next;
	}
}

/* log-level [PATTERN] LEVEL: replaces the line for the same pattern and
 * goes last (it applies after every earlier one). */
static int
record_level(struct vswd_persist *p, int argc, char **argv)
{
	const char *pattern = argc == 3 ? argv[1] : "vsw.*";
	struct persist_port **pp = &p->levels, *lv;

	while (*pp != NULL) {
		if (strcmp((*pp)->name, pattern) == 0) {
			lv = *pp;
			*pp = lv->next;
			free(lv->line);
			free(lv);
		} else {
			pp = &(*pp)->next;
		}
	}
	lv = calloc(1, sizeof(*lv));
	if (lv == NULL || (lv->line = join_words(argc, argv)) == NULL) {
		free(lv);
		return -ENOMEM;
	}
	snprintf(lv->name, sizeof(lv->name), "%s", pattern);
	*pp = lv;
	return 0;
}

/* Remember what a successful command changed that the switch cannot
 * tell back. -ENOMEM when it could not be recorded. */
static int
record(struct vswd_persist *p, int argc, char **argv)
{
	int s = name_index(settings, N_SETTINGS, argv[0]);
	struct persist_port **pp, *port;
	char *line = NULL;

	if (strcmp(argv[0], "log-level") == 0)
		return record_level(p, argc, argv);
	if (s < 0 && strcmp(argv[0], "port-add") != 0 &&
			strcmp(argv[0], "port-del") != 0)
		return 0;
	if (strcmp(argv[0], "port-del") != 0) {
		line = join_words(argc, argv);
		if (line == NULL)
			return -ENOMEM;
	}
	if (s >= 0) {
		free(p->setting[s]);
		p->setting[s] = line;
		return 0;
	}
	for (pp = &p->ports; *pp != NULL; pp = &(*pp)->next)
		if (strcmp((*pp)->name, argv[1]) == 0)
			break;
	if (*pp != NULL) { /* port-del, or a stale record */
		port = *pp;
		*pp = port->next;
		free(port->line);
		free(port);
	}
	if (line == NULL)
		return 0;
	port = calloc(1, sizeof(*port));
	if (port == NULL) {
		free(line);
		return -ENOMEM;
	}
	snprintf(port->name, sizeof(port->name), "%s", argv[1]);
	port->line = line;
	port->next = p->ports;
	p->ports = port;
	return 0;
}

/* ---- the configuration as lines ---- */

typedef vswd_emit_fn emit_fn;
static void emit_text(struct vsw_ctl_reply *r, const char *line, bool first);

struct rules_ctx {
	struct vswd *d;
	struct vsw_ctl_reply *r;
	emit_fn emit;
	bool *first;
};

static void
rule_line(const struct vsw_rule *rule, const struct vsw_rule_stats *st,
	void *arg)
{
	struct rules_ctx *c = arg;
	char text[VSW_RULE_TEXT_MAX * 2];
	struct vsw_ctl_reply line;

	uint16_t gone[1];
	bool dangling = rule_gone_ports(c->d, rule, gone, 1) > 0;

	(void)st;
	/* A rule naming a deleted port is kept while vswd runs (the port may
	 * come back under its name and number); a restart numbers ports
	 * afresh, so it is kept as a comment, not replayed. */
	if (dangling && c->emit != emit_text)
		return;
	vsw_rule_format(rule, 0, vsw_switch_port_name, c->d->sw, text,
		sizeof(text));
	vsw_ctl_reply_init(&line, false);
	vsw_ctl_reply_printf(&line, dangling ? "# names deleted port %u, not "
		"restored: flow-add " : "flow-add ", gone[0]);
	put_word(&line, text);
	if (line.oom)
		c->r->oom = true;
	else
		c->emit(c->r, line.buf, *c->first);
	*c->first = false;
	vsw_ctl_reply_free(&line);
}

/* Every command of the running configuration, in replay order. */
static void
config_lines(struct vswd *d, struct vsw_ctl_reply *r, emit_fn emit)
{
	struct vswd_persist *p = d->persist;
	bool first = true;
	struct rules_ctx rc = {.d = d, .r = r, .emit = emit, .first = &first};

	for (size_t s = 0; s < N_SETTINGS; s++)
		if (p->setting[s] != NULL) {
			emit(r, p->setting[s], first);
			first = false;
		}
	for (struct persist_port *lv = p->levels; lv != NULL; lv = lv->next) {
		emit(r, lv->line, first);
		first = false;
	}
	for (struct vswd_port *port = d->ports; port != NULL;
			port = port->next)
		for (struct persist_port *pp = p->ports; pp; pp = pp->next)
			if (strcmp(pp->name, port->name) == 0) {
				emit(r, pp->line, first);
				first = false;
			}
	vswd_overlay_config_lines(d, r, emit, &first);
	vsw_switch_rules_dump(d->sw, rule_line, &rc);
}

static void
emit_text(struct vsw_ctl_reply *r, const char *line, bool first)
{
	(void)first;
	vsw_ctl_reply_printf(r, "%s\n", line);
}

static void
emit_json(struct vsw_ctl_reply *r, const char *line, bool first)
{
	vsw_ctl_reply_printf(r, "%s", first ? "" : ", ");
	vsw_ctl_reply_json_str(r, line);
}

static void
config_text(struct vswd *d, struct vsw_ctl_reply *r)
{
	vsw_ctl_reply_printf(r, "# vswd %s running configuration: commands "
		"that recreate it\n", VSWD_VERSION);
	config_lines(d, r, emit_text);
}

/* ---- the state file ---- */

static int
write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int
fsync_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	int fd, rc;

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 :
			(int)(slash - path), path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/* Write the whole text to the temp file, durably. */
static int
write_tmp(struct vswd_persist *p, const char *buf, size_t len)
{
	bool crash = ++p->saves == p->crash_at;
	int fd = open(p->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);

	if (fd < 0)
		return -1;
	if (crash && p->crash_mid_write) {
		/* test: half a file on disk, then die */
		if (write_all(fd, buf, len / 2) == 0)
			fsync(fd);
		_exit(99);
	}
	if (write_all(fd, buf, len) < 0 || fsync(fd) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	if (close(fd) < 0)
		return -1;
	if (crash)
		_exit(99); /* test: the new file is complete, not yet renamed */
	return 0;
}

/* Replace the state file by the running configuration. */
static int
save(struct vswd *d, char *err, size_t errlen)
{
	const char *path = d->opts.state;
	struct vsw_ctl_reply text;
	int rc = -1;

	vsw_ctl_reply_init(&text, false);
	config_text(d, &text);
	if (text.oom)
		errno = ENOMEM;
	else if (write_tmp(d->persist, text.buf, text.len) == 0 &&
			rename(d->persist->tmp, path) == 0 &&
			fsync_dir_of(path) == 0)
		rc = 0;
	if (rc < 0) {
		snprintf(err, errlen, "cannot write state file %s: %s", path,
			strerror(errno));
		VSWD_LOG(ERR, "%s\n", err);
	}
	vsw_ctl_reply_free(&text);
	return rc;
}

/* ---- the wrapped command table ---- */

/* Did this successful command change the configuration? Without an
 * argument metrics-endpoint only shows; flow-flush needs none. */
static bool
is_change(int argc, char **argv)
{
	if (name_index(changes, sizeof(changes) / sizeof(changes[0]),
			argv[0]) < 0)
		return false;
	return argc > 1 || strcmp(argv[0], "flow-flush") == 0;
}

/* An audit line per run-time change (not for the start-up replay). */
static void
log_change(int argc, char **argv)
{
	char *line = join_words(argc, argv);

	VSWD_LOG(INFO, "config change: %.200s\n", line ? line : argv[0]);
	free(line);
}

/* Every command runs through here: the real handler, then the record and
 * the state file for a change that succeeded. */
static void
persist_cmd(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;
	struct vswd_persist *p = d->persist;
	char err[512];
	size_t i = 0;

	/* argv[0] is in the table: vsw_ctl_execute found it in the copy */
	while (strcmp(vswd_commands[i].name, argv[0]) != 0)
		i++;
	vswd_commands[i].fn(ctx, argc, argv, r);
	if (r->error || !is_change(argc, argv))
		return;
	if (record(p, argc, argv) < 0) {
		vsw_ctl_reply_error(r, "%s applied, but out of memory to "
			"record it", argv[0]);
		return;
	}
	if (p->replaying)
		return;
	log_change(argc, argv);
	if (d->opts.state == NULL)
		return;
	if (save(d, err, sizeof(err)) < 0)
		vsw_ctl_reply_error(r, "%s applied, but %s", argv[0], err);
}

void
vswd_cmd_config_show(void *ctx, int argc, char **argv,
	struct vsw_ctl_reply *r)
{
	struct vswd *d = ctx;

	(void)argc;
	(void)argv;
	if (!r->json) {
		config_text(d, r);
		return;
	}
	vsw_ctl_reply_printf(r, "{\"state_file\": ");
	if (d->opts.state != NULL)
		vsw_ctl_reply_json_str(r, d->opts.state);
	else
		vsw_ctl_reply_printf(r, "null");
	vsw_ctl_reply_printf(r, ", \"commands\": [");
	config_lines(d, r, emit_json);
	vsw_ctl_reply_printf(r, "]}\n");
}

static void
test_crash_hook(struct vswd_persist *p)
{
	const char *v = getenv("VSWD_TEST_CRASH_SAVE");
	const char *colon = v ? strchr(v, ':') : NULL;

	if (colon == NULL)
		return;
	p->crash_mid_write = strncmp(v, "mid-write:", 10) == 0;
	p->crash_at = strtoul(colon + 1, NULL, 10);
	VSWD_LOG(WARNING, "test: save %lu will crash %s\n", p->crash_at,
		p->crash_mid_write ? "mid-write" : "before rename");
}

int
vswd_persist_init(struct vswd *d)
{
	struct vswd_persist *p = calloc(1, sizeof(*p));

	if (p != NULL)
		p->table = calloc(vswd_n_commands, sizeof(*p->table));
	if (p == NULL || p->table == NULL) {
		free(p);
		fprintf(stderr, "vswd: out of memory\n");
		return -1;
	}
	for (size_t i = 0; i < vswd_n_commands; i++) {
		p->table[i] = vswd_commands[i];
		p->table[i].fn = persist_cmd;
	}
	if (d->opts.state != NULL &&
			(size_t)snprintf(p->tmp, sizeof(p->tmp), "%s.tmp",
				d->opts.state) >= sizeof(p->tmp)) {
		fprintf(stderr, "vswd: state file name too long\n");
		free(p->table);
		free(p);
		return -1;
	}
	d->persist = p;
	d->cmds = p->table;
	d->n_cmds = vswd_n_commands;
	return 0;
}

int
vswd_persist_start(struct vswd *d, const char *config)
{
	struct vswd_persist *p = d->persist;
	const char *state = d->opts.state;
	char err[512];
	int rc;

	if (state != NULL && access(state, F_OK) == 0) {
		VSWD_LOG(NOTICE, "starting from state file %s\n", state);
		config = state;
	}
	p->replaying = true;
	rc = vswd_config_run(d, config);
	p->replaying = false;
	if (rc < 0) {
		if (config == state)
			fprintf(stderr, "vswd: that is the state file of the "
				"last run; move it away to start from "
				"--config\n");
		return -1;
	}
	test_crash_hook(p);
	if (state != NULL && save(d, err, sizeof(err)) < 0) {
		fprintf(stderr, "vswd: %s\n", err);
		return -1;
	}
	return 0;
}

void
vswd_persist_free(struct vswd *d)
{
	struct vswd_persist *p = d->persist;

	if (p == NULL)
		return;
	for (size_t s = 0; s < N_SETTINGS; s++)
		free(p->setting[s]);
	list_free(&p->ports);
	list_free(&p->levels);
	free(p->table);
	free(p);
	d->persist = NULL;
	d->cmds = NULL;
}
