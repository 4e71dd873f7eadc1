/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy engine, AVX2 variant: 64-byte moves as two 32-byte vectors. This
 * file alone is compiled with -mavx2; copy.c calls it only when CPUID (and
 * the OS's XCR0) say AVX2 runs. Any thread; trusts its caller for
 * non-overlapping buffers.
 */
#include <immintrin.h>

#include "copy_priv.h"

static inline __attribute__((always_inline)) void
move64(uint8_t *d, const uint8_t *s, bool d_al, bool s_al)
{
	__m256i a, b;

	if (s_al) {
		a = _mm256_load_si256((const __m256i *)s);
		b = _mm256_load_si256((const __m256i *)(s + 32));
	} else {
		a = _mm256_loadu_si256((const __m256i *)s);
		b = _mm256_loadu_si256((const __m256i *)(s + 32));
	}
	if (d_al) {
		_mm256_store_si256((__m256i *)d, a);
		_mm256_store_si256((__m256i *)(d + 32), b);
	} else {
		_mm256_storeu_si256((__m256i *)d, a);
		_mm256_storeu_si256((__m256i *)(d + 32), b);
	}
}

#define COPY_MOVE64U(d, s) move64((d), (s), false, false)
#define COPY_MOVE64A(d, s) move64((d), (s), true, true)
#define COPY_MOVE64S(d, s) move64((d), (s), true, false)
#include "copy_body.h"

VSW_COPY_DEFINE_ISA(avx2, "avx2", VSW_COPY_CPU_AVX2, true);
