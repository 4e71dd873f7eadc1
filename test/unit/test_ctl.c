/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control-plane parsing: the tokenizer, dispatch through a command table
 * and reply building, on crafted and random (hostile) lines.
 */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <vsw/ctl.h>

static int
split(const char *in, char **argv, unsigned max, char *buf, size_t cap)
{
	const char *err;

	snprintf(buf, cap, "%s", in);
	return vsw_ctl_split(buf, argv, max, &err);
}

static void
test_split_words(void **state)
{
	char buf[256], *argv[8];

	(void)state;
	assert_int_equal(split("  port-add  vm1\tvhost-user \n", argv, 8, buf,
		sizeof(buf)), 3);
	assert_string_equal(argv[0], "port-add");
	assert_string_equal(argv[1], "vm1");
	assert_string_equal(argv[2], "vhost-user");

	assert_int_equal(split("flow-add 'in_port=1 actions=drop' x", argv, 8,
		buf, sizeof(buf)), 3);
	assert_string_equal(argv[1], "in_port=1 actions=drop");
	assert_string_equal(argv[2], "x");

	assert_int_equal(split("a \"b \\\" c\" d\\ e ''", argv, 8, buf,
		sizeof(buf)), 4);
	assert_string_equal(argv[1], "b \" c");
	assert_string_equal(argv[2], "d e");
	assert_string_equal(argv[3], "");

	assert_int_equal(split("x'y z'w", argv, 8, buf, sizeof(buf)), 1);
	assert_string_equal(argv[0], "xy zw");

	assert_int_equal(split("", argv, 8, buf, sizeof(buf)), 0);
	assert_int_equal(split("   \r\n", argv, 8, buf, sizeof(buf)), 0);
	assert_int_equal(split("# comment 'unterminated", argv, 8, buf,
		sizeof(buf)), 0);
	assert_int_equal(split("a # not a comment", argv, 8, buf,
		sizeof(buf)), 5);
	assert_string_equal(argv[1], "#");
}

static void
test_split_rejects(void **state)
{
	char buf[256], *argv[4];

	(void)state;
	assert_int_equal(split("a 'b", argv, 4, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(split("a \"b", argv, 4, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(split("a \x01 b", argv, 4, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(split("a 'x\x1b'", argv, 4, buf, sizeof(buf)),
		-EINVAL);
	assert_int_equal(split("a\nb", argv, 4, buf, sizeof(buf)), -EINVAL);
	/* escaped control bytes are refused too (found by fuzz_ctl) */
	assert_int_equal(split("a \\\x1b", argv, 4, buf, sizeof(buf)),
		-EINVAL);
	assert_int_equal(split("a \"x\\\r\"", argv, 4, buf, sizeof(buf)),
		-EINVAL);
	assert_int_equal(split("a \\\tb", argv, 4, buf, sizeof(buf)), 2);
	assert_int_equal(split("a b c d e", argv, 4, buf, sizeof(buf)), -E2BIG);
	assert_int_equal(split("a b c d", argv, 4, buf, sizeof(buf)), 4);
}

/* A byte below 0x20 other than tab: refused in a request. */
static bool
is_ctl_byte(char c)
{
	return (unsigned char)c < 0x20 && c != '\t';
}

/* One trailing LF or CR LF ends a line; any other control byte is bad. */
static bool
has_ctl_byte(const char *line)
{
	size_t len = strlen(line);

	if (len > 0 && line[len - 1] == '\n')
		len--;
	if (len > 0 && line[len - 1] == '\r')
		len--;
	for (size_t i = 0; i < len; i++)
		if (is_ctl_byte(line[i]))
			return true;
	return false;
}

static bool
starts_comment(const char *line)
{
	line += strspn(line, " \t");
	return *line == '#';
}

/*
 * Exact limits: every byte below 0x20 but tab is refused bare, quoted and
 * escaped; 0x20 and up (0x7f and 0xff too) pass.
 */
static void
test_split_ctl_bytes(void **state)
{
	static const char *const forms[] = {
		"a @b", "a '@'", "a \"@\"", "a \\@", "a \"\\@\""};
	char buf[64], *argv[4];

	(void)state;
	for (unsigned c = 1; c < 256; c++) {
		for (unsigned f = 0; f < 5; f++) {
			char in[16];
			int n;

			snprintf(in, sizeof(in), "%s", forms[f]);
			*strchr(in, '@') = (char)c;
			n = split(in, argv, 4, buf, sizeof(buf));
			if (is_ctl_byte((char)c)) {
				/* a last LF or CR ends the line instead */
				if (f != 3 || (c != '\n' && c != '\r'))
					assert_int_equal(n, -EINVAL);
			} else if (strchr("'\"\\", (int)c) == NULL) {
				assert_true(n > 0);
			}
		}
	}
}

/* Random bytes never crash the tokenizer; words stay inside the line and
 * carry no control bytes (escapes aside), and a line holding one outside a
 * comment is refused. */
static void
test_split_random(void **state)
{
	char line[300], orig[300], *argv[VSW_CTL_ARGS_MAX];
	const char *err;
	uint32_t seed = 12345;

	(void)state;
	for (int iter = 0; iter < 200000; iter++) {
		size_t len = (seed = seed * 1103515245u + 12345u) % 299;
		int n;

		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			/* bias towards the interesting bytes */
			static const char pick[] = " \t'\"\\#ab\n\r";
			line[i] = (seed >> 24) & 1 ? pick[(seed >> 8) % 10] :
				(char)(seed >> 16);
			if (line[i] == '\0')
				line[i] = 'z';
		}
		line[len] = '\0';
		memcpy(orig, line, len + 1);
		n = vsw_ctl_split(line, argv, VSW_CTL_ARGS_MAX, &err);
		assert_true(n == -EINVAL || n == -E2BIG ||
			(n >= 0 && n <= (int)VSW_CTL_ARGS_MAX));
		if (n < 0) {
			assert_non_null(err);
			continue;
		}
		for (int i = 0; i < n; i++) {
			assert_true(argv[i] >= line && argv[i] < line + len + 1);
			assert_true(argv[i] + strlen(argv[i]) <= line + len);
			for (const char *c = argv[i]; *c != '\0'; c++)
				assert_false(is_ctl_byte(*c));
		}
		if (n > 0 || !starts_comment(orig))
			assert_false(has_ctl_byte(orig));
	}
}

struct calls {
	int n;
	int argc;
	char last[64];
};

static void
h_echo(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	struct calls *c = ctx;

	c->n++;
	c->argc = argc;
	snprintf(c->last, sizeof(c->last), "%s", argv[argc - 1]);
	if (r->json) {
		vsw_ctl_reply_printf(r, "{\"last\": ");
		vsw_ctl_reply_json_str(r, argv[argc - 1]);
		vsw_ctl_reply_printf(r, "}\n");
	} else {
		vsw_ctl_reply_printf(r, "%s\n", argv[argc - 1]);
	}
}

static void
h_fail(void *ctx, int argc, char **argv, struct vsw_ctl_reply *r)
{
	(void)ctx;
	(void)argc;
	vsw_ctl_reply_printf(r, "partial output\n");
	vsw_ctl_reply_error(r, "bad thing: %s\nsecond line", argv[0]);
}

static const struct vsw_ctl_command table[] = {
	{"echo", "ARG [ARG]", 1, 2, h_echo, "echo the last argument"},
	{"fail", "", 0, -1, h_fail, "always fails"},
};

static int
exec(struct calls *c, const char *line, struct vsw_ctl_reply *r)
{
	char buf[VSW_CTL_LINE_MAX];

	snprintf(buf, sizeof(buf), "%s", line);
	vsw_ctl_reply_init(r, false);
	return vsw_ctl_execute(table, 2, c, buf, r);
}

static void
test_execute(void **state)
{
	struct vsw_ctl_reply r;
	struct calls c = {0};

	(void)state;
	assert_int_equal(exec(&c, "echo hello\n", &r), 0);
	assert_int_equal(c.n, 1);
	assert_int_equal((int)r.len, 6);
	assert_memory_equal(r.buf, "hello\n", 6);
	vsw_ctl_reply_free(&r);

	assert_int_equal(exec(&c, "echo --json 'a\"b'", &r), 0);
	assert_true(r.json);
	assert_string_equal(r.buf, "{\"schema\": 1, \"last\": \"a\\\"b\"}\n");
	vsw_ctl_reply_free(&r);

	/* argument counts are checked before the handler runs */
	assert_int_equal(exec(&c, "echo", &r), -1);
	assert_string_equal(r.buf, "error: usage: echo ARG [ARG]\n");
	vsw_ctl_reply_free(&r);
	assert_int_equal(exec(&c, "echo a b c", &r), -1);
	vsw_ctl_reply_free(&r);
	assert_int_equal(c.n, 2);

	assert_int_equal(exec(&c, "nosuch x", &r), -1);
	assert_string_equal(r.buf, "error: unknown command 'nosuch' (try 'help')\n");
	vsw_ctl_reply_free(&r);

	assert_int_equal(exec(&c, "", &r), -1);
	vsw_ctl_reply_free(&r);
	assert_int_equal(exec(&c, "echo 'open", &r), -1);
	assert_string_equal(r.buf, "error: unterminated quote\n");
	vsw_ctl_reply_free(&r);

	/* an error replaces partial output and stays one line */
	assert_int_equal(exec(&c, "fail --json", &r), -1);
	assert_string_equal(r.buf,
		"{\"schema\": 1, \"error\": \"bad thing: fail second line\"}\n");
	vsw_ctl_reply_free(&r);

	assert_int_equal(exec(&c, "help", &r), 0);
	assert_non_null(strstr(r.buf, "echo"));
	assert_non_null(strstr(r.buf, "always fails"));
	vsw_ctl_reply_free(&r);
	assert_int_equal(c.n, 2);
}

static void
test_reply_json_escape(void **state)
{
	struct vsw_ctl_reply r;

	(void)state;
	vsw_ctl_reply_init(&r, true);
	vsw_ctl_reply_json_str(&r, "a\\b\"c\n\x01\x7f");
	assert_string_equal(r.buf, "\"a\\\\b\\\"c\\n\\u0001\\u007f\"");
	vsw_ctl_reply_free(&r);
}

/* "schema" goes first in a JSON object, and nowhere else. */
static void
test_reply_json_schema(void **state)
{
	static const char *const cases[][2] = {
		{"{\"a\": 1}\n", "{\"schema\": 1, \"a\": 1}\n"},
		{"{}\n", "{\"schema\": 1}\n"},
		{"{ }", "{\"schema\": 1 }"},
		{"[1]\n", "[1]\n"},
	};
	struct vsw_ctl_reply r;

	(void)state;
	assert_int_equal(VSW_CTL_JSON_SCHEMA, 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		vsw_ctl_reply_init(&r, true);
		vsw_ctl_reply_printf(&r, "%s", cases[i][0]);
		vsw_ctl_reply_json_finish(&r);
		assert_string_equal(r.buf, cases[i][1]);
		assert_int_equal((int)r.len, (int)strlen(cases[i][1]));
		vsw_ctl_reply_free(&r);
	}
	/* text replies are left alone */
	vsw_ctl_reply_init(&r, false);
	vsw_ctl_reply_printf(&r, "{not json}\n");
	vsw_ctl_reply_json_finish(&r);
	assert_string_equal(r.buf, "{not json}\n");
	vsw_ctl_reply_free(&r);
}

static void
test_reply_large(void **state)
{
	struct vsw_ctl_reply r;
	char chunk[1001];

	(void)state;
	memset(chunk, 'x', 1000);
	chunk[1000] = '\0';
	vsw_ctl_reply_init(&r, false);
	for (int i = 0; i < 1000; i++)
		vsw_ctl_reply_printf(&r, "%s", chunk);
	assert_false(r.oom);
	assert_int_equal((int)r.len, 1000 * 1000);
	assert_int_equal((int)strlen(r.buf), 1000 * 1000);
	/* past the cap the reply refuses to grow instead of eating memory */
	for (int i = 0; i < 20000 && !r.oom; i++)
		vsw_ctl_reply_printf(&r, "%s", chunk);
	assert_true(r.oom);
	vsw_ctl_reply_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_words),
		cmocka_unit_test(test_split_rejects),
		cmocka_unit_test(test_split_ctl_bytes),
		cmocka_unit_test(test_split_random),
		cmocka_unit_test(test_execute),
		cmocka_unit_test(test_reply_json_escape),
		cmocka_unit_test(test_reply_json_schema),
		cmocka_unit_test(test_reply_large),
	};

	return cmocka_run_group_tests_name("ctl", tests, NULL, NULL);
}
