/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the rule parser (rule_parse*.c) and the rule formatter. */
#ifndef VSW_RULE_PRIV_H
#define VSW_RULE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vsw/rule.h>

/* "tcp" = dl_type 0x0800 + nw_proto 6, and so on. */
struct vsw_rule_shorthand {
	const char *name;
	uint16_t dl_type; /* host order */
	uint8_t nw_proto;
	bool has_proto;
};

const struct vsw_rule_shorthand *rule_shorthands(unsigned *n);

/* rule_parse.c: one parse, its result and where its error goes. */
struct parse_ctx {
	struct vsw_rule r;
	vsw_rule_port_lookup_fn lookup;
	void *lookup_arg;
	char *err;
	size_t errlen;
	bool has_priority;
};

/* Write "'TOKEN': reason" to the context's error buffer; returns -EINVAL. */
int rule_parse_fail(struct parse_ctx *c, const char *tok, const char *fmt,
	...) __attribute__((format(printf, 3, 4)));
/* Unsigned decimal or 0x-hex, whole string, <= max: 0 or -EINVAL. */
int rule_parse_uint(const char *s, uint32_t max, uint32_t *out);
/* A port name (through the context's lookup) or number: 0 or -EINVAL. */
int rule_parse_port(struct parse_ctx *c, const char *tok, const char *val,
	uint16_t *out);

/* rule_parse_actions.c: the text after "actions=": 0 or -EINVAL. */
int rule_parse_actions(struct parse_ctx *c, char *list);

#endif /* VSW_RULE_PRIV_H */
