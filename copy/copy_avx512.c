/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy engine, AVX-512 variant: one 64-byte vector per move. This file
 * alone is compiled with -mavx512f; copy.c calls it only when CPUID (and
 * the OS's XCR0 ZMM state) say AVX-512F runs. Any thread; trusts its
 * caller for non-overlapping buffers.
 */
#include <immintrin.h>

#include "copy_priv.h"

#define COPY_MOVE64U(d, s)                                                     \
	_mm512_storeu_si512((void *)(d), _mm512_loadu_si512((const void *)(s)))
#define COPY_MOVE64A(d, s)                                                     \
	_mm512_store_si512((void *)(d), _mm512_load_si512((const void *)(s)))
#define COPY_MOVE64S(d, s)                                                     \
	_mm512_store_si512((void *)(d), _mm512_loadu_si512((const void *)(s)))
#include "copy_body.h"

VSW_COPY_DEFINE_ISA(avx512, "avx512", VSW_COPY_CPU_AVX512, true);
