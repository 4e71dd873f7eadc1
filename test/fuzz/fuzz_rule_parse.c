/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the rule parser (vsw_rule_parse) and its inverse
 * (vsw_rule_format) on arbitrary text. Input: byte 0 = flags (bit 0:
 * VSW_RULE_PARSE_MATCH_ONLY, bit 1: no port-name lookup, bits 2..7: error
 * buffer length 0..63); the rest is the rule text (cut at a NUL).
 *
 * Checks: a failed parse leaves the output rule byte for byte untouched and
 * writes a NUL-terminated message within the error buffer (nothing past
 * it); a successful one has its key masked by its mask, and survives
 * parse -> format -> parse unchanged (with and without port names), the
 * second format giving the same text; a truncated format is a prefix of the
 * full one and the returned length is the full one's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <vsw/rule.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TEXT_MAX 2048

static const struct {
	const char *name;
	uint16_t port;
} ports[] = {
	{"vm1", 1}, {"vm2", 2}, {"uplink", 100}, {"br-int", 65534},
	{"x", 0},
};

static int
lookup(const char *name, void *arg)
{
	(void)arg;
	for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++)
		if (strcmp(ports[i].name, name) == 0)
			return ports[i].port;
	return -ENOENT;
}

static const char *
port_name(uint16_t port, void *arg)
{
	(void)arg;
	for (size_t i = 0; i < sizeof(ports) / sizeof(ports[0]); i++)
		if (ports[i].port == port)
			return ports[i].name;
	return NULL;
}

static void
check_same(const struct vsw_rule *a, const struct vsw_rule *b)
{
	FZ_CHECK(memcmp(&a->key, &b->key, sizeof(a->key)) == 0);
	FZ_CHECK(memcmp(&a->mask, &b->mask, sizeof(a->mask)) == 0);
	FZ_CHECK(a->priority == b->priority);
	FZ_CHECK(a->fields == b->fields);
	FZ_CHECK(a->n_actions == b->n_actions);
	FZ_CHECK(memcmp(a->actions, b->actions,
			 a->n_actions * sizeof(a->actions[0])) == 0);
	FZ_CHECK(vsw_rule_match_equal(a, b));
}

static void
check_wellformed(const struct vsw_rule *r, unsigned flags)
{
	const uint64_t *k = vsw_flow_key_words(&r->key);
	const uint64_t *m = vsw_flow_key_words(&r->mask.m);

	for (unsigned i = 0; i < VSW_FLOW_KEY_WORDS; i++)
		FZ_CHECK((k[i] & ~m[i]) == 0);
	FZ_CHECK(r->priority >= 0 && r->priority <= VSW_RULE_PRIORITY_MAX);
	FZ_CHECK(r->n_actions <= VSW_RULE_MAX_ACTIONS);
	if (!(flags & VSW_RULE_PARSE_MATCH_ONLY))
		FZ_CHECK(r->n_actions >= 1);
	else
		FZ_CHECK(r->n_actions == 0);
}

/* format, reparse, compare; returns the formatted length */
static void
roundtrip(const struct vsw_rule *r, unsigned flags, bool names)
{
	static char text[VSW_RULE_TEXT_MAX * 4], text2[VSW_RULE_TEXT_MAX * 4];
	char small[40];
	struct vsw_rule r2;
	char err[128];
	int n, n2, rc;
	int mo = (flags & VSW_RULE_PARSE_MATCH_ONLY) != 0;

	n = vsw_rule_format(r, mo, names ? port_name : NULL, NULL, text,
		sizeof(text));
	FZ_CHECK(n > 0 && (size_t)n < sizeof(text) && strlen(text) == (size_t)n);
	if (!names)
		FZ_CHECK(n < VSW_RULE_TEXT_MAX);
	/* truncated output: a NUL-terminated prefix, same length returned */
	n2 = vsw_rule_format(r, mo, names ? port_name : NULL, NULL, small,
		sizeof(small));
	FZ_CHECK(n2 == n);
	FZ_CHECK(strlen(small) == (size_t)(n < (int)sizeof(small) ? n :
						(int)sizeof(small) - 1));
	FZ_CHECK(strncmp(small, text, strlen(small)) == 0);

	rc = vsw_rule_parse(text, flags, names ? lookup : NULL, NULL, &r2, err,
		sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "reparse of '%s' failed: %s\n", text, err);
		FZ_CHECK(rc == 0);
	}
	check_same(r, &r2);
	n2 = vsw_rule_format(&r2, mo, names ? port_name : NULL, NULL, text2,
		sizeof(text2));
	FZ_CHECK(n2 == n && strcmp(text, text2) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[TEXT_MAX + 1];
	char err[64 + 16];
	struct vsw_rule r, sentinel;
	unsigned flags;
	size_t errlen, len;
	bool names;
	int rc;

	if (size == 0)
		return 0;
	flags = data[0] & VSW_RULE_PARSE_MATCH_ONLY;
	names = !(data[0] & 2);
	errlen = data[0] >> 2;
	len = size - 1 < TEXT_MAX ? size - 1 : TEXT_MAX;
	memcpy(text, data + 1, len);
	text[len] = '\0';

	memset(&sentinel, 0x5a, sizeof(sentinel));
	r = sentinel;
	memset(err, 0x77, sizeof(err));
	rc = vsw_rule_parse(text, flags, names ? lookup : NULL, NULL, &r,
		errlen ? err : NULL, errlen);
	for (size_t i = errlen; i < sizeof(err); i++)
		FZ_CHECK(err[i] == 0x77);
	if (errlen > 0)
		FZ_CHECK(memchr(err, '\0', errlen) != NULL);
	if (rc != 0) {
		FZ_CHECK(rc < 0);
		FZ_CHECK(memcmp(&r, &sentinel, sizeof(r)) == 0);
		if (errlen > 1)
			FZ_CHECK(err[0] != '\0');
		return 0;
	}
	if (errlen > 0)
		FZ_CHECK(err[0] == '\0');
	check_wellformed(&r, flags);
	roundtrip(&r, flags, names);
	if (names)
		roundtrip(&r, flags, false);
	return 0;
}
