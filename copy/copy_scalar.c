/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy engine, portable C variant: the reference body with 8-byte words.
 * Builds on every architecture; on non-x86 it is the only variant. Built
 * with -fno-builtin (and, on gcc, no loop-to-memcpy rewriting) so that it
 * stays our own code rather than a call to the C library's memcpy.
 * Runs on any thread; trusts its caller for non-overlapping buffers.
 */
#include "copy_priv.h"

static inline __attribute__((always_inline)) void
move64(uint8_t *restrict d, const uint8_t *restrict s)
{
	uint64_t w[8];

	__builtin_memcpy(w, s, sizeof(w));
	__builtin_memcpy(d, w, sizeof(w));
}

#define COPY_MOVE64U(d, s) move64((d), (s))
#define COPY_MOVE64A(d, s) move64((d), (s))
#define COPY_MOVE64S(d, s) move64((d), (s))
#include "copy_body.h"

VSW_COPY_DEFINE_ISA(scalar, "scalar", 0, false);
