/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy engine, "libc" entry: the C library's memcpy behind vsw_copy()'s
 * dispatcher. Not a contender for "auto": it is there so the data path can
 * be measured with the same calls against the plain memcpy (copy-impl-set
 * libc), and so the validator compares against it too. Any thread.
 */
#include <string.h>

#include "copy_priv.h"

static void
copy_libc_raw(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}

static void
copy_libc_aligned(void *dst, const void *src, size_t n)
{
	vsw_copy_count_(VSW_COPY_PATH_ALIGNED, n);
	memcpy(dst, src, n);
}

static void
copy_libc_generic(void *dst, const void *src, size_t n)
{
	vsw_copy_count_(VSW_COPY_PATH_GENERIC, n);
	memcpy(dst, src, n);
}

static const struct vsw_copy_ops libc_ops = {
	copy_libc_aligned, copy_libc_generic};

const struct vsw_copy_isa copy_isa_libc = {
	.name = "libc",
	.needs = 0,
	.large = false,
	.ops = &libc_ops,
	.raw = {copy_libc_raw, copy_libc_raw},
};
