/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy engine, AVX2 variant: a 64-byte unit is two 32-byte vectors. This
 * file alone is compiled with -mavx2; copy.c calls it only when CPUID (and
 * the OS's XCR0) say AVX2 runs. Any thread; trusts its caller for
 * non-overlapping buffers.
 */
#include <immintrin.h>

#include "copy_priv.h"

typedef struct {
	__m256i lo, hi;
} v64;

static inline __attribute__((always_inline)) v64
v64_loadu(const uint8_t *s)
{
	return (v64){_mm256_loadu_si256((const __m256i *)s),
		_mm256_loadu_si256((const __m256i *)(s + 32))};
}

static inline __attribute__((always_inline)) v64
v64_loada(const uint8_t *s)
{
	return (v64){_mm256_load_si256((const __m256i *)s),
		_mm256_load_si256((const __m256i *)(s + 32))};
}

static inline __attribute__((always_inline)) void
v64_storeu(uint8_t *d, v64 v)
{
	_mm256_storeu_si256((__m256i *)d, v.lo);
	_mm256_storeu_si256((__m256i *)(d + 32), v.hi);
}

static inline __attribute__((always_inline)) void
v64_storea(uint8_t *d, v64 v)
{
	_mm256_store_si256((__m256i *)d, v.lo);
	_mm256_store_si256((__m256i *)(d + 32), v.hi);
}

#include "copy_body.h"

VSW_COPY_DEFINE_ISA(avx2, "avx2", VSW_COPY_CPU_AVX2, true);
