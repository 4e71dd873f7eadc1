/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw copy engine: every guest copy goes through vsw_copy().
 *
 * PLACEHOLDER: the copy-engine work replaces this file with the real
 * dispatcher. Other modules may rely only on vsw_copy()'s contract:
 * copies n bytes from src to dst; buffers must not overlap.
 */
#ifndef VSW_COPY_H
#define VSW_COPY_H

#include <stddef.h>
#include <string.h>

static inline void
vsw_copy(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}

#endif /* VSW_COPY_H */
