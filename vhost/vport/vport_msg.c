/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw's own checks on vhost-user messages, run from the pre-message hook
 * before librte_vhost acts on them, and on the memory table it mapped.
 * librte_vhost 22.11 accepts, among others (found by test/hostile): a
 * payload shorter than the request's (the rest is stale stack bytes),
 * vring indices up to 255 whatever the queue count, a memory table with
 * no region, overlapping regions, a region larger than its file (touching
 * it past the end is SIGBUS) or whose guest range wraps, ring addresses in
 * no region; and it leaks the region fd when mmap_offset + size wraps.
 *
 * Threads: librte_vhost's event thread, port->lock held. Trusts nothing
 * in the message; the message buffer itself is librte_vhost's (header +
 * payload as read, never longer than its payload union).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_cycles.h>
#include <rte_vhost.h>

#include "vport_priv.h"

enum {
	VHU_SET_FEATURES = 2,
	VHU_SET_MEM_TABLE = 5,
	VHU_SET_LOG_BASE = 6,
	VHU_SET_LOG_FD = 7,
	VHU_SET_VRING_NUM = 8,
	VHU_SET_VRING_ADDR = 9,
	VHU_SET_VRING_BASE = 10,
	VHU_GET_VRING_BASE = 11,
	VHU_SET_VRING_KICK = 12,
	VHU_SET_VRING_CALL = 13,
	VHU_SET_VRING_ERR = 14,
	VHU_SET_PROTOCOL_FEATURES = 16,
	VHU_SET_VRING_ENABLE = 18,
};

#define VHU_HDR 12u
#define VHU_REGION 32u
#define VHU_IDX_MASK 0xffu

struct vhu_region {
	uint64_t gpa, size, uaddr, offset;
} __attribute__((packed));

struct vhu_msg {
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
			struct vhu_region r[VSW_MEM_REGIONS_MAX];
		} mem;
	} u;
} __attribute__((packed));

static const char *
mem_table_check(const struct vhu_msg *m)
{
	uint32_t n = m->u.mem.nregions, i, j;

	if (n == 0 || n > VSW_MEM_REGIONS_MAX)
		return "memory table: region count not 1..8";
	if (m->size != 8 + n * VHU_REGION)
		return "memory table: payload size does not match the count";
	for (i = 0; i < n; i++) {
		const struct vhu_region *r = &m->u.mem.r[i];

		if (r->size == 0 || r->gpa + r->size < r->gpa ||
			r->uaddr + r->size < r->uaddr ||
			r->offset + r->size < r->offset)
			return "memory table: empty region or range wraps";
		for (j = 0; j < i; j++) {
			const struct vhu_region *o = &m->u.mem.r[j];

			if (r->gpa < o->gpa + o->size &&
				o->gpa < r->gpa + r->size)
				return "memory table: regions overlap";
		}
	}
	return NULL;
}

/* [uaddr, uaddr + len) inside one region's front-end address range. */
static bool
qva_inside(const struct rte_vhost_memory *mem, uint64_t uaddr, uint64_t len)
{
	uint32_t i;

	for (i = 0; i < mem->nregions; i++) {
		const struct rte_vhost_mem_region *r = &mem->regions[i];

		if (uaddr >= r->guest_user_addr &&
			uaddr - r->guest_user_addr < r->size &&
			len <= r->size - (uaddr - r->guest_user_addr))
			return true;
	}
	return false;
}

static const char *
vring_addr_check(struct vsw_vport *port, int vid, const struct vhu_msg *m)
{
	struct rte_vhost_memory *mem = NULL;
	uint64_t n = port->queues[m->u.addr.index].num;
	const char *why = NULL;

	if (n == 0)
		n = 1; /* size not known yet: check the start */
	/* before SET_MEM_TABLE there is nothing to check against */
	if (!port->mem_seen || rte_vhost_get_mem_table(vid, &mem) != 0 ||
		mem == NULL)
		return NULL;
	if (!qva_inside(mem, m->u.addr.desc, 16 * n) ||
		!qva_inside(mem, m->u.addr.avail, 4 + 2 * n) ||
		!qva_inside(mem, m->u.addr.used, 4 + 8 * n))
		why = "vring address outside guest memory";
	free(mem);
	return why;
}

/* Index of a per-vring message, or -1 when the request has none. */
static int64_t
vring_index(const struct vhu_msg *m)
{
	switch (m->request) {
	case VHU_SET_VRING_NUM:
	case VHU_SET_VRING_BASE:
	case VHU_GET_VRING_BASE:
	case VHU_SET_VRING_ENABLE:
	case VHU_SET_VRING_ADDR:
		return m->u.state.index; /* addr.index: same offset */
	case VHU_SET_VRING_KICK:
	case VHU_SET_VRING_CALL:
	case VHU_SET_VRING_ERR:
		return m->u.u64 & VHU_IDX_MASK;
	default:
		return -1;
	}
}

/*
 * Requests of the features vsw offers (no dirty log, no IOMMU, no
 * back-end channel, no config space, no inflight tracking, no postcopy,
 * no status): the others reach code paths vsw never asked for.
 */
static bool
request_offered(uint32_t request)
{
	return (request >= 1 && request <= 5) ||
	       (request >= VHU_SET_VRING_NUM &&
		       request <= VHU_SET_VRING_ENABLE);
}

/* The payload size a request must carry; 0: not checked here. */
static uint32_t
payload_size(uint32_t request)
{
	switch (request) {
	case VHU_SET_FEATURES:
	case VHU_SET_PROTOCOL_FEATURES:
	case VHU_SET_VRING_KICK:
	case VHU_SET_VRING_CALL:
	case VHU_SET_VRING_ERR:
	case VHU_SET_VRING_NUM:
	case VHU_SET_VRING_BASE:
	case VHU_GET_VRING_BASE:
	case VHU_SET_VRING_ENABLE:
		return 8;
	case VHU_SET_VRING_ADDR:
		return 40;
	default:
		return 0;
	}
}

const char *
vport_msg_check(struct vsw_vport *port, void *msg)
{
	struct vhu_msg *m = msg;
	uint32_t want = payload_size(m->request);
	int64_t idx;

	if (want != 0 && m->size != want)
		return "payload size wrong for the request";
	if (m->request == VHU_SET_LOG_BASE || m->request == VHU_SET_LOG_FD)
		return "dirty logging was not offered";
	if (!request_offered(m->request))
		return "request of a feature vsw does not offer";
	if (m->request == VHU_SET_MEM_TABLE)
		return m->size < 8 ? "memory table: short payload"
				   : mem_table_check(m);
	idx = vring_index(m);
	if (idx < 0)
		return NULL;
	if (idx >= port->nr_queues)
		return "vring index beyond the queue pairs offered";
	if (m->request == VHU_SET_VRING_NUM) {
		uint32_t n = m->u.state.num;

		if (n == 0 || n > VSW_VIRTQ_SIZE_MAX || (n & (n - 1)))
			return "vring size not a power of two in 1..32768";
		port->queues[idx].num = n;
	}
	if (m->request == VHU_SET_VRING_ADDR)
		return vring_addr_check(port, port->vid, m);
	return NULL;
}

/*
 * Make librte_vhost refuse a message vsw refused, in its own early check,
 * which closes the fds the message carried (returning ERR from the hook
 * would leave them open: the hook cannot reach them).
 */
void
vport_msg_poison(void *msg)
{
	struct vhu_msg *m = msg;

	if (m->request == VHU_SET_MEM_TABLE && m->size >= 8)
		m->u.mem.nregions = UINT32_MAX; /* "too many regions" */
	else if (m->request == VHU_SET_VRING_NUM && m->size >= 8)
		m->u.state.num = UINT32_MAX; /* "invalid size" */
}

/* After SET_MEM_TABLE: each region must lie inside its file. */
const char *
vport_mem_files_check(struct vsw_vport *port)
{
	struct rte_vhost_memory *mem = NULL;
	const char *why = NULL;
	uint32_t i;

	if (rte_vhost_get_mem_table(port->vid, &mem) != 0 || mem == NULL)
		return NULL;
	for (i = 0; i < mem->nregions && why == NULL; i++) {
		const struct rte_vhost_mem_region *r = &mem->regions[i];
		uint64_t off =
			r->host_user_addr - (uint64_t)(uintptr_t)r->mmap_addr;
		struct stat st;

		if (fstat(r->fd, &st) != 0)
			why = "memory table: region fd not stat-able";
		else if (S_ISREG(st.st_mode) &&
			 (uint64_t)st.st_size < off + r->size)
			why = "memory table: region larger than its file";
	}
	free(mem);
	return why;
}

void
vport_log_guest(struct vsw_vport *port, const char *what, const char *why,
	uint32_t request)
{
	uint64_t now = rte_get_tsc_cycles();

	if (now < port->log_next_tsc) {
		port->log_suppressed++;
		return;
	}
	port->log_next_tsc = now + rte_get_tsc_hz();
	VPORT_LOG(WARNING, port, "%s %u refused: %s (%u similar suppressed)",
		what, request, why, port->log_suppressed);
	port->log_suppressed = 0;
}
