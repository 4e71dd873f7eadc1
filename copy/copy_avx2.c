/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy engine, AVX2 variant: a 64-byte unit is two 32-byte vectors. This
 * file alone is compiled with -mavx2; copy.c calls it only when CPUID (and
 * the OS's XCR0) say AVX2 runs. Any thread; trusts its caller for
 * non-overlapping buffers.
 */
#include <vsw/copy_v64.h>

#include "copy_priv.h"

#include <vsw/copy_body.h>

VSW_COPY_DEFINE_ISA(avx2, "avx2", VSW_COPY_CPU_AVX2, true);
