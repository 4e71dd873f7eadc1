/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy engine, portable C variant: a 64-byte unit is eight 8-byte words.
 * Builds on every architecture; on non-x86 it is the only variant. Built
 * with -fno-builtin (and, on gcc, no loop-to-memcpy rewriting) so that it
 * stays our own code rather than a call to the C library's memcpy.
 * Runs on any thread; trusts its caller for non-overlapping buffers.
 */
#include "copy_priv.h"

typedef struct {
	uint64_t w[8];
} v64;

static inline __attribute__((always_inline)) v64
v64_loadu(const uint8_t *s)
{
	v64 v;

	__builtin_memcpy(&v, s, sizeof(v));
	return v;
}

static inline __attribute__((always_inline)) void
v64_storeu(uint8_t *d, v64 v)
{
	__builtin_memcpy(d, &v, sizeof(v));
}

#define v64_loada v64_loadu
#define v64_storea v64_storeu

#include "copy_body.h"

VSW_COPY_DEFINE_ISA(scalar, "scalar", 0, false);
