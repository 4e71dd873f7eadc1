/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw's own checks on vhost-user messages, run from the pre-message hook
 * before librte_vhost acts on them, and on the memory table it mapped;
 * each request's row in vport_msg_table.h says what it must carry.
 * librte_vhost 22.11 accepts, among others (found by test/hostile): a
 * payload shorter than the request's (the rest is stale stack bytes),
 * vring indices up to 255 whatever the queue count, a memory table with
 * no region, overlapping regions, a region larger than its file (touching
 * it past the end is SIGBUS) or whose guest range wraps, ring addresses in
 * no region; and it leaks the region fd when mmap_offset + size wraps.
 *
 * Threads: librte_vhost's event thread, port->lock held (the MTU limit's
 * setter and getter: the control thread, taking it). Trusts nothing
 * in the message; the message buffer itself is librte_vhost's (header +
 * payload as read, never longer than its payload union).
 */
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <rte_vhost.h>

#include <vsw/log.h>

#include "vport_msg_table.h"
#include "vport_priv.h"

static const struct vport_msg_row rows[] = {
#define VPORT_MSG_ROW(n, nr, min, max, nfds, fl) \
	[nr] = {.name = #n,                      \
		.size_min = (min),               \
		.size_max = (max),               \
		.fds = (nfds),                   \
		.flags = (fl)},
	VPORT_MSGS(VPORT_MSG_ROW)
#undef VPORT_MSG_ROW
};
_Static_assert(VSW_MEM_REGIONS_MAX == VPORT_MSG_REGIONS_MAX,
	"a memory table vsw accepts fits struct vsw_mem");
_Static_assert(sizeof(((struct vport_msg *)0)->u.mem) == 8 + 32 * 8,
	"SET_MEM_TABLE's row: 8 + 32 bytes per region, 1..8 regions");
_Static_assert(sizeof(struct vport_msg) == 644 &&
		       offsetof(struct vport_msg_ctx, fds) == 644 &&
		       offsetof(struct vport_msg_ctx, fd_num) == 676,
	"struct vhu_msg_context of librte_vhost 22.11");

const struct vport_msg_row *
vport_msg_row(uint32_t request)
{
	if (request >= RTE_DIM(rows) || rows[request].name == NULL)
		return NULL;
	return &rows[request];
}

const char *
vport_mem_check(const struct vsw_mem *mem)
{
	uint32_t i, j;

	if (mem->nregions == 0 || mem->nregions > VSW_MEM_REGIONS_MAX)
		return "memory table: region count not 1..8";
	for (i = 0; i < mem->nregions; i++) {
		const struct vsw_mem_region *r = &mem->regions[i];

		if (r->size == 0 || r->guest_phys_addr + r->size < r->size ||
			r->host_user_addr + r->size < r->size)
			return "memory table: empty region or range wraps";
		for (j = 0; j < i; j++) {
			const struct vsw_mem_region *o = &mem->regions[j];

			if (r->guest_phys_addr < o->guest_phys_addr + o->size &&
				o->guest_phys_addr <
					r->guest_phys_addr + r->size)
				return "memory table: regions overlap";
		}
	}
	return NULL;
}

/* The table as sent: front-end addresses stand in for ours (same checks). */
static const char *
mem_table_check(const struct vport_msg *m)
{
	uint32_t n = m->u.mem.nregions, i;
	struct vsw_mem mem;

	if (n == 0 || n > VSW_MEM_REGIONS_MAX)
		return "memory table: region count not 1..8";
	if (m->size != 8 + n * sizeof(struct vport_msg_region))
		return "memory table: payload size does not match the count";
	mem.nregions = n;
	for (i = 0; i < n; i++) {
		const struct vport_msg_region *r = &m->u.mem.r[i];

		if (r->offset + r->size < r->offset)
			return "memory table: empty region or range wraps";
		mem.regions[i].guest_phys_addr = r->gpa;
		mem.regions[i].size = r->size;
		mem.regions[i].host_user_addr = r->uaddr;
	}
	return vport_mem_check(&mem);
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
vring_addr_check(struct vsw_vport *port, int vid, const struct vport_msg *m)
{
	struct rte_vhost_memory *mem = NULL;
	uint64_t n = port->queues[m->u.addr.index].num;
	uint64_t avail_len, used_len, feat = 0;
	const char *why = NULL;

	if (n == 0)
		n = 1; /* size not known yet: check the start */
	avail_len = 4 + 2 * n;
	used_len = 4 + 8 * n;
	/* before SET_MEM_TABLE there is nothing to check against */
	if (!port->mem_seen || rte_vhost_get_mem_table(vid, &mem) != 0 ||
		mem == NULL)
		return NULL;
	/* packed: the avail/used addresses are the 4-byte event areas */
	if (rte_vhost_get_negotiated_features(vid, &feat) == 0 &&
		(feat & (1ULL << VSW_VIRTIO_F_RING_PACKED)))
		avail_len = used_len = 4;
	if (!qva_inside(mem, m->u.addr.desc, 16 * n) ||
		!qva_inside(mem, m->u.addr.avail, avail_len) ||
		!qva_inside(mem, m->u.addr.used, used_len))
		why = "vring address outside guest memory";
	free(mem);
	return why;
}

/*
 * NET_SET_MTU: the MTU QEMU put in the guest's config space (host_mtu=).
 * librte_vhost takes 68..65535 of the u64; a port in an L2 domain takes
 * no more than its limit, because every frame above underlay MTU - 50
 * would be dropped as vxlan_too_big: refused, QEMU then says "MTU not
 * supported by the backend" and does not start the device.
 */
static const char *
mtu_check(struct vsw_vport *port, const struct vport_msg *m)
{
	const char *why = NULL;

	if (m->u.u64 < VPORT_MTU_MIN || m->u.u64 > VPORT_MTU_MAX)
		why = "MTU not in 68..65535";
	else if (port->mtu_limit != 0 && m->u.u64 > port->mtu_limit)
		why = "MTU above the port's limit (L2 domain: underlay "
		      "MTU - 50)";
	if (why != NULL) {
		port->mtu_refused++;
		return why;
	}
	port->mtu = (uint16_t)m->u.u64;
	return NULL;
}

/* Index of a per-vring message, or -1 when the request has none. */
static int64_t
vring_index(const struct vport_msg_row *row, const struct vport_msg *m)
{
	if (row->flags & VPORT_MSG_F_VRING)
		return m->u.state.index; /* addr.index: same offset */
	if (row->flags & VPORT_MSG_F_VRING_FD)
		return m->u.u64 & VPORT_MSG_VRING_IDX_MASK;
	return -1;
}

const char *
vport_msg_check(struct vsw_vport *port, void *msg)
{
	struct vport_msg *m = msg;
	const struct vport_msg_row *row = vport_msg_row(m->request);
	int64_t idx;

	if (row == NULL)
		return "request unknown to vsw";
	if (row->size_max != VPORT_MSG_ANY &&
		(m->size < row->size_min || m->size > row->size_max))
		return "payload size wrong for the request";
	if (!(row->flags & VPORT_MSG_F_OFFERED))
		return "request of a feature vsw does not offer";
	if (m->request == VPORT_MSG_SET_MEM_TABLE)
		return mem_table_check(m);
	if (m->request == VPORT_MSG_SET_LOG_BASE)
		return vport_log_base_check(port, m);
	if (m->request == VPORT_MSG_NET_SET_MTU)
		return mtu_check(port, m);
	idx = vring_index(row, m);
	if (idx < 0)
		return NULL;
	if (idx >= port->nr_queues)
		return "vring index beyond the queue pairs offered";
	if (m->request == VPORT_MSG_SET_VRING_NUM) {
		uint32_t n = m->u.state.num;
		uint32_t cap = port->cfg.max_ring_size != 0 ?
			port->cfg.max_ring_size : VSW_VPORT_RING_SIZE_DEFAULT;

		if (n == 0 || n > VSW_VIRTQ_SIZE_MAX || (n & (n - 1)))
			return "vring size not a power of two in 1..32768";
		/* issue 10: a guest's work per burst grows with its ring */
		if (n > cap)
			return "vring size above the port's max-ring-size";
		port->queues[idx].num = n;
	}
	if (m->request == VPORT_MSG_SET_VRING_ADDR)
		return vring_addr_check(port, port->vid, m);
	return NULL;
}

/*
 * At device start, the table librte_vhost mapped: each region's fd again
 * (the one sent was checked in the hook, vport_fds_check; this is what is
 * published).
 */
const char *
vport_mem_files_check(struct vsw_vport *port)
{
	struct rte_vhost_memory *mem = NULL;
	const char *why = NULL;
	uint32_t i;

	if (rte_vhost_get_mem_table(port->vid, &mem) != 0 || mem == NULL)
		return "memory table: not available";
	for (i = 0; i < mem->nregions && why == NULL; i++) {
		const struct rte_vhost_mem_region *r = &mem->regions[i];
		uint64_t off =
			r->host_user_addr - (uint64_t)(uintptr_t)r->mmap_addr;

		why = vport_region_fd_check(r->fd, off, r->size);
	}
	free(mem);
	return why;
}

/*
 * Refuse a message (true) that fails vport_msg_check or vport_fds_check
 * or comes while the front-end leaves its replies unread: counted, logged
 * and its fds closed, since librte_vhost does not close them on the
 * refusal path.
 */
bool
vport_msg_refuse(struct vsw_vport *port, struct vport_msg_ctx *ctx)
{
	struct vport_msg *m = &ctx->msg;
	const char *why = vport_msg_check(port, m);

	if (vport_conn_backlogged(port->conn_fd)) {
		/* a reply would not fit (dropped with a log line each);
		 * no nack either: the connection goes */
		why = "front-end does not read its replies";
		m->flags &= ~VPORT_MSG_NEED_REPLY;
	}
	if (why == NULL) {
		why = vport_fds_check(ctx);
		port->fd_rejected += why != NULL;
	}
	if (why == NULL)
		return false;
	port->msg_rejected++;
	vport_log_refused(port, m->request, why);
	vport_fds_close(ctx);
	return true;
}

void
vsw_vport_mtu_limit_set(struct vsw_vport *port, uint16_t limit)
{
	pthread_mutex_lock(&port->lock);
	if (limit != 0 && port->mtu > limit && limit != port->mtu_limit) {
		/* the guest's config space cannot change under it */
		port->mtu_over_limit++;
		VPORT_LOG(WARNING, port,
			"guest MTU %u is above the new limit %u: its frames "
			"above it will be dropped (vxlan_too_big); restart it "
			"with host_mtu=%u",
			port->mtu, limit, limit);
	}
	port->mtu_limit = limit;
	pthread_mutex_unlock(&port->lock);
}

void
vsw_vport_mtu_get(struct vsw_vport *port, struct vsw_vport_mtu *out)
{
	pthread_mutex_lock(&port->lock);
	out->mtu = port->mtu;
	out->limit = port->mtu_limit;
	out->refused = port->mtu_refused;
	out->over_limit = port->mtu_over_limit;
	pthread_mutex_unlock(&port->lock);
}

void
vport_log_guest(struct vsw_vport *port, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsw_log_vlimited(&port->log_next_tsc, &port->log_suppressed,
		vport_logtype, "vport ", port->name, fmt, ap);
	va_end(ap);
}

void
vport_log_refused(struct vsw_vport *port, uint32_t request, const char *why)
{
	const struct vport_msg_row *row = vport_msg_row(request);

	if (row != NULL)
		vport_log_guest(port, "%s refused: %s", row->name, why);
	else
		vport_log_guest(port, "request %u refused: %s", request, why);
}
