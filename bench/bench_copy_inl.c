/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw_copy() as the per-ISA data path sees it: this file is compiled once
 * per ISA (meson: BENCH_ISA and the -m flag) with VSW_COPY_INLINE, so the
 * ISA's copy body is inlined into the timing loop (when the engine's
 * active implementation is that ISA; the runner selects it).
 */
#include <vsw/copy.h>

#include "bench_copy.h"

#define INL_CAT_(a, b) a##_##b
#define INL_CAT(a, b) INL_CAT_(a, b)

BENCH_COPY_RUNNER(INL_CAT(bench_run_inl, BENCH_ISA), vsw_copy);
