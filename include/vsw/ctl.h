/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw control plane: the unix-socket command server that vswd runs in its
 * libev loop, the command-line tokenizer it (and the start-up config file)
 * share, and the reply builder handlers write into.
 *
 * Wire protocol (one request, one reply, any number per connection):
 *   request: one line of text, at most VSW_CTL_LINE_MAX bytes including
 *            the '\n': a command name and arguments, shell-like quoting
 *            ('single', "double", backslash escapes).
 *   reply:   a header line "<status> <length>\n" (status 0 = ok, 1 = error)
 *            followed by exactly <length> bytes of body.
 * An error body is one line. Every command accepts --json, which makes the
 * body a JSON object (an error then is {"schema": N, "error": "..."}).
 *
 * JSON schema: every --json reply object carries "schema":
 * VSW_CTL_JSON_SCHEMA as its first key, added in one place
 * (vsw_ctl_execute). Adding keys keeps the number; removing or renaming a
 * key, or changing what a value means, bumps it (doc/user-guide.md).
 *
 * Trust: clients are untrusted. Oversized lines, binary garbage, idle
 * clients and floods of connections get an error or a close, never a crash
 * or a stall of the loop.
 */
#ifndef VSW_CTL_H
#define VSW_CTL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define VSW_CTL_LINE_MAX 4096u  /* request line, '\n' included */
#define VSW_CTL_ARGS_MAX 64u    /* words in one request */
#define VSW_CTL_CLIENTS_MAX 64u /* connections served at once */
#define VSW_CTL_IDLE_SEC 10.0   /* a client silent this long is closed */

/* A growable reply body. */
struct vsw_ctl_reply {
	char *buf;
	size_t len;
	size_t cap;
	bool json;   /* the request asked for --json */
	bool error;  /* set by vsw_ctl_reply_error() */
	bool oom;    /* an append failed: the reply says so instead */
};

void vsw_ctl_reply_init(struct vsw_ctl_reply *r, bool json);
void vsw_ctl_reply_free(struct vsw_ctl_reply *r);
/* Append formatted text (no escaping). */
void vsw_ctl_reply_printf(struct vsw_ctl_reply *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Append s as a JSON string literal, quotes included. */
void vsw_ctl_reply_json_str(struct vsw_ctl_reply *r, const char *s);
/* The version of every --json reply's layout (see the top of this file). */
#define VSW_CTL_JSON_SCHEMA 1
/* Put "schema": VSW_CTL_JSON_SCHEMA first in a JSON object reply; other
 * replies are left alone. vsw_ctl_execute() calls it. */
void vsw_ctl_reply_json_finish(struct vsw_ctl_reply *r);
/* Replace the body with a one-line error (JSON: {"error": "..."}). */
void vsw_ctl_reply_error(struct vsw_ctl_reply *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Split a request line into words. Returns the number of words (0 for an
 * empty line or a comment starting with '#'), or a negative errno:
 * -EINVAL for an unterminated quote, a control byte or a NUL inside the
 * line, -E2BIG for more than max words. Words point into line, which is
 * modified in place. *errmsg gets a static description on error.
 */
int vsw_ctl_split(char *line, char **argv, unsigned max, const char **errmsg);

/* A command: argv[0] is its name; --json has been removed already. */
typedef void (*vsw_ctl_handler_fn)(void *ctx, int argc, char **argv,
	struct vsw_ctl_reply *reply);

struct vsw_ctl_command {
	const char *name;
	const char *usage;   /* argument synopsis, shown by "help" */
	int min_args;        /* not counting the name */
	int max_args;        /* -1: no limit */
	vsw_ctl_handler_fn fn;
	const char *help;    /* one line */
};

/*
 * Run one request line against a command table (also used for the config
 * file). Handles --json, unknown commands, argument counts and "help".
 * Returns 0 when the command succeeded, -1 when the reply is an error.
 */
int vsw_ctl_execute(const struct vsw_ctl_command *table, size_t n, void *ctx,
	char *line, struct vsw_ctl_reply *reply);

struct ev_loop;
struct vsw_ctl_server;

/* Server statistics, for tests and the log. */
struct vsw_ctl_server_stats {
	unsigned long accepted;
	unsigned long rejected_busy;  /* over VSW_CTL_CLIENTS_MAX */
	unsigned long closed_idle;
	unsigned long closed_oversize;
	unsigned long requests;
	unsigned long errors;
};

/*
 * Listen on a unix socket at path (an existing socket file is replaced;
 * any other existing file is an error), mode 0660. Returns NULL with errno
 * set on failure.
 */
struct vsw_ctl_server *vsw_ctl_server_create(struct ev_loop *loop,
	const char *path, const struct vsw_ctl_command *table, size_t n,
	void *ctx);
/* Close every client and the listener, unlink the socket. */
void vsw_ctl_server_destroy(struct vsw_ctl_server *srv);
void vsw_ctl_server_get_stats(const struct vsw_ctl_server *srv,
	struct vsw_ctl_server_stats *st);

#endif /* VSW_CTL_H */
