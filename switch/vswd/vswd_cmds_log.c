/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Log commands: log-level (per type), log-show and log-reopen. The
 * levels set here are part of the running configuration (vswd_persist.c
 * records each log-level line), so they survive a restart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>

#include "vswd_priv.h"

static const char *const level_names[] = {"emergency", "alert", "critical",
	"error", "warning", "notice", "info", "debug"};
#define N_LEVELS (sizeof(level_names) / sizeof(level_names[0]))

static int
parse_level(const char *s)
{
	char *end;
	long v;

	for (size_t i = 0; i < N_LEVELS; i++)
		if (strcmp(s, level_names[i]) == 0)
			return (int)i + 1;
	v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || v < 1 || v > 8)
		return -1;
	return (int)v;
}

static int
set_level(const char *pattern, const char *level, char *err, size_t errlen)
{
	int lv = parse_level(level);

	if (lv < 0) {
		snprintf(err, errlen, "bad log level '%.32s' (emergency..debug "
			"or 1..8)", level);
		return -1;
	}
	if (!vswd_log_pattern_known(pattern)) {
		snprintf(err, errlen, "no log type matches '%.64s' (vsw.copy, "
			"vsw.virtq, vsw.vport, vsw.switch, vsw.flow, vsw.ports, "
			"vsw.ctl, vsw.vswd)", pattern);
		return -1;
	}
	if (rte_log_set_level_pattern(pattern, (uint32_t)lv) < 0) {
		snprintf(err, errlen, "cannot set log level for '%.64s'",
			pattern);
		return -1;
	}
	return lv;
}

int
vswd_log_level_apply(const char *spec, char *err, size_t errlen)
{
	const char *colon = strrchr(spec, ':');
	char pattern[128];

	if (colon == NULL)
		return set_level("vsw.*", spec, err, errlen) < 0 ? -1 : 0;
	snprintf(pattern, sizeof(pattern), "%.*s", (int)(colon - spec), spec);
	return set_level(pattern, colon + 1, err, errlen) < 0 ? -1 : 0;
}

static const char *
dest_name(enum vswd_log_dest d)
{
	static const char *const names[] = {"stderr", "syslog", "syslog",
		"file"};

	return names[d];
}

void
vswd_cmd_log_show(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct vswd_log_stats st;

	(void)ctx;
	(void)argc;
	(void)argv;
	vswd_log_get_stats(&st);
	if (r->json) {
		vsw_ctl_reply_printf(r, "{\"destination\": \"%s\", \"path\": ",
			dest_name(st.dest));
		vsw_ctl_reply_json_str(r, st.path);
		vsw_ctl_reply_printf(r, ", \"lines_written\": %lu, "
			"\"write_errors\": %lu, \"lines_dropped\": %lu, "
			"\"types\": {", st.written, st.write_errors, st.dropped);
	} else {
		vsw_ctl_reply_printf(r, "destination: %s%s%s\nlines written "
			"%lu, write errors %lu, dropped %lu\n",
			dest_name(st.dest), *st.path ? " " : "", st.path,
			st.written, st.write_errors, st.dropped);
	}
	for (unsigned i = 0; vswd_log_types[i] != NULL; i++) {
		int t = rte_log_register_type_and_pick_level(vswd_log_types[i],
			RTE_LOG_NOTICE);
		int lv = t >= 0 ? rte_log_get_level((uint32_t)t) : 0;
		const char *name = lv >= 1 && lv <= 8 ? level_names[lv - 1] :
			"?";

		if (r->json)
			vsw_ctl_reply_printf(r, "%s\"%s\": \"%s\"", i ? ", " : "",
				vswd_log_types[i], name);
		else
			vsw_ctl_reply_printf(r, "%-12s %s\n", vswd_log_types[i],
				name);
	}
	if (r->json)
		vsw_ctl_reply_printf(r, "}}\n");
}

/* log-level LEVEL: every vsw type; log-level PATTERN LEVEL: the types
 * matching PATTERN (vsw.virtq, vsw.*, lib.eal ...). */
void
vswd_cmd_log_level(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	const char *pattern = argc == 3 ? argv[1] : "vsw.*";
	char err[256];
	int lv;

	(void)ctx;
	/* the running configuration keeps one line per pattern */
	if (strlen(pattern) >= VSW_PORT_NAME_MAX) {
		vsw_ctl_reply_error(r, "log type pattern too long (%d max)",
			VSW_PORT_NAME_MAX - 1);
		return;
	}
	lv = set_level(pattern, argv[argc - 1], err, sizeof(err));
	if (lv < 0) {
		vsw_ctl_reply_error(r, "%s", err);
		return;
	}
	if (r->json) {
		vsw_ctl_reply_printf(r, "{\"pattern\": ");
		vsw_ctl_reply_json_str(r, pattern);
		vsw_ctl_reply_printf(r, ", \"level\": %d}\n", lv);
	} else {
		vsw_ctl_reply_printf(r, "%s: level %d\n", pattern, lv);
	}
}

void
vswd_cmd_log_reopen(void *ctx, int argc, char **argv,
	struct vsw_ctl_reply *r)
{
	char err[256];

	(void)ctx;
	(void)argc;
	(void)argv;
	if (vswd_log_reopen(err, sizeof(err)) < 0) {
		vsw_ctl_reply_error(r, "%s", err);
		return;
	}
	VSWD_LOG(INFO, "log reopened\n");
	if (r->json)
		vsw_ctl_reply_printf(r, "{\"reopened\": true}\n");
	else
		vsw_ctl_reply_printf(r, "log reopened\n");
}
