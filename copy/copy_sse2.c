/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy engine, SSE2 variant (x86-64 baseline): a 64-byte unit is four
 * 16-byte vectors. Runs on any thread; trusts its caller for
 * non-overlapping buffers.
 */
#include <emmintrin.h>

#include "copy_priv.h"

typedef struct {
	__m128i x[4];
} v64;

static inline __attribute__((always_inline)) v64
v64_loadu(const uint8_t *s)
{
	v64 v;
	int i;

	for (i = 0; i < 4; i++)
		v.x[i] = _mm_loadu_si128((const __m128i *)(s + 16 * i));
	return v;
}

static inline __attribute__((always_inline)) v64
v64_loada(const uint8_t *s)
{
	v64 v;
	int i;

	for (i = 0; i < 4; i++)
		v.x[i] = _mm_load_si128((const __m128i *)(s + 16 * i));
	return v;
}

static inline __attribute__((always_inline)) void
v64_storeu(uint8_t *d, v64 v)
{
	int i;

	for (i = 0; i < 4; i++)
		_mm_storeu_si128((__m128i *)(d + 16 * i), v.x[i]);
}

static inline __attribute__((always_inline)) void
v64_storea(uint8_t *d, v64 v)
{
	int i;

	for (i = 0; i < 4; i++)
		_mm_store_si128((__m128i *)(d + 16 * i), v.x[i]);
}

#include "copy_body.h"

VSW_COPY_DEFINE_ISA(sse2, "sse2", VSW_COPY_CPU_SSE2, true);
