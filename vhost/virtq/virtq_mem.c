/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Guest memory: translation of guest physical ranges over the region table
 * (the inline fast path is virtq_translate in virtq_priv.h) and a byte-wise
 * reader for small guest structures that may straddle regions.
 *
 * Any thread. Trusts the region table (validated when it arrived); trusts
 * no guest address or length: every range is checked for wrap-around and
 * for lying inside a region.
 */
#include <vsw/copy.h>

#include "virtq_priv.h"

void *
vsw_mem_translate(const struct vsw_mem *mem, uint64_t gpa, uint64_t len,
	uint64_t *contig)
{
	return virtq_translate(mem, gpa, len, contig);
}

int
virtq_mem_read(const struct vsw_mem *mem, void *dst, uint64_t gpa,
	uint32_t len)
{
	uint8_t *out = dst;
	uint64_t contig;

	while (len > 0) {
		const uint8_t *src = virtq_translate(mem, gpa, len, &contig);

		if (src == NULL)
			return -1;
		vsw_copy(out, src, contig);
		out += contig;
		gpa += contig;
		len -= (uint32_t)contig;
	}
	return 0;
}
