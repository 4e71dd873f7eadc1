/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rule text parser: the only file in switch/ that reads user text.
 *
 * Runs on the control thread. Trusts nothing in the text: every token is
 * checked for syntax and range, every error names the token, and the caller's
 * rule is written only once the whole text parsed. Match tokens are collected
 * first and applied protocol-first, so "nw_src=...,ip" and "ip,nw_src=..."
 * mean the same and a field's prerequisites are checked independent of order.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsw/rule.h>

#include "rule_priv.h"

#define MAX_TOKENS 64
#define TOKEN_MAX 256
#define ERR_TOKEN_MAX 64 /* characters of a token quoted in an error */

int
rule_parse_fail(struct parse_ctx *c, const char *tok, const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	/* A long token is cut so the reason still fits a short buffer. */
	if (c->err != NULL && c->errlen > 0)
		snprintf(c->err, c->errlen, "'%.*s%s': %s", ERR_TOKEN_MAX, tok,
			strlen(tok) > ERR_TOKEN_MAX ? "..." : "", why);
	return -EINVAL;
}

/* Unsigned decimal or 0x-hex, whole string, <= max. */
int
rule_parse_uint(const char *s, uint32_t max, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (s[0] == '\0' || s[0] == '-' || s[0] == '+' ||
		isspace((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || v > max)
		return -1;
	/* strtoull's base 0 takes a leading 0 as octal: refuse "010". */
	if (s[0] == '0' && s[1] != '\0' && s[1] != 'x' && s[1] != 'X')
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int
parse_mac(const char *s, uint8_t mac[6])
{
	unsigned i;

	for (i = 0; i < 6; i++) {
		if (!isxdigit((unsigned char)s[0]) ||
			!isxdigit((unsigned char)s[1]))
			return -1;
		char hex[3] = {s[0], s[1], '\0'};
		mac[i] = (uint8_t)strtoul(hex, NULL, 16);
		s += 2;
		if (i < 5 && *s++ != ':')
			return -1;
	}
	return *s == '\0' ? 0 : -1;
}

/* Split "value/mask" in place: returns the mask part or NULL. */
static char *
split_mask(char *val)
{
	char *slash = strchr(val, '/');

	if (slash == NULL)
		return NULL;
	*slash = '\0';
	return slash + 1;
}

int
rule_parse_port(
	struct parse_ctx *c, const char *tok, const char *val, uint16_t *port)
{
	uint32_t v;
	int rc;

	if (isdigit((unsigned char)val[0])) {
		if (rule_parse_uint(val, UINT16_MAX, &v) < 0)
			return rule_parse_fail(c, tok, "port number must be 0..65535");
		*port = (uint16_t)v;
		return 0;
	}
	if (val[0] == '\0')
		return rule_parse_fail(c, tok, "missing port");
	if (c->lookup == NULL)
		return rule_parse_fail(c, tok, "unknown port '%s'", val);
	rc = c->lookup(val, c->lookup_arg);
	if (rc < 0 || rc > UINT16_MAX) {
		rule_parse_fail(c, tok, "unknown port '%s'", val);
		return rc < 0 ? rc : -EINVAL;
	}
	*port = (uint16_t)rc;
	return 0;
}

static int
parse_dl_addr(struct parse_ctx *c, const char *tok, char *val, uint8_t *key,
	uint8_t *mask)
{
	char *m = split_mask(val);

	if (parse_mac(val, key) < 0)
		return rule_parse_fail(c, tok, "bad Ethernet address");
	if (m == NULL)
		memset(mask, 0xff, 6);
	else if (parse_mac(m, mask) < 0)
		return rule_parse_fail(c, tok, "bad Ethernet mask");
	return 0;
}

static void
prefix_to_mask(unsigned plen, uint8_t *mask, unsigned bytes)
{
	unsigned i;

	for (i = 0; i < bytes; i++) {
		unsigned bits = plen > 8 ? 8 : plen;

		mask[i] = (uint8_t)(0xff00u >> bits);
		plen -= bits;
	}
}

static int
parse_nw_addr(struct parse_ctx *c, const char *tok, char *val, bool v6,
	uint8_t *key, uint8_t *mask)
{
	unsigned bytes = v6 ? 16 : 4;
	char *m = split_mask(val);
	uint32_t plen;

	if (inet_pton(v6 ? AF_INET6 : AF_INET, val, key) != 1)
		return rule_parse_fail(c, tok, "bad %s address", v6 ? "IPv6" : "IPv4");
	if (m == NULL) {
		memset(mask, 0xff, bytes);
	} else if (isdigit((unsigned char)m[0]) && strpbrk(m, ".:") == NULL) {
		if (rule_parse_uint(m, bytes * 8, &plen) < 0)
			return rule_parse_fail(c, tok, "prefix length must be 0..%u",
				bytes * 8);
		prefix_to_mask(plen, mask, bytes);
	} else if (inet_pton(v6 ? AF_INET6 : AF_INET, m, mask) != 1) {
		return rule_parse_fail(c, tok, "bad %s mask", v6 ? "IPv6" : "IPv4");
	}
	return 0;
}

/* A 16-bit field in network order, value[/mask]. */
static int
parse_be16(struct parse_ctx *c, const char *tok, char *val, uint16_t *key,
	uint16_t *mask)
{
	char *m = split_mask(val);
	uint32_t v, mv = 0xffff;

	if (rule_parse_uint(val, 0xffff, &v) < 0)
		return rule_parse_fail(c, tok, "value must be 0..65535");
	if (m != NULL && rule_parse_uint(m, 0xffff, &mv) < 0)
		return rule_parse_fail(c, tok, "mask must be 0..0xffff");
	*key = htons((uint16_t)v);
	*mask = htons((uint16_t)mv);
	return 0;
}

static const struct vsw_rule_shorthand shorthands[] = {
	{"ip", 0x0800, 0, false},
	{"ipv6", 0x86dd, 0, false},
	{"arp", 0x0806, 0, false},
	{"tcp", 0x0800, 6, true},
	{"udp", 0x0800, 17, true},
	{"icmp", 0x0800, 1, true},
	{"sctp", 0x0800, 132, true},
	{"tcp6", 0x86dd, 6, true},
	{"udp6", 0x86dd, 17, true},
	{"icmp6", 0x86dd, 58, true},
	{"sctp6", 0x86dd, 132, true},
};

const struct vsw_rule_shorthand *
rule_shorthands(unsigned *n)
{
	*n = sizeof(shorthands) / sizeof(shorthands[0]);
	return shorthands;
}

static int
set_field(struct parse_ctx *c, const char *tok, uint32_t f)
{
	if (c->r.fields & f)
		return rule_parse_fail(c, tok, "field given twice");
	c->r.fields |= f;
	return 0;
}

static int
apply_protocol(struct parse_ctx *c, const char *tok, char *val)
{
	struct vsw_flow_key *k = &c->r.key, *m = &c->r.mask.m;
	unsigned i, n = sizeof(shorthands) / sizeof(shorthands[0]);
	uint32_t v;
	int rc;

	if (val != NULL) { /* dl_type= */
		if ((rc = set_field(c, tok, VSW_RULE_F_DL_TYPE)) < 0)
			return rc;
		if (rule_parse_uint(val, 0xffff, &v) < 0)
			return rule_parse_fail(c, tok, "dl_type must be 0..0xffff");
		k->dl_type = htons((uint16_t)v);
		m->dl_type = 0xffff;
		return 0;
	}
	for (i = 0; i < n; i++)
		if (strcmp(tok, shorthands[i].name) == 0)
			break;
	if ((rc = set_field(c, tok, VSW_RULE_F_DL_TYPE)) < 0)
		return rc;
	k->dl_type = htons(shorthands[i].dl_type);
	m->dl_type = 0xffff;
	if (shorthands[i].has_proto) {
		if ((rc = set_field(c, tok, VSW_RULE_F_NW_PROTO)) < 0)
			return rc;
		k->nw_proto = shorthands[i].nw_proto;
		m->nw_proto = 0xff;
	}
	return 0;
}

static bool
is_shorthand(const char *tok)
{
	unsigned i;

	for (i = 0; i < sizeof(shorthands) / sizeof(shorthands[0]); i++)
		if (strcmp(tok, shorthands[i].name) == 0)
			return true;
	return false;
}

static uint16_t
dl_type_of(const struct parse_ctx *c)
{
	return (c->r.fields & VSW_RULE_F_DL_TYPE) ? ntohs(c->r.key.dl_type) : 0;
}

static int
need_l3(struct parse_ctx *c, const char *tok, bool arp_ok)
{
	uint16_t t = dl_type_of(c);

	if (t == 0x0800 || t == 0x86dd || (arp_ok && t == 0x0806))
		return 0;
	return rule_parse_fail(
		c, tok, "needs %s", arp_ok ? "ip, ipv6 or arp" : "ip or ipv6");
}

static int apply_l3l4(
	struct parse_ctx *c, const char *tok, const char *name, char *val);

static int
apply_field(struct parse_ctx *c, const char *tok, const char *name, char *val)
{
	struct vsw_flow_key *k = &c->r.key, *m = &c->r.mask.m;
	uint32_t v;
	int rc;

	if (strcmp(name, "priority") == 0) {
		if (c->has_priority)
			return rule_parse_fail(c, tok, "field given twice");
		c->has_priority = true;
		if (rule_parse_uint(val, VSW_RULE_PRIORITY_MAX, &v) < 0)
			return rule_parse_fail(c, tok, "priority must be 0..65535");
		c->r.priority = (int32_t)v;
		return 0;
	}
	if (strcmp(name, "in_port") == 0) {
		if ((rc = set_field(c, tok, VSW_RULE_F_IN_PORT)) < 0)
			return rc;
		m->in_port = 0xffff;
		return rule_parse_port(c, tok, val, &k->in_port);
	}
	if (strcmp(name, "dl_src") == 0 || strcmp(name, "dl_dst") == 0) {
		bool src = name[3] == 's';

		if ((rc = set_field(c, tok,
			     src ? VSW_RULE_F_DL_SRC : VSW_RULE_F_DL_DST)) < 0)
			return rc;
		return parse_dl_addr(c, tok, val, src ? k->dl_src : k->dl_dst,
			src ? m->dl_src : m->dl_dst);
	}
	if (strcmp(name, "dl_vlan") == 0) {
		if ((rc = set_field(c, tok, VSW_RULE_F_DL_VLAN)) < 0)
			return rc;
		if (rule_parse_uint(val, 0xffff, &v) < 0 ||
			(v > 4095 && v != VSW_RULE_VLAN_NONE))
			return rule_parse_fail(
				c, tok, "dl_vlan must be 0..4095 or 0xffff");
		if (v == VSW_RULE_VLAN_NONE) {
			k->vlan_tci = 0;
			m->vlan_tci = htons(VSW_VLAN_PRESENT);
		} else {
			k->vlan_tci = htons((uint16_t)(VSW_VLAN_PRESENT | v));
			m->vlan_tci = htons(VSW_VLAN_PRESENT | 0x0fff);
		}
		return 0;
	}
	return apply_l3l4(c, tok, name, val);
}

static int
apply_l3l4(struct parse_ctx *c, const char *tok, const char *name, char *val)
{
	struct vsw_flow_key *k = &c->r.key, *m = &c->r.mask.m;
	uint32_t v;
	int rc;

	if (strcmp(name, "nw_src") == 0 || strcmp(name, "nw_dst") == 0) {
		bool src = name[3] == 's';

		if ((rc = set_field(c, tok,
			     src ? VSW_RULE_F_NW_SRC : VSW_RULE_F_NW_DST)) <
				0 ||
			(rc = need_l3(c, tok, true)) < 0)
			return rc;
		return parse_nw_addr(c, tok, val, dl_type_of(c) == 0x86dd,
			src ? k->nw_src : k->nw_dst,
			src ? m->nw_src : m->nw_dst);
	}
	if (strcmp(name, "nw_proto") == 0) {
		if ((rc = set_field(c, tok, VSW_RULE_F_NW_PROTO)) < 0 ||
			(rc = need_l3(c, tok, true)) < 0)
			return rc;
		if (rule_parse_uint(val, 0xff, &v) < 0)
			return rule_parse_fail(c, tok, "nw_proto must be 0..255");
		k->nw_proto = (uint8_t)v;
		m->nw_proto = 0xff;
		return 0;
	}
	if (strcmp(name, "nw_tos") == 0) {
		if ((rc = set_field(c, tok, VSW_RULE_F_NW_TOS)) < 0 ||
			(rc = need_l3(c, tok, false)) < 0)
			return rc;
		if (rule_parse_uint(val, 0xff, &v) < 0 || (v & 3) != 0)
			return rule_parse_fail(c, tok,
				"nw_tos must be 0..252, a multiple of 4 "
				"(DSCP)");
		k->nw_tos = (uint8_t)v;
		m->nw_tos = 0xfc;
		return 0;
	}
	if (strcmp(name, "tp_src") == 0 || strcmp(name, "tp_dst") == 0) {
		bool src = name[3] == 's';

		if ((rc = set_field(c, tok,
			     src ? VSW_RULE_F_TP_SRC : VSW_RULE_F_TP_DST)) <
				0 ||
			(rc = need_l3(c, tok, false)) < 0)
			return rc;
		if (!(c->r.fields & VSW_RULE_F_NW_PROTO))
			return rule_parse_fail(c, tok, "needs nw_proto (tcp, udp, ...)");
		return parse_be16(c, tok, val, src ? &k->tp_src : &k->tp_dst,
			src ? &m->tp_src : &m->tp_dst);
	}
	return rule_parse_fail(c, tok, "unknown field");
}

static unsigned
token_pass(const char *tok)
{
	if (strchr(tok, '=') == NULL)
		return is_shorthand(tok) ? 0 : 2;
	if (strncmp(tok, "dl_type=", 8) == 0)
		return 0;
	return strncmp(tok, "nw_proto=", 9) == 0 ? 1 : 2;
}

static int
apply_token(struct parse_ctx *c, char *tok)
{
	char *eq = strchr(tok, '=');
	char name[32], val[TOKEN_MAX];

	if (eq == NULL)
		return is_shorthand(tok) ? apply_protocol(c, tok, NULL)
					 : rule_parse_fail(c, tok, "unknown keyword");
	if (strncmp(tok, "dl_type=", 8) == 0)
		return apply_protocol(c, tok, eq + 1);
	if ((size_t)(eq - tok) >= sizeof(name))
		return rule_parse_fail(c, tok, "unknown field");
	memcpy(name, tok, (size_t)(eq - tok));
	name[eq - tok] = '\0';
	snprintf(val, sizeof(val), "%s", eq + 1);
	return apply_field(c, tok, name, val);
}

/* Apply the collected match tokens, pass by pass. */
static int
apply_match(struct parse_ctx *c, char **toks, unsigned n)
{
	unsigned pass, i;
	int rc;

	for (pass = 0; pass < 3; pass++)
		for (i = 0; i < n; i++)
			if (token_pass(toks[i]) == pass &&
				(rc = apply_token(c, toks[i])) < 0)
				return rc;
	return 0;
}

static void
mask_key(struct vsw_rule *r)
{
	uint64_t *k = (uint64_t *)(void *)&r->key;
	const uint64_t *m = vsw_flow_key_words(&r->mask.m);
	unsigned i;

	for (i = 0; i < VSW_FLOW_KEY_WORDS; i++)
		k[i] &= m[i];
}

/* Split the match part on commas/blanks; "actions=" ends it. */
static int
tokenize(struct parse_ctx *c, char *s, unsigned flags, char **toks,
	unsigned *n_toks, char **actions)
{
	*actions = NULL;
	*n_toks = 0;
	while (*s != '\0') {
		char *tok;

		while (*s == ',' || isspace((unsigned char)*s))
			s++;
		if (*s == '\0')
			break;
		if (strncmp(s, "actions=", 8) == 0) {
			if (flags & VSW_RULE_PARSE_MATCH_ONLY)
				return rule_parse_fail(c, "actions=", "not allowed here");
			*actions = s + 8;
			return 0;
		}
		tok = s;
		while (*s != '\0' && *s != ',' && !isspace((unsigned char)*s))
			s++;
		if (*s != '\0')
			*s++ = '\0';
		if (strlen(tok) >= TOKEN_MAX)
			return rule_parse_fail(c, tok, "token too long");
		if (*n_toks >= MAX_TOKENS)
			return rule_parse_fail(c, tok, "too many fields");
		toks[(*n_toks)++] = tok;
	}
	if (!(flags & VSW_RULE_PARSE_MATCH_ONLY))
		return rule_parse_fail(c, "", "missing actions=");
	return 0;
}

int
vsw_rule_parse(const char *text, unsigned flags, vsw_rule_port_lookup_fn lookup,
	void *lookup_arg, struct vsw_rule *rule, char *err, size_t errlen)
{
	struct parse_ctx c;
	char *copy, *toks[MAX_TOKENS], *actions;
	unsigned n_toks;
	int rc;

	memset(&c, 0, sizeof(c));
	c.lookup = lookup;
	c.lookup_arg = lookup_arg;
	c.err = err;
	c.errlen = errlen;
	c.r.priority = VSW_RULE_PRIORITY_DEFAULT;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (text == NULL)
		return rule_parse_fail(&c, "", "no rule text");
	copy = strdup(text);
	if (copy == NULL)
		return -ENOMEM;
	rc = tokenize(&c, copy, flags, toks, &n_toks, &actions);
	if (rc == 0)
		rc = apply_match(&c, toks, n_toks);
	if (rc == 0 && actions != NULL)
		rc = rule_parse_actions(&c, actions);
	free(copy);
	if (rc < 0)
		return rc;
	mask_key(&c.r);
	*rule = c.r;
	return 0;
}

int
vsw_rule_match_equal(const struct vsw_rule *a, const struct vsw_rule *b)
{
	return a->priority == b->priority &&
	       memcmp(&a->key, &b->key, sizeof(a->key)) == 0 &&
	       memcmp(&a->mask, &b->mask, sizeof(a->mask)) == 0;
}
