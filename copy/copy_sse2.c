/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy engine, SSE2 variant (x86-64 baseline): 64-byte moves as four
 * 16-byte vectors. Runs on any thread; trusts its caller for
 * non-overlapping buffers.
 */
#include <emmintrin.h>

#include "copy_priv.h"

static inline __attribute__((always_inline)) void
move64(uint8_t *d, const uint8_t *s, bool d_al, bool s_al)
{
	__m128i v[4];
	int i;

	for (i = 0; i < 4; i++)
		v[i] = s_al ? _mm_load_si128((const __m128i *)(s + 16 * i))
			    : _mm_loadu_si128((const __m128i *)(s + 16 * i));
	for (i = 0; i < 4; i++) {
		if (d_al)
			_mm_store_si128((__m128i *)(d + 16 * i), v[i]);
		else
			_mm_storeu_si128((__m128i *)(d + 16 * i), v[i]);
	}
}

#define COPY_MOVE64U(d, s) move64((d), (s), false, false)
#define COPY_MOVE64A(d, s) move64((d), (s), true, true)
#define COPY_MOVE64S(d, s) move64((d), (s), true, false)
#include "copy_body.h"

VSW_COPY_DEFINE_ISA(sse2, "sse2", VSW_COPY_CPU_SSE2, true);
