/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy engine, AVX-512 variant: a 64-byte unit is one vector. This file
 * alone is compiled with -mavx512f; copy.c calls it only when CPUID (and
 * the OS's XCR0 ZMM state) say AVX-512F runs. Any thread; trusts its
 * caller for non-overlapping buffers.
 */
#include <vsw/copy_v64.h>

#include "copy_priv.h"

#include <vsw/copy_body.h>

VSW_COPY_DEFINE_ISA(avx512, "avx512", VSW_COPY_CPU_AVX512, true);
