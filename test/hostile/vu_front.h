/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small vhost-user front-end ("the QEMU side") for tests: speaks the
 * protocol over a real unix socket, shares guest memory from a memfd, lays
 * out split rings by hand. Well-behaved by default (vu_start), and every
 * layer is reachable on its own so a test can misbehave at any point: raw
 * messages (vu_send_raw), chosen fds, hand-written descriptors.
 *
 * No DPDK: only libc and the kernel's virtio headers, so it also serves as
 * a dependency-light traffic source. Single-threaded; one struct per
 * connection. Guest-physical addresses start at VU_GPA_BASE and map the
 * memfd one to one.
 */
#ifndef VSW_TEST_VU_FRONT_H
#define VSW_TEST_VU_FRONT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/virtio_ring.h>

#define VU_MEM_SIZE (8u << 20)	/* guest memory */
#define VU_GPA_BASE 0x100000ull /* its guest-physical base */
#define VU_RING_AREA 0x10000u	/* bytes per vring's ring area */
#define VU_BUF_AREA 0x40000u	/* packet buffers start here */
#define VU_BUF_LEN 2048u	/* one buffer per descriptor slot */
#define VU_QSIZE_DEFAULT 256u
#define VU_SCRATCH 0x400000u /* free for hostile tables and frames */
#define VU_HDR_LEN 12u	     /* virtio-net header with MRG/VERSION_1 */
#define VU_MAX_FDS 16

/*
 * vhost-user requests (front-end to back-end), from the spec: the tests'
 * own copy of the wire format, independent of vhost/vport's table, shared
 * by the hostile front-end and the unit tests (test/unit/test_vport_guest.c).
 */
#define VU_REQS(X)                   \
	X(GET_FEATURES, 1)           \
	X(SET_FEATURES, 2)           \
	X(SET_OWNER, 3)              \
	X(RESET_OWNER, 4)            \
	X(SET_MEM_TABLE, 5)          \
	X(SET_LOG_BASE, 6)           \
	X(SET_LOG_FD, 7)             \
	X(SET_VRING_NUM, 8)          \
	X(SET_VRING_ADDR, 9)         \
	X(SET_VRING_BASE, 10)        \
	X(GET_VRING_BASE, 11)        \
	X(SET_VRING_KICK, 12)        \
	X(SET_VRING_CALL, 13)        \
	X(SET_VRING_ERR, 14)         \
	X(GET_PROTOCOL_FEATURES, 15) \
	X(SET_PROTOCOL_FEATURES, 16) \
	X(GET_QUEUE_NUM, 17)         \
	X(SET_VRING_ENABLE, 18)      \
	X(SEND_RARP, 19)             \
	X(NET_SET_MTU, 20)           \
	X(SET_BACKEND_REQ_FD, 21)    \
	X(IOTLB_MSG, 22)             \
	X(SET_VRING_ENDIAN, 23)      \
	X(GET_CONFIG, 24)            \
	X(SET_CONFIG, 25)            \
	X(CREATE_CRYPTO_SESSION, 26) \
	X(CLOSE_CRYPTO_SESSION, 27)  \
	X(POSTCOPY_ADVISE, 28)       \
	X(POSTCOPY_LISTEN, 29)       \
	X(POSTCOPY_END, 30)          \
	X(GET_INFLIGHT_FD, 31)       \
	X(SET_INFLIGHT_FD, 32)       \
	X(GPU_SET_SOCKET, 33)        \
	X(RESET_DEVICE, 34)          \
	X(VRING_KICK, 35)            \
	X(GET_MAX_MEM_SLOTS, 36)     \
	X(ADD_MEM_REG, 37)           \
	X(REM_MEM_REG, 38)           \
	X(SET_STATUS, 39)            \
	X(GET_STATUS, 40)

enum vu_req {
#define VU_REQ_ENUM(name, nr) VU_##name = nr,
	VU_REQS(VU_REQ_ENUM)
#undef VU_REQ_ENUM
};

/* "SET_VRING_CALL" for VU_SET_VRING_CALL; NULL for a number not above. */
const char *vu_req_name(uint32_t req);

#define VU_F_PROTOCOL_FEATURES 30
#define VU_PROTOCOL_F_MQ 0
#define VU_PROTOCOL_F_REPLY_ACK 3
#define VU_PROTOCOL_F_NET_MTU 4
#define VU_FLAG_VERSION 0x1u
#define VU_FLAG_REPLY 0x4u
#define VU_FLAG_NEED_REPLY 0x8u
#define VU_VRING_NOFD (1ull << 8)

/* Default features: what vsw offers minus MQ. */
#define VU_FEATURES_DEFAULT                                            \
	((1ull << 32) /* VERSION_1 */ | (1ull << 15) /* MRG_RXBUF */ | \
		(1ull << 28) /* INDIRECT_DESC */ |                     \
		(1ull << 29) /* EVENT_IDX */ |                         \
		(1ull << VU_F_PROTOCOL_FEATURES))

struct vu_region {
	uint64_t gpa, size, uaddr, offset;
} __attribute__((packed));

struct vu_msg {
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
			struct vu_region r[8];
		} mem;
		struct {
			uint64_t size, offset;
		} log;
		uint8_t raw[512];
	} u;
} __attribute__((packed));

#define VU_HDR_SIZE 12u

struct vu_ring {
	struct vring vr;
	uint32_t size;
	uint16_t avail_idx; /* next avail index we publish */
	uint16_t used_seen; /* used entries consumed so far */
	/* packed rings (vu_vring_setup_packed): the descriptor ring, the
	 * driver (ours) and device event areas, the driver's positions */
	bool packed;
	struct vring_packed_desc *pdesc;
	struct vring_packed_desc_event *drv_event, *dev_event;
	uint16_t next_avail, next_used;
	bool avail_wrap, used_wrap;
};

struct vu_front {
	int sock, memfd;
	uint8_t *mem;
	uint64_t features;
	struct vu_ring q[2]; /* 0: the guest's RX, 1: its TX */
	int kick[2], call[2];
	/* counters of the well-behaved data path */
	uint64_t tx_frames, rx_frames, rx_bad;
};

/* Memory, eventfds, socket connected (retried up to ~2 s). 0 or -errno. */
int vu_open(struct vu_front *f, const char *path);
/* The same with guest memory in memfd (at least VU_MEM_SIZE bytes; the
 * front-end owns and closes it), -1: a fresh memfd. */
int vu_open_fd(struct vu_front *f, const char *path, int memfd);
void vu_close(struct vu_front *f);

/* One message: header + payload of `size` bytes, fds as SCM_RIGHTS. */
int vu_send(struct vu_front *f, uint32_t req, const void *payload,
	uint32_t size, const int *fds, int nfds);
/* Arbitrary bytes (truncated or oversized messages). */
int vu_send_raw(struct vu_front *f, const void *buf, size_t len, const int *fds,
	int nfds);
int vu_send_u64(struct vu_front *f, uint32_t req, uint64_t v, int fd);
int vu_send_state(struct vu_front *f, uint32_t req, uint32_t idx, uint32_t num);
/* Reads one reply (timeout in ms). 0, -ETIMEDOUT or -EPIPE (closed). */
int vu_recv(struct vu_front *f, struct vu_msg *m, int timeout_ms);
/* True when the back-end closed the connection within timeout_ms. */
bool vu_peer_closed(struct vu_front *f, int timeout_ms);

/* Features, protocol features, owner. 0 or -errno. */
int vu_negotiate(struct vu_front *f, uint64_t features);
/* One region: the whole memfd at VU_GPA_BASE. */
int vu_mem_table(struct vu_front *f);
/* Lays out vring q afresh (size entries, zeroed, indices 0) and sends
 * NUM/BASE/ADDR/KICK/CALL/ENABLE. */
int vu_vring_setup(struct vu_front *f, uint32_t q, uint32_t size);
/* The same messages for vring q as it stands in guest memory, with base as
 * the back-end's next avail index: a front-end restarting a ring that
 * GET_VRING_BASE stopped (what GET_VRING_BASE answered, usually). */
int vu_vring_resume(struct vu_front *f, uint32_t q, uint16_t base);
/*
 * Packed ring q (VIRTIO_F_RING_PACKED negotiated): size slots in the ring
 * area, zeroed, the event areas behind them, wrap counters 1; the same
 * messages as vu_vring_setup, SET_VRING_BASE 0x8000 (slot 0, wrap 1).
 */
int vu_vring_setup_packed(struct vu_front *f, uint32_t q, uint32_t size);
/* Packed: writes one descriptor, flags last (release). */
void vu_pdesc_set(struct vu_front *f, uint32_t q, uint16_t slot,
	uint64_t addr, uint32_t len, uint16_t id, uint16_t flags);
/* Packed: AVAIL/USED bits that make a slot available in lap `wrap`. */
uint16_t vu_pavail(bool wrap);
/* Packed: the next used descriptor (1: id, len set, position moved on by
 * nslots), 0 when there is none yet. */
int vu_pused_pop(struct vu_front *f, uint32_t q, uint16_t nslots,
	uint16_t *id, uint32_t *len);
/* Whole well-behaved start: open, negotiate, mem table, both vrings. */
int vu_start(struct vu_front *f, const char *path, uint64_t features,
	uint32_t qsize);
int vu_start_fd(struct vu_front *f, const char *path, uint64_t features,
	uint32_t qsize, int memfd);

/* Guest memory helpers. */
uint64_t vu_gpa(const struct vu_front *f, const void *p);
void *vu_ptr(struct vu_front *f, uint64_t off); /* memfd offset -> ours */
uint8_t *vu_buf(struct vu_front *f, uint32_t q, uint32_t slot);
/* Publishes one more avail entry (head) on q. */
void vu_avail_push(struct vu_front *f, uint32_t q, uint16_t head);
uint16_t vu_used_idx(const struct vu_front *f, uint32_t q);
/* Waits up to timeout_ms until q's used idx reaches want. */
bool vu_wait_used(
	const struct vu_front *f, uint32_t q, uint16_t want, int timeout_ms);

/* Well-behaved data path. TX: one frame per descriptor, header in front;
 * -EAGAIN when the ring is full. RX: keep every slot posted; poll hands
 * each frame (header stripped) to cb and returns how many. */
int vu_tx(struct vu_front *f, const void *frame, uint32_t len);
uint32_t vu_tx_reclaim(struct vu_front *f);
uint32_t vu_tx_inflight(const struct vu_front *f);
void vu_rx_refill(struct vu_front *f);
/* Posts up to n more RX buffers (fewer when the ring is full); how many. */
uint32_t vu_rx_post(struct vu_front *f, uint32_t n);
typedef void (*vu_rx_fn)(void *ctx, const uint8_t *frame, uint32_t len);
uint32_t vu_rx_poll(struct vu_front *f, vu_rx_fn cb, void *ctx);

#endif /* VSW_TEST_VU_FRONT_H */
