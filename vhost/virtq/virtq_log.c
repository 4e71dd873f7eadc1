/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dirty logging for live migration (VHOST_F_LOG_ALL): which guest pages
 * the queue wrote, in the front-end's log (one bit per 4 KiB page, indexed
 * by guest-physical address; contract in <vsw/virtq.h>).
 *
 * A burst notes its pages in a small per-queue cache (64-page words and
 * their bits) and ORs them into the log once at its end, after the writes
 * they cover: a bit set before its write could be cleared and its page
 * sent by the front-end before the write lands, and the write would be
 * lost. The front-end clears bits with atomic exchanges while we run, so
 * every bit goes in with an atomic OR: of the 64-bit word where the log
 * is 8-aligned, byte by byte otherwise (its offset in its file need not
 * be aligned, nor its size a multiple of 8).
 *
 * Runs on the queue's poller, only for a queue created with a log, which
 * vsw_virtq_create checked covers every guest region: every address
 * logged here was translated through those regions.
 */
#include <rte_byteorder.h>

#include "virtq_priv.h"

uint64_t
vsw_virtq_log_size_needed(const struct vsw_mem *mem)
{
	uint64_t end = 0;
	uint32_t i;

	for (i = 0; i < mem->nregions && i < VSW_MEM_REGIONS_MAX; i++) {
		const struct vsw_mem_region *r = &mem->regions[i];

		if (r->size == 0)
			continue;
		if (r->guest_phys_addr + r->size < r->guest_phys_addr)
			return UINT64_MAX; /* wraps: no log covers it */
		end = RTE_MAX(end, r->guest_phys_addr + r->size);
	}
	if (end == 0)
		return 0;
	/* byte of the last page, plus one */
	return ((end - 1) >> (VSW_VIRTQ_LOG_PAGE_SHIFT + 3)) + 1;
}

bool
vsw_virtq_logging(const struct vsw_virtq *vq)
{
	return virtq_logging(vq);
}

void
virtq_log_flush(struct vsw_virtq *vq)
{
	uint64_t pages = 0;
	uint32_t i, b;

	/* the burst's guest writes before any of its bits */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (i = 0; i < vq->log_n; i++) {
		const struct virtq_log_entry *e = &vq->log_cache[i];
		uint8_t *base = vq->log + e->word * 8;

		pages += (uint64_t)__builtin_popcountll(e->mask);
		/* the width QEMU clears with (a 64-bit exchange): locked
		 * operations of different sizes on one word are not promised
		 * to be atomic with each other (Intel SDM 9.1.2.2) */
		if (((uintptr_t)base & 7) == 0 &&
			e->word * 8 + 8 <= vq->log_size) {
			__atomic_fetch_or((uint64_t *)(void *)base,
				rte_cpu_to_le_64(e->mask), __ATOMIC_RELAXED);
			continue;
		}
		for (b = 0; b < 8; b++) {
			uint8_t bits = (uint8_t)(e->mask >> (8 * b));

			if (bits != 0)
				__atomic_fetch_or(&base[b], bits,
					__ATOMIC_RELAXED);
		}
	}
	vq->log_n = 0;
	virtq_count(vq, VSW_VIRTQ_STAT_LOG_PAGES, pages);
}

void
virtq_log_pages(struct vsw_virtq *vq, uint64_t first, uint64_t last)
{
	uint64_t page = first;

	while (page <= last) {
		uint64_t word = page >> 6;
		uint64_t end = RTE_MIN(last, word * 64 + 63);
		uint64_t mask = (UINT64_MAX >> (63 - (end & 63))) &
				(UINT64_MAX << (page & 63));
		uint32_t i;

		for (i = 0; i < vq->log_n; i++)
			if (vq->log_cache[i].word == word)
				break;
		if (i == vq->log_n) {
			if (vq->log_n == VIRTQ_LOG_CACHE)
				virtq_log_flush(vq); /* writes so far done */
			i = vq->log_n++;
			vq->log_cache[i].word = word;
			vq->log_cache[i].mask = 0;
		}
		vq->log_cache[i].mask |= mask;
		page = end + 1;
	}
}

/* A burst writes used descriptors inside the slots it advanced over,
 * which may be the whole ring (a guest re-posting while we run: capped). */
void
virtq_log_pdesc(struct vsw_virtq *vq, uint16_t first, uint32_t n)
{
	uint32_t k;

	n = RTE_MIN(n, vq->size);
	k = RTE_MIN(n, vq->size - first);
	virtq_log_write(vq, vq->desc_gpa + 16ull * first, 16ull * k);
	if (k < n)
		virtq_log_write(vq, vq->desc_gpa, 16ull * (n - k));
}

void
virtq_log_used(struct vsw_virtq *vq, uint16_t first, uint32_t n)
{
	uint32_t at = first & (vq->size - 1);
	uint64_t ring = vq->used_gpa + offsetof(struct vring_used, ring);
	uint32_t k = RTE_MIN(n, vq->size - at);

	virtq_log_write(vq, ring + 8ull * at, 8ull * k);
	if (k < n)
		virtq_log_write(vq, ring, 8ull * (n - k));
	virtq_log_write(vq, vq->used_gpa + offsetof(struct vring_used, idx),
		sizeof(uint16_t));
}
