/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The copy body, shared by every ISA file: that file defines the type v64
 * (64 bytes in registers) and v64_loadu/v64_loada/v64_storeu/v64_storea
 * (unaligned and 64-byte aligned), then includes this once; its own
 * compiler flags pick the instructions.
 *
 * Takes n > 64 only (see struct vsw_copy_ops).
 *
 * Shape: up to 512 bytes, straight-line overlapping 64-byte moves from
 * both ends (2, 4 or 8). Above, the seed's
 * rte_memcpy_aligned idea: one unaligned move covers the head, dst is then
 * 64-byte aligned (and src too when the buffers are co-aligned), aligned
 * moves run V64_BLOCK bytes per iteration (512 for AVX-512, else 256),
 * straight-line ones what is left but 1..64 bytes, and one unaligned
 * move of the last 64 bytes covers that tail. No byte loops, no software
 * prefetch.
 */
#ifndef COPY_BODY_H
#define COPY_BODY_H

/*
 * Up to 512 bytes: 2 to 8 overlapping moves, no alignment work. Moves
 * go in pairs (load, load, store, store): src and dst never overlap, and
 * pairs fit the registers of every ISA (SSE2 holds a unit in 4 of its 16
 * registers; eight units live at once spilled to the stack).
 */
static inline __attribute__((always_inline)) void
copy_pair(uint8_t *restrict d, const uint8_t *restrict s, size_t o1, size_t o2)
{
	v64 a = v64_loadu(s + o1), b = v64_loadu(s + o2);

	v64_storeu(d + o1, a);
	v64_storeu(d + o2, b);
}

static inline __attribute__((always_inline)) void
copy_one(uint8_t *restrict d, const uint8_t *restrict s, size_t o)
{
	v64_storeu(d + o, v64_loadu(s + o));
}

/* ceil(n / 64) moves: pairs alone did 4 for 129-192 B and 8 for 257-384 B
 * and lost there to a plain 64-byte sequence (0.71-0.83x, Intel Xeon). */
static inline __attribute__((always_inline)) void
copy_upto512(uint8_t *restrict d, const uint8_t *restrict s, size_t n)
{
	copy_pair(d, s, 0, n - 64);
	if (n <= 128)
		return;
	if (n <= 192) {
		copy_one(d, s, 64);
		return;
	}
	copy_pair(d, s, 64, n - 128);
	if (n <= 256)
		return;
	if (n <= 320) {
		copy_one(d, s, 128);
		return;
	}
	copy_pair(d, s, 128, n - 192);
	if (n <= 384)
		return;
	if (n <= 448) {
		copy_one(d, s, 192);
		return;
	}
	copy_pair(d, s, 192, n - 256);
}

/* Bytes per loop iteration (copy_v64.h: 512 where the ISA has registers
 * for eight units). */
#ifndef V64_BLOCK
#define V64_BLOCK 256
#endif

/*
 * len (a multiple of 128) bytes to a 64-byte aligned dst (src aligned too
 * when co-aligned), in pairs: four units at once spilled the scalar
 * variant's 32 words.
 */
static inline __attribute__((always_inline)) void
copy_units(uint8_t *restrict d, const uint8_t *restrict s, size_t len,
	bool coaligned)
{
	size_t o;

	/* gcc kept the 512-byte block a loop of its own otherwise. */
#pragma GCC unroll 4
	for (o = 0; o < len; o += 128) {
		v64 a = coaligned ? v64_loada(s + o) : v64_loadu(s + o);
		v64 b = coaligned ? v64_loada(s + o + 64)
				  : v64_loadu(s + o + 64);

		v64_storea(d + o, a);
		v64_storea(d + o + 64, b);
	}
}

/*
 * Above 512 bytes: aligned stores; aligned loads too when co-aligned.
 * Few live values (d, s, n): inlined into a caller's loop, the former
 * shape (tail unit and its address held across the loop, trip counts
 * precomputed, coaligned tested in the loop) spilled the caller's loop
 * counter to the stack, and a hot 96-128 B copy in that loop then ran at
 * ~5.5 instead of ~2.9 cycles in some runs. The tail is loaded after the
 * loop (src does not change).
 */
static inline __attribute__((always_inline)) void
copy_loop(uint8_t *restrict d, const uint8_t *restrict s, size_t n,
	bool coaligned)
{
	size_t off = 64 - ((uintptr_t)d & 63);

	v64_storeu(d, v64_loadu(s));
	d += off;
	s += off;
	n -= off;
	/* n > 448 here: n was > 512 and off <= 64. No software prefetch:
	 * one on src and one on dst per block (1 KiB ahead, to cross the
	 * pages the hardware prefetchers stop at) cost hot copies with a
	 * misaligned src 5-8% at 2-16 KiB (split loads make them load-port
	 * bound, and a prefetch takes a load slot); cold 1.5-64 KiB copies
	 * were no faster with them on this Intel VM (two runs: 0.77-1.05x
	 * of the best anchor with, 0.82-1.10x without, src only between). */
	for (; n > V64_BLOCK; n -= V64_BLOCK, d += V64_BLOCK, s += V64_BLOCK)
		copy_units(d, s, V64_BLOCK, coaligned);
	/* What is left, but the tail, in straight-line moves: a loop of
	 * single 64-byte moves here cost hot 768 B-2 KiB copies 10-20%. */
	if (V64_BLOCK > 256 && n > 256) {
		copy_units(d, s, 256, coaligned);
		n -= 256;
		d += 256;
		s += 256;
	}
	/* 1..256 left: up to three aligned moves, then the tail. */
	if (n > 64)
		v64_storea(d, coaligned ? v64_loada(s) : v64_loadu(s));
	if (n > 128)
		v64_storea(d + 64,
			coaligned ? v64_loada(s + 64) : v64_loadu(s + 64));
	if (n > 192)
		v64_storea(d + 128,
			coaligned ? v64_loada(s + 128) : v64_loadu(s + 128));
	v64_storeu(d + n - 64, v64_loadu(s + n - 64));
}

static inline __attribute__((always_inline)) void
copy_body(void *dst, const void *src, size_t n, bool coaligned, bool entry,
	bool large)
{
#ifdef VSW_COPY_DEBUG
	assert(n > VSW_COPY_SMALL_MAX);
#endif
	if (n <= 512) {
		if (entry)
			vsw_copy_count_(coaligned ? VSW_COPY_PATH_ALIGNED
						  : VSW_COPY_PATH_GENERIC,
				n);
		copy_upto512(dst, src, n);
		return;
	}
	/* Only entries route to the large path; raw bodies never do. */
	if (entry && large && n >= vsw_copy_large_min) {
		vsw_copy_count_(VSW_COPY_PATH_LARGE, n);
		vsw_copy_large_(dst, src, n);
		return;
	}
	if (entry)
		vsw_copy_count_(coaligned ? VSW_COPY_PATH_ALIGNED
					  : VSW_COPY_PATH_GENERIC,
			n);
	/* Two loops, not a test of coaligned in every iteration. */
	if (coaligned)
		copy_loop(dst, src, n, true);
	else
		copy_loop(dst, src, n, false);
}

#endif /* COPY_BODY_H */
