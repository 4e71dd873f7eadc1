/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared between the rule parser and the rule formatter. */
#ifndef VSW_RULE_PRIV_H
#define VSW_RULE_PRIV_H

#include <stdbool.h>
#include <stdint.h>

/* "tcp" = dl_type 0x0800 + nw_proto 6, and so on. */
struct vsw_rule_shorthand {
	const char *name;
	uint16_t dl_type; /* host order */
	uint8_t nw_proto;
	bool has_proto;
};

const struct vsw_rule_shorthand *rule_shorthands(unsigned *n);

#endif /* VSW_RULE_PRIV_H */
