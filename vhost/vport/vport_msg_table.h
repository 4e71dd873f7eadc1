/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The vhost-user requests (front-end to back-end) as vsw sees them: one
 * row per request, the one place the wire format is written down in the
 * product (DPDK vhost_user.c keeps {request, name, handler, fds} the same
 * way). vport_msg.c checks every message against its row before
 * librte_vhost acts on it; vport_dev.c reads the rows to know which
 * messages must find the queues withdrawn, and both name messages in their
 * log lines from it.
 *
 * Columns:
 *   name       the spec's name without VHOST_USER_
 *   request    its number on the wire
 *   size_min,  the payload size it must carry, in bytes: min == max is a
 *   size_max   fixed size; VPORT_MSG_ANY is not checked (a request whose
 *              payload librte_vhost ignores, or one refused anyway because
 *              vsw does not offer it); SET_MEM_TABLE is variable
 *              (8 + 32 * regions, 1..8 regions) and its count is checked too
 *   fds        how many fds it may carry, from the spec (librte_vhost
 *              checks the count and closes the fds of what it refuses;
 *              vsw's hook cannot see them)
 *   flags      VPORT_MSG_F_*, below
 *
 * A request not in the table is refused. The test frontends keep their own
 * table (test/hostile/vu_front.h): an oracle independent of this one.
 */
#ifndef VSW_VPORT_MSG_TABLE_H
#define VSW_VPORT_MSG_TABLE_H

#include <stdint.h>

#define VPORT_MSG_ANY UINT32_MAX
#define VPORT_MSG_REGIONS_MAX 8 /* the spec's memory table limit */
#define VPORT_MSG_VRING_IDX_MASK 0xffu
#define VPORT_MSG_VRING_NOFD (1ull << 8) /* SET_VRING_KICK/CALL/ERR */
#define VPORT_MSG_NEED_REPLY 0x8u		 /* header flags */
#define VPORT_MSG_FDS_MAX 8		 /* librte_vhost's per message */
#define VPORT_MTU_MIN 68 /* NET_SET_MTU, as librte_vhost takes it */
#define VPORT_MTU_MAX 65535
/* librte_vhost 22.11's payload union (VhostUserMsg: its largest member is
 * the crypto session parameters); the fds follow the message */
#define VPORT_MSG_PAYLOAD_MAX 632

/* vsw offers the feature the request belongs to (no IOMMU, back-end
 * channel, config space, inflight tracking, postcopy, status). */
#define VPORT_MSG_F_OFFERED 0x01u
/* the payload opens with a vring index (struct vhost_vring_state/addr) */
#define VPORT_MSG_F_VRING 0x02u
/* the payload is a u64: vring index in bits 0-7, bit 8 "no fd" */
#define VPORT_MSG_F_VRING_FD 0x04u
/* changes what a live queue points at (guest memory, ring addresses, the
 * call eventfd), some without a state callback: withdraw queues first */
#define VPORT_MSG_F_PARK 0x08u

#define VPORT_MSG_OFFERED_VRING (VPORT_MSG_F_OFFERED | VPORT_MSG_F_VRING)
#define VPORT_MSG_OFFERED_VRING_FD (VPORT_MSG_F_OFFERED | VPORT_MSG_F_VRING_FD)

/* clang-format off */
#define VPORT_MSGS(X)                                                        \
	/* name                  nr  size min, max    fds flags */          \
	X(GET_FEATURES,           1, 0, VPORT_MSG_ANY, 0, VPORT_MSG_F_OFFERED) \
	X(SET_FEATURES,           2, 8, 8,             0,                   \
		VPORT_MSG_F_OFFERED | VPORT_MSG_F_PARK)                      \
	X(SET_OWNER,              3, 0, VPORT_MSG_ANY, 0, VPORT_MSG_F_OFFERED) \
	X(RESET_OWNER,            4, 0, VPORT_MSG_ANY, 0, VPORT_MSG_F_OFFERED) \
	X(SET_MEM_TABLE,          5, 8 + 32, 8 + 32 * 8, 8,                 \
		VPORT_MSG_F_OFFERED | VPORT_MSG_F_PARK)                      \
	X(SET_LOG_BASE,           6, 16, 16,           1,                   \
		VPORT_MSG_F_OFFERED | VPORT_MSG_F_PARK)                      \
	X(SET_LOG_FD,             7, 0, VPORT_MSG_ANY, 1, 0)                 \
	X(SET_VRING_NUM,          8, 8, 8,             0,                   \
		VPORT_MSG_OFFERED_VRING | VPORT_MSG_F_PARK)                  \
	X(SET_VRING_ADDR,         9, 40, 40,           0,                   \
		VPORT_MSG_OFFERED_VRING | VPORT_MSG_F_PARK)                  \
	X(SET_VRING_BASE,        10, 8, 8,             0,                   \
		VPORT_MSG_OFFERED_VRING | VPORT_MSG_F_PARK)                  \
	X(GET_VRING_BASE,        11, 8, 8,             0,                   \
		VPORT_MSG_OFFERED_VRING)                                     \
	X(SET_VRING_KICK,        12, 8, 8,             1,                   \
		VPORT_MSG_OFFERED_VRING_FD | VPORT_MSG_F_PARK)               \
	X(SET_VRING_CALL,        13, 8, 8,             1,                   \
		VPORT_MSG_OFFERED_VRING_FD | VPORT_MSG_F_PARK)               \
	X(SET_VRING_ERR,         14, 8, 8,             1,                   \
		VPORT_MSG_OFFERED_VRING_FD)                                  \
	X(GET_PROTOCOL_FEATURES, 15, 0, VPORT_MSG_ANY, 0, VPORT_MSG_F_OFFERED) \
	X(SET_PROTOCOL_FEATURES, 16, 8, 8,             0, VPORT_MSG_F_OFFERED) \
	X(GET_QUEUE_NUM,         17, 0, VPORT_MSG_ANY, 0, VPORT_MSG_F_OFFERED) \
	X(SET_VRING_ENABLE,      18, 8, 8,             0,                   \
		VPORT_MSG_OFFERED_VRING)                                     \
	X(SEND_RARP,             19, 8, 8,             0, VPORT_MSG_F_OFFERED) \
	X(NET_SET_MTU,           20, 8, 8,             0, VPORT_MSG_F_OFFERED) \
	X(SET_BACKEND_REQ_FD,    21, 0, VPORT_MSG_ANY, 1, 0)                 \
	X(IOTLB_MSG,             22, 0, VPORT_MSG_ANY, 0, 0)                 \
	X(SET_VRING_ENDIAN,      23, 0, VPORT_MSG_ANY, 0, 0)                 \
	X(GET_CONFIG,            24, 0, VPORT_MSG_ANY, 0, 0)                 \
	X(SET_CONFIG,            25, 0, VPORT_MSG_ANY, 0, 0)                 \
	X(CREATE_CRYPTO_SESSION, 26, 0, VPORT_MSG_ANY, 0, 0)                 \
	X(CLOSE_CRYPTO_SESSION,  27, 0, VPORT_MSG_ANY, 0, 0)                 \
	X(POSTCOPY_ADVISE,       28, 0, VPORT_MSG_ANY, 0, 0)                 \
	X(POSTCOPY_LISTEN,       29, 0, VPORT_MSG_ANY, 0, 0)                 \
	X(POSTCOPY_END,          30, 0, VPORT_MSG_ANY, 0, 0)                 \
	X(GET_INFLIGHT_FD,       31, 0, VPORT_MSG_ANY, 0, 0)                 \
	X(SET_INFLIGHT_FD,       32, 0, VPORT_MSG_ANY, 1, 0)                 \
	X(GPU_SET_SOCKET,        33, 0, VPORT_MSG_ANY, 1, 0)                 \
	X(RESET_DEVICE,          34, 0, VPORT_MSG_ANY, 0, 0)                 \
	X(VRING_KICK,            35, 0, VPORT_MSG_ANY, 0, 0)                 \
	X(GET_MAX_MEM_SLOTS,     36, 0, VPORT_MSG_ANY, 0, 0)                 \
	X(ADD_MEM_REG,           37, 0, VPORT_MSG_ANY, 1, 0)                 \
	X(REM_MEM_REG,           38, 0, VPORT_MSG_ANY, 1, 0)                 \
	X(SET_STATUS,            39, 0, VPORT_MSG_ANY, 0, 0)                 \
	X(GET_STATUS,            40, 0, VPORT_MSG_ANY, 0, 0)
/* clang-format on */

/* VPORT_MSG_SET_VRING_CALL = 13, ... */
enum vport_msg_request {
#define VPORT_MSG_ENUM(name, nr, min, max, fds, flags) VPORT_MSG_##name = nr,
	VPORT_MSGS(VPORT_MSG_ENUM)
#undef VPORT_MSG_ENUM
};

/* The wire format: a 12-byte header, then the payload (packed). */
struct vport_msg_region {
	uint64_t gpa, size, uaddr, offset;
} __attribute__((packed));

struct vport_msg {
	uint32_t request, flags, size;
	union {
		uint64_t u64;
		struct {
			uint32_t index, num;
		} state;
		struct {
			uint32_t index, flags;
			uint64_t desc, used, avail, log;
		} addr;
		struct {
			uint32_t nregions, padding;
			struct vport_msg_region r[VPORT_MSG_REGIONS_MAX];
		} mem;
		struct {
			uint64_t mmap_size, mmap_offset;
		} log;
		uint8_t raw[VPORT_MSG_PAYLOAD_MAX];
	} u;
} __attribute__((packed));

/*
 * What the message hooks get: librte_vhost 22.11's struct vhu_msg_context
 * (vhost_user.h: "can't be changed carelessly as external message
 * handlers rely on them"): the message, then the fds it carried.
 */
struct vport_msg_ctx {
	struct vport_msg msg;
	int fds[VPORT_MSG_FDS_MAX];
	int fd_num;
} __attribute__((packed));

struct vport_msg_row {
	const char *name; /* NULL: not a request vsw knows */
	uint32_t size_min, size_max;
	uint8_t fds;
	uint8_t flags;
};

/* The row of a request, or NULL when it has none. */
const struct vport_msg_row *vport_msg_row(uint32_t request);

#endif /* VSW_VPORT_MSG_TABLE_H */
