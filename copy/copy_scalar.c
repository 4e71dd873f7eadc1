/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy engine, portable C variant: a 64-byte unit is eight 8-byte words.
 * Builds on every architecture; on non-x86 it is the only variant. Built
 * with -fno-builtin (and, on gcc, no loop-to-memcpy rewriting) so that it
 * stays our own code rather than a call to the C library's memcpy.
 * Runs on any thread; trusts its caller for non-overlapping buffers.
 */
#include "copy_priv.h"

/* Named members, not an array: gcc kept an array on the stack. */
typedef struct {
	uint64_t a, b, c, d, e, f, g, h;
} v64;

static inline __attribute__((always_inline)) uint64_t
word(const uint8_t *s)
{
	uint64_t w;

	__builtin_memcpy(&w, s, sizeof(w));
	return w;
}

static inline __attribute__((always_inline)) void
put(uint8_t *d, uint64_t w)
{
	__builtin_memcpy(d, &w, sizeof(w));
}

static inline __attribute__((always_inline)) v64
v64_loadu(const uint8_t *s)
{
	return (v64){word(s), word(s + 8), word(s + 16), word(s + 24),
		word(s + 32), word(s + 40), word(s + 48), word(s + 56)};
}

static inline __attribute__((always_inline)) void
v64_storeu(uint8_t *d, v64 v)
{
	put(d, v.a);
	put(d + 8, v.b);
	put(d + 16, v.c);
	put(d + 24, v.d);
	put(d + 32, v.e);
	put(d + 40, v.f);
	put(d + 48, v.g);
	put(d + 56, v.h);
}

#define v64_loada v64_loadu
#define v64_storea v64_storeu

#include <vsw/copy_body.h>

VSW_COPY_DEFINE_ISA(scalar, "scalar", 0, false);
