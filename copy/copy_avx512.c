/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy engine, AVX-512 variant: a 64-byte unit is one vector. This file
 * alone is compiled with -mavx512f; copy.c calls it only when CPUID (and
 * the OS's XCR0 ZMM state) say AVX-512F runs. Any thread; trusts its
 * caller for non-overlapping buffers.
 */
#include <immintrin.h>

#include "copy_priv.h"

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

#include "copy_body.h"

VSW_COPY_DEFINE_ISA(avx512, "avx512", VSW_COPY_CPU_AVX512, true);
