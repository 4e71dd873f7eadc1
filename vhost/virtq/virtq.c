/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue life and bookkeeping: vsw_virtq_create (the one allocation; ring
 * areas translated and range-checked once, so the burst paths use plain
 * pointers), destroy, the accessors, counter names, stopping a broken
 * queue, and the rate-limited guest-error log.
 *
 * create runs on whichever thread sets the queue up (the port's vhost-user
 * callback, a test, a fuzzer), before any poller uses the queue; the rest
 * on the queue's poller (accessors: see <vsw/virtq.h>). Trusts the config
 * and the region table; trusts nothing the guest wrote.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

#include <rte_errno.h>

#include <vsw/log.h>

#include "virtq_priv.h"

RTE_LOG_REGISTER(virtq_logtype, vsw.virtq, NOTICE);

static const char *const stat_names[] = {
#define VSW_VIRTQ_STAT_NAME(e, s) [VSW_VIRTQ_STAT_##e] = s,
	VSW_VIRTQ_STATS(VSW_VIRTQ_STAT_NAME)
#undef VSW_VIRTQ_STAT_NAME
};
_Static_assert(RTE_DIM(stat_names) == VSW_VIRTQ_STAT__MAX,
	"one name per counter");

const char *
vsw_virtq_stat_name(enum vsw_virtq_stat s)
{
	if ((unsigned int)s >= VSW_VIRTQ_STAT__MAX)
		return NULL;
	return stat_names[s];
}

void
virtq_log_guest(struct vsw_virtq *vq, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsw_log_vlimited(&vq->log_next_tsc, &vq->log_suppressed, virtq_logtype,
		"vsw.virtq: ", vq->name != NULL ? vq->name : "queue", fmt, ap);
	va_end(ap);
}

void
virtq_break(struct vsw_virtq *vq, enum vsw_virtq_stat why, const char *what,
	uint32_t val)
{
	virtq_count(vq, why, 1);
	if (!vq->broken)
		virtq_count(vq, VSW_VIRTQ_STAT_ERR_RING_BROKEN, 1);
	vq->broken = true;
	virtq_log_guest(vq, "ring broken (%s %u): queue stopped", what, val);
}

/* A ring area: inside one region, aligned; returns our address or NULL. */
static void *
ring_area(const struct vsw_mem *mem, uint64_t gpa, uint64_t len,
	uint64_t align)
{
	uint64_t contig;
	void *va;

	if (gpa & (align - 1))
		return NULL;
	va = virtq_translate(mem, gpa, len, &contig);
	if (va == NULL || contig != len || ((uintptr_t)va & (align - 1)))
		return NULL;
	return va;
}

/*
 * Packed (virtio 1.1, 2.8.10): a 16-byte descriptor per entry, two 4-byte
 * event areas; positions carry their wrap counter in bit 15. We poll, so
 * the device event area asks the driver not to kick.
 */
static int
packed_setup(struct vsw_virtq *vq, const struct vsw_virtq_config *cfg)
{
	vq->pdesc = ring_area(cfg->mem, cfg->desc_gpa,
		(uint64_t)cfg->size * sizeof(struct vring_packed_desc), 16);
	vq->driver_event = ring_area(cfg->mem, cfg->avail_gpa, 4, 4);
	vq->device_event = ring_area(cfg->mem, cfg->used_gpa, 4, 4);
	if (vq->pdesc == NULL || vq->driver_event == NULL ||
		vq->device_event == NULL)
		return -EFAULT;
	vq->packed = true;
	vq->last_avail_idx = cfg->last_avail_idx & 0x7fff;
	vq->avail_wrap = cfg->last_avail_idx >> 15;
	vq->last_used_idx = cfg->last_used_idx & 0x7fff;
	vq->used_wrap = cfg->last_used_idx >> 15;
	if (vq->last_avail_idx >= cfg->size || vq->last_used_idx >= cfg->size)
		return -EINVAL;
	__atomic_store_n(&vq->device_event->flags,
		VRING_PACKED_EVENT_FLAG_DISABLE, __ATOMIC_RELAXED);
	return 0;
}

static int
split_setup(struct vsw_virtq *vq, const struct vsw_virtq_config *cfg)
{
	uint32_t size = cfg->size;
	uint64_t ev = virtq_has(vq, VSW_VIRTIO_RING_F_EVENT_IDX) ? 2 : 0;

	vq->desc = ring_area(cfg->mem, cfg->desc_gpa,
		(uint64_t)size * sizeof(struct vring_desc), 16);
	vq->avail = ring_area(cfg->mem, cfg->avail_gpa, 4 + 2ull * size + ev, 2);
	vq->used = ring_area(cfg->mem, cfg->used_gpa, 4 + 8ull * size + ev, 4);
	if (vq->desc == NULL || vq->avail == NULL || vq->used == NULL)
		return -EFAULT;
	if (ev)
		vq->used_event = &vq->avail->ring[size];
	vq->last_avail_idx = cfg->last_avail_idx;
	vq->last_used_idx = cfg->last_used_idx;
	return 0;
}

/* Rings, header length and limits from cfg; -EFAULT when a ring is off. */
static int
queue_setup(struct vsw_virtq *vq, const struct vsw_virtq_config *cfg)
{
	int rc;

	vq->name = cfg->name;
	vq->mem = cfg->mem;
	vq->features = cfg->features;
	vq->size = cfg->size;
	vq->chain_lim = (uint16_t)RTE_MIN(cfg->size, VSW_VIRTQ_CHAIN_MAX);
	if (virtq_has(vq, VSW_VIRTIO_F_RING_PACKED))
		rc = packed_setup(vq, cfg);
	else
		rc = split_setup(vq, cfg);
	if (rc != 0) {
		VIRTQ_LOG(ERR, "%s: %s", cfg->name != NULL ? cfg->name : "queue",
			rc == -EFAULT ? "ring outside guest memory" :
					"ring position beyond the ring");
		return rc;
	}
	vq->in_order = virtq_has(vq, VSW_VIRTIO_F_IN_ORDER);
	vq->hdr_len = virtq_has(vq, VSW_VIRTIO_NET_F_MRG_RXBUF) ||
			virtq_has(vq, VSW_VIRTIO_F_VERSION_1) ? 12 : 10;
	vq->max_pkt_len = cfg->max_pkt_len != 0 ? cfg->max_pkt_len :
		65535 + vq->hdr_len;
	vq->signalled_used_valid = false;
	vq->notify = cfg->notify;
	vq->notify_ctx = cfg->notify_ctx;
	vq->hdr_coalign = cfg->hdr_coalign;
	vq->deq_align = !cfg->no_deq_align;
	vq->defer_max = cfg->no_rx_defer ? 0 : VIRTQ_DEFER_MAX;
	vq->used_gpa = cfg->used_gpa;
	if (cfg->log_base != NULL) {
		/* every address we log lies in a region: in the log too */
		if (cfg->log_size < vsw_virtq_log_size_needed(cfg->mem))
			return -EINVAL;
		vq->log = cfg->log_base;
		vq->log_size = cfg->log_size;
		vq->desc_gpa = cfg->desc_gpa;
		if (vq->packed) { /* packed_setup wrote the device event */
			virtq_log_write(vq, cfg->used_gpa,
				sizeof(*vq->device_event));
			virtq_log_flush(vq);
		}
	}
	return 0;
}

struct vsw_virtq *
vsw_virtq_create(const struct vsw_virtq_config *cfg)
{
	bool packed = cfg != NULL &&
		((cfg->features >> VSW_VIRTIO_F_RING_PACKED) & 1);
	struct vsw_virtq *vq;
	size_t len, words;
	void *mem;
	int rc;

	if (cfg == NULL || cfg->size == 0 || cfg->size > VSW_VIRTQ_SIZE_MAX ||
		(!packed && (cfg->size & (cfg->size - 1))) || cfg->mem == NULL ||
		cfg->mem->nregions > VSW_MEM_REGIONS_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	/* exact length (posix_memalign, unlike aligned_alloc, needs no
	 * rounding): a shadow overrun hits ASan's redzone at once; packed
	 * queues keep their in-flight id stamps behind the shadow */
	len = sizeof(*vq) + cfg->size * sizeof(vq->shadow[0]);
	words = packed ? cfg->size : 0;
	if (posix_memalign(&mem, RTE_CACHE_LINE_SIZE,
		    len + words * sizeof(uint16_t)) != 0) {
		rte_errno = ENOMEM;
		return NULL;
	}
	vq = mem;
	memset(vq, 0, sizeof(*vq));
	if (packed) {
		vq->id_stamp = (uint16_t *)((uint8_t *)mem + len);
		memset(vq->id_stamp, 0, words * sizeof(uint16_t));
		vq->id_gen = 1;
	}
	rc = queue_setup(vq, cfg);
	if (rc != 0) {
		free(vq);
		rte_errno = -rc;
		return NULL;
	}
	return vq;
}

void
vsw_virtq_destroy(struct vsw_virtq *vq)
{
	free(vq);
}

uint16_t
vsw_virtq_last_avail_idx(const struct vsw_virtq *vq)
{
	if (vq->packed)
		return vq->last_avail_idx | (uint16_t)(vq->avail_wrap << 15);
	return vq->last_avail_idx;
}

uint16_t
vsw_virtq_last_used_idx(const struct vsw_virtq *vq)
{
	if (vq->packed)
		return vq->last_used_idx | (uint16_t)(vq->used_wrap << 15);
	return vq->last_used_idx;
}

bool
vsw_virtq_broken(const struct vsw_virtq *vq)
{
	return vq->broken;
}

uint64_t
vsw_virtq_stat(const struct vsw_virtq *vq, enum vsw_virtq_stat s)
{
	if ((unsigned int)s >= VSW_VIRTQ_STAT__MAX)
		return 0;
	return vq->stats[s];
}

void
vsw_virtq_enqueue_retry(struct vsw_virtq *vq, uint16_t n)
{
	vq->stats[VSW_VIRTQ_STAT_ENQ_DROP_RING_FULL] -= n;
}

void
vsw_virtq_stats_read(const struct vsw_virtq *vq,
	uint64_t stats[VSW_VIRTQ_STAT__MAX])
{
	uint32_t s;

	/* the poller adds with plain stores; an aligned 64-bit load is whole */
	for (s = 0; s < VSW_VIRTQ_STAT__MAX; s++)
		stats[s] = __atomic_load_n(&vq->stats[s], __ATOMIC_RELAXED);
}
