/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy engine, SSE2 variant (x86-64 baseline): a 64-byte unit is four
 * 16-byte vectors. Runs on any thread; trusts its caller for
 * non-overlapping buffers.
 */
#include <emmintrin.h>

#include "copy_priv.h"

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

#include "copy_body.h"

VSW_COPY_DEFINE_ISA(sse2, "sse2", VSW_COPY_CPU_SSE2, true);
