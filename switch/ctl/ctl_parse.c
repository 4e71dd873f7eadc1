/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control requests: tokenizing a line and dispatching it through a command
 * table. Runs on the control thread only (vswd's libev loop, or while the
 * start-up config is read). Trusts nothing in the line: this is the code a
 * fuzzer drives.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <vsw/ctl.h>

/* A byte a command line may carry outside quotes and escapes. */
static int
is_bad_byte(unsigned char c)
{
	return c < 0x20 && c != '\t';
}

static int
is_space(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Read one word starting at *pp, unquoting it in place and terminating it.
 * *pp moves past the word and the separator that ended it. 0 or -EINVAL.
 */
static int
split_word(char **pp, const char **errmsg)
{
	char *p = *pp, *out = *pp;
	char quote = 0;

	for (; *p != '\0'; p++) {
		unsigned char c = (unsigned char)*p;

		/* an escape must not smuggle in a byte refused bare */
		if (is_bad_byte(c) || (c == '\\' && p[1] != '\0' &&
					      is_bad_byte((unsigned char)p[1]))) {
			*errmsg = "control character in request";
			return -EINVAL;
		}
		if (quote != 0) {
			if (c == (unsigned char)quote)
				quote = 0;
			else if (quote == '"' && c == '\\' && p[1] != '\0')
				*out++ = *++p;
			else
				*out++ = (char)c;
			continue;
		}
		if (is_space((char)c))
			break;
		if (c == '\'' || c == '"')
			quote = (char)c;
		else if (c == '\\' && p[1] != '\0')
			*out++ = *++p;
		else
			*out++ = (char)c;
	}
	if (quote != 0) {
		*errmsg = "unterminated quote";
		return -EINVAL;
	}
	*pp = *p != '\0' ? p + 1 : p;
	*out = '\0';
	return 0;
}

int
vsw_ctl_split(char *line, char **argv, unsigned max, const char **errmsg)
{
	unsigned argc = 0;
	size_t len = strlen(line);
	char *p = line;

	*errmsg = NULL;
	/* A trailing CR LF or LF ends the line; anything else is content. */
	if (len > 0 && line[len - 1] == '\n')
		line[--len] = '\0';
	if (len > 0 && line[len - 1] == '\r')
		line[--len] = '\0';

	for (;;) {
		char *word;
		int rc;

		while (is_space(*p))
			p++;
		if (*p == '\0' || (argc == 0 && *p == '#'))
			return (int)argc;
		if (argc == max) {
			*errmsg = "too many arguments";
			return -E2BIG;
		}
		word = p;
		rc = split_word(&p, errmsg);
		if (rc < 0)
			return rc;
		argv[argc++] = word;
	}
}

static const struct vsw_ctl_command *
find_command(const struct vsw_ctl_command *table, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

static void
print_help(const struct vsw_ctl_command *table, size_t n,
	struct vsw_ctl_reply *r)
{
	if (r->json) {
		vsw_ctl_reply_printf(r, "{\"commands\": [");
		for (size_t i = 0; i < n; i++) {
			vsw_ctl_reply_printf(r, "%s{\"name\": ", i ? ", " : "");
			vsw_ctl_reply_json_str(r, table[i].name);
			vsw_ctl_reply_printf(r, ", \"usage\": ");
			vsw_ctl_reply_json_str(r, table[i].usage);
			vsw_ctl_reply_printf(r, ", \"help\": ");
			vsw_ctl_reply_json_str(r, table[i].help);
			vsw_ctl_reply_printf(r, "}");
		}
		vsw_ctl_reply_printf(r, "]}\n");
		return;
	}
	for (size_t i = 0; i < n; i++)
		vsw_ctl_reply_printf(r, "%-20s %-40s %s\n", table[i].name,
			table[i].usage, table[i].help);
}

/* Remove every "--json" word; returns the new argc. */
static int
strip_json_flag(int argc, char **argv, bool *json)
{
	int out = 0;

	*json = false;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			*json = true;
		else
			argv[out++] = argv[i];
	}
	return out;
}

static int
execute(const struct vsw_ctl_command *table, size_t n, void *ctx,
	char *line, struct vsw_ctl_reply *reply)
{
	char *argv[VSW_CTL_ARGS_MAX];
	const struct vsw_ctl_command *cmd;
	const char *errmsg;
	bool json;
	int argc;

	argc = vsw_ctl_split(line, argv, VSW_CTL_ARGS_MAX, &errmsg);
	if (argc < 0) {
		vsw_ctl_reply_error(reply, "%s", errmsg);
		return -1;
	}
	argc = strip_json_flag(argc, argv, &json);
	reply->json = json;
	if (argc == 0) {
		vsw_ctl_reply_error(reply, "empty request");
		return -1;
	}
	if (strcmp(argv[0], "help") == 0) {
		print_help(table, n, reply);
		return 0;
	}
	cmd = find_command(table, n, argv[0]);
	if (cmd == NULL) {
		vsw_ctl_reply_error(reply, "unknown command '%.64s' (try 'help')",
			argv[0]);
		return -1;
	}
	if (argc - 1 < cmd->min_args ||
			(cmd->max_args >= 0 && argc - 1 > cmd->max_args)) {
		vsw_ctl_reply_error(reply, "usage: %s %s", cmd->name,
			cmd->usage);
		return -1;
	}
	cmd->fn(ctx, argc, argv, reply);
	return reply->error ? -1 : 0;
}

int
vsw_ctl_execute(const struct vsw_ctl_command *table, size_t n, void *ctx,
	char *line, struct vsw_ctl_reply *reply)
{
	int rc = execute(table, n, ctx, line, reply);

	vsw_ctl_reply_json_finish(reply);
	return rc;
}
