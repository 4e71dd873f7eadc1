/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue set-up and bookkeeping: vsw_virtq_init (ring areas translated and
 * range-checked once, so the burst paths use plain pointers), counter
 * names, stopping a broken queue, and the rate-limited guest-error log.
 *
 * init runs on whichever thread sets the queue up (the port's vhost-user
 * callback, a test, a fuzzer), before any poller uses the queue; the rest
 * on the queue's poller. Trusts the config and the region table; trusts
 * nothing the guest wrote.
 */
#include <errno.h>
#include <stdarg.h>

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

int
vsw_virtq_init(struct vsw_virtq *vq, const struct vsw_virtq_config *cfg)
{
	uint32_t size = cfg->size;
	uint64_t ev;

	memset(vq, 0, offsetof(struct vsw_virtq, shadow));
	vq->broken = true;
	vq->name = cfg->name;
	if (size == 0 || size > VSW_VIRTQ_SIZE_MAX || (size & (size - 1)) ||
		cfg->mem == NULL || cfg->mem->nregions > VSW_MEM_REGIONS_MAX)
		return -EINVAL;
	vq->mem = cfg->mem;
	vq->features = cfg->features;
	vq->size = size;
	ev = virtq_has(vq, VSW_VIRTIO_RING_F_EVENT_IDX) ? 2 : 0;
	vq->desc = ring_area(cfg->mem, cfg->desc_gpa,
		(uint64_t)size * sizeof(struct vring_desc), 16);
	vq->avail = ring_area(cfg->mem, cfg->avail_gpa, 4 + 2ull * size + ev, 2);
	vq->used = ring_area(cfg->mem, cfg->used_gpa, 4 + 8ull * size + ev, 4);
	if (vq->desc == NULL || vq->avail == NULL || vq->used == NULL) {
		VIRTQ_LOG(ERR, "%s: ring outside guest memory",
			cfg->name != NULL ? cfg->name : "queue");
		return -EFAULT;
	}
	if (ev)
		vq->used_event = &vq->avail->ring[size];
	vq->hdr_len = virtq_has(vq, VSW_VIRTIO_NET_F_MRG_RXBUF) ||
			virtq_has(vq, VSW_VIRTIO_F_VERSION_1) ? 12 : 10;
	vq->max_pkt_len = cfg->max_pkt_len != 0 ? cfg->max_pkt_len :
		65535 + vq->hdr_len;
	vq->last_avail_idx = cfg->last_avail_idx;
	vq->last_used_idx = cfg->last_used_idx;
	vq->signalled_used_valid = false;
	vq->notify = cfg->notify;
	vq->notify_ctx = cfg->notify_ctx;
	vq->hdr_coalign = false; /* see virtq_enqueue.c: measured, no gain */
	vq->deq_align = true;
	vq->broken = false;
	return 0;
}
