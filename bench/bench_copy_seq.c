/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The anchor: a plain inline sequence of 64-byte AVX-512 moves
 * (unaligned loads and stores, the last move overlapping the tail), no
 * alignment work, no large path. Compiled with -mavx512f; registered only
 * when the CPU runs it. Below 64 bytes, vsw's own small copy.
 */
#include <immintrin.h>

#include <vsw/copy.h>

#include "bench_copy.h"

static inline __attribute__((always_inline)) void
seq64(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t o;

	if (n < 64) {
		vsw_copy_small(d, s, n);
		return;
	}
	for (o = 0; o + 64 < n; o += 64)
		_mm512_storeu_si512((void *)(d + o),
			_mm512_loadu_si512((const void *)(s + o)));
	_mm512_storeu_si512((void *)(d + n - 64),
		_mm512_loadu_si512((const void *)(s + n - 64)));
}

BENCH_COPY_RUNNER(bench_run_seq64, seq64);
