/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The 64-byte unit of the copy body (copy_body.h) for the ISA this file is
 * compiled for, picked from the compiler's own macros: AVX-512F (one
 * vector), AVX2 (two), SSE2 (four, the x86-64 baseline). Included by the
 * per-ISA copy files and by code compiled once per ISA with VSW_COPY_INLINE
 * (the data path, benchmarks), so both run the same instructions.
 * Defines VSW_COPY_V64_OPS, the entry table of that ISA in the copy engine.
 */
#ifndef VSW_COPY_V64_H
#define VSW_COPY_V64_H

#include <stdint.h>

#include <immintrin.h>

#if defined(__AVX512F__)

#define VSW_COPY_V64_OPS vsw_copy_ops_avx512
/* Eight units per loop iteration (of 32 registers), as rte_memcpy's
 * AVX-512 path: fewer loop iterations per byte. */
#define V64_BLOCK 512

typedef __m512i v64;

static inline __attribute__((always_inline)) v64
v64_loadu(const uint8_t *s)
{
	return _mm512_loadu_si512((const void *)s);
}

static inline __attribute__((always_inline)) v64
v64_loada(const uint8_t *s)
{
	return _mm512_load_si512((const void *)s);
}

static inline __attribute__((always_inline)) void
v64_storeu(uint8_t *d, v64 v)
{
	_mm512_storeu_si512((void *)d, v);
}

static inline __attribute__((always_inline)) void
v64_storea(uint8_t *d, v64 v)
{
	_mm512_store_si512((void *)d, v);
}

#elif defined(__AVX2__)

#define VSW_COPY_V64_OPS vsw_copy_ops_avx2

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

#elif defined(__SSE2__)

#define VSW_COPY_V64_OPS vsw_copy_ops_sse2

/* Named members, not an array: gcc kept an array of vectors on the stack. */
typedef struct {
	__m128i a, b, c, d;
} v64;

static inline __attribute__((always_inline)) v64
v64_loadu(const uint8_t *s)
{
	const __m128i *p = (const __m128i *)s;

	return (v64){_mm_loadu_si128(p), _mm_loadu_si128(p + 1),
		_mm_loadu_si128(p + 2), _mm_loadu_si128(p + 3)};
}

static inline __attribute__((always_inline)) v64
v64_loada(const uint8_t *s)
{
	const __m128i *p = (const __m128i *)s;

	return (v64){_mm_load_si128(p), _mm_load_si128(p + 1),
		_mm_load_si128(p + 2), _mm_load_si128(p + 3)};
}

static inline __attribute__((always_inline)) void
v64_storeu(uint8_t *d, v64 v)
{
	__m128i *p = (__m128i *)d;

	_mm_storeu_si128(p, v.a);
	_mm_storeu_si128(p + 1, v.b);
	_mm_storeu_si128(p + 2, v.c);
	_mm_storeu_si128(p + 3, v.d);
}

static inline __attribute__((always_inline)) void
v64_storea(uint8_t *d, v64 v)
{
	__m128i *p = (__m128i *)d;

	_mm_store_si128(p, v.a);
	_mm_store_si128(p + 1, v.b);
	_mm_store_si128(p + 2, v.c);
	_mm_store_si128(p + 3, v.d);
}

#else
#error "copy_v64.h needs x86-64 (SSE2 at least)"
#endif

#endif /* VSW_COPY_V64_H */
