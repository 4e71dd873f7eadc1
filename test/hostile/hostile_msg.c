/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Message-level scenarios: malformed, out-of-range and out-of-order
 * vhost-user messages. The front-end checks what it can see (vswd closed
 * the connection, or still answers); the driver checks the counters.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "hostile.h"

/* vswd must drop the connection after the message. */
static int
closed(struct hs_ctx *c)
{
	if (!vu_peer_closed(&c->f, 3000)) {
		hs_note("connection still open after a bad message");
		return 1;
	}
	return 0;
}

static int
s_short_header(struct hs_ctx *c)
{
	static const unsigned char b[6] = {VU_SET_OWNER, 0, 0, 0, 1, 0};

	if (vu_open(&c->f, c->path) != 0)
		return 1;
	vu_send_raw(&c->f, b, sizeof(b), NULL, 0);
	shutdown(c->f.sock, 1);
	return closed(c);
}

const struct hs_scenario hs_msg_scenarios[] = {
	{"msg-short-header", "disconnects",
		"6 of the 12 header bytes, then EOF", s_short_header},
};
const size_t hs_n_msg = sizeof(hs_msg_scenarios) / sizeof(hs_msg_scenarios[0]);
