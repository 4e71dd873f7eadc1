/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw_copy with the inline small-path counters compiled out: measures what
 * the always-on per-thread counters cost (column "vsw-nostats").
 */
#define VSW_COPY_NO_STATS
#include <vsw/copy.h>

#include "bench_copy.h"

BENCH_COPY_RUNNER(bench_run_nostats, vsw_copy)
