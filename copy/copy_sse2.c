/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy engine, SSE2 variant (x86-64 baseline): a 64-byte unit is four
 * 16-byte vectors. Runs on any thread; trusts its caller for
 * non-overlapping buffers.
 */
#include <vsw/copy_v64.h>

#include "copy_priv.h"

#include <vsw/copy_body.h>

VSW_COPY_DEFINE_ISA(sse2, "sse2", VSW_COPY_CPU_SSE2, true);
