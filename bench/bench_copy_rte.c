/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DPDK anchors: rte_memcpy exactly as our build compiles it (Debian's
 * libdpdk.pc flags, i.e. -march=corei7, so its SSE path), and, compiled a
 * second time with BENCH_RTE_NATIVE, -march=native -DRTE_MEMCPY_AVX512 (its
 * AVX-512 path where the CPU has it, else AVX2's). The only file of the
 * benchmark that sees DPDK headers.
 */
#include <rte_memcpy.h>

#include "bench_copy.h"

#ifdef BENCH_RTE_NATIVE
BENCH_COPY_RUNNER(bench_run_rte_native, rte_memcpy);
#else
BENCH_COPY_RUNNER(bench_run_rte, rte_memcpy);
#endif
