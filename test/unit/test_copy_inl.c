/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw_copy() as the per-ISA data path compiles it, for test_copy_edges:
 * this file is built once per ISA (meson: TCE_ISA and that ISA's -m flag)
 * with VSW_COPY_INLINE, so the function below runs that ISA's copy body
 * inlined, small path included, with no table load. Call it only while
 * the engine's active implementation is that ISA (see copy.h).
 */
#include <vsw/copy.h>

#define TCE_CAT_(a, b) a##_##b
#define TCE_CAT(a, b) TCE_CAT_(a, b)

void TCE_CAT(tce_copy_inl, TCE_ISA)(void *dst, const void *src, size_t n);

void
TCE_CAT(tce_copy_inl, TCE_ISA)(void *dst, const void *src, size_t n)
{
	vsw_copy(dst, src, n);
}
