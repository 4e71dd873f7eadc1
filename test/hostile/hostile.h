/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the hostile front-end's scenario files (hostile_*.c). */
#ifndef VSW_TEST_HOSTILE_H
#define VSW_TEST_HOSTILE_H

#include <stddef.h>
#include <stdint.h>

#include "vu_front.h"

struct hs_ctx {
	const char *path; /* the port's vhost-user socket */
	struct vu_front f;
};

/*
 * One named scenario. `counters`: the port-show --json counters (virtq
 * names, or the port's msg_rejected/disconnects/queue_errors) that must
 * move; the driver checks them. run() returns 0 when what the front-end
 * itself can see matched (chain returned with len 0, connection closed, ...).
 */
struct hs_scenario {
	const char *name;
	const char *counters;
	const char *what;
	int (*run)(struct hs_ctx *c);
};

extern const struct hs_scenario hs_desc_scenarios[];
extern const size_t hs_n_desc;
extern const struct hs_scenario hs_msg_scenarios[];
extern const size_t hs_n_msg;
extern const struct hs_scenario hs_vring_scenarios[];
extern const size_t hs_n_vring;
extern const struct hs_scenario hs_fd_scenarios[];
extern const size_t hs_n_fd;
extern const struct hs_scenario hs_budget_scenarios[];
extern const size_t hs_n_budget;
extern const struct hs_scenario hs_mem_scenarios[];
extern const size_t hs_n_mem;
extern const struct hs_scenario hs_hdr_scenarios[];
extern const size_t hs_n_hdr;
extern const struct hs_scenario hs_packed_scenarios[];
extern const size_t hs_n_packed;
extern const struct hs_scenario hs_log_scenarios[];
extern const size_t hs_n_log;
extern const struct hs_scenario hs_callfd_scenarios[];
extern const size_t hs_n_callfd;

void hs_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hs_sleep_ms(int ms);
/* vswd dropped the connection (after a bad message) within 3 s: 0, else
 * a note and 1. */
int hs_closed(struct hs_ctx *c);
/* Connected to the port's socket: 0, else a note and vu_open's error. */
int hs_opened(struct hs_ctx *c);
/* Connected, features and owner done, memory table sent: 0, else a note
 * and -1. */
int hs_negotiated(struct hs_ctx *c);
/*
 * After hs_negotiated(): one request with its payload and nfds (at most
 * 3) copies of the memory fd; 0 (the scenario passes) when vswd closes
 * the connection.
 */
int hs_sent_closes(struct hs_ctx *c, uint32_t req, const void *payload,
	uint32_t size, int nfds);
/* A 64-byte Ethernet frame (local experimental type) carrying seq. */
void hs_frame(unsigned char *buf, unsigned len, unsigned long long seq);

#endif /* VSW_TEST_HOSTILE_H */
