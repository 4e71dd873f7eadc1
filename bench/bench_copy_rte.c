/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DPDK anchor: rte_memcpy exactly as our build compiles it (Debian's
 * libdpdk.pc flags, i.e. -march=corei7, so its SSE path). The only file
 * of the benchmark that sees DPDK headers.
 */
#include <rte_memcpy.h>

#include "bench_copy.h"

BENCH_COPY_RUNNER(bench_run_rte, rte_memcpy);
