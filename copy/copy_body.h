/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The copy body, shared by every ISA file: that file defines
 *   COPY_MOVE64U(d, s)  move 64 bytes, any alignment
 *   COPY_MOVE64A(d, s)  move 64 bytes, d and s 64-byte aligned
 *   COPY_MOVE64S(d, s)  move 64 bytes, d 64-byte aligned, s any
 * and includes this once; its own compiler flags pick the instructions.
 *
 * Takes n > 64 only (see struct vsw_copy_ops).
 *
 * Shape (the seed's rte_memcpy_aligned idea): one unaligned 64-byte move
 * covers the head, dst is then 64-byte aligned (and src too when the
 * buffers are co-aligned), aligned moves run 256 bytes per iteration, up to three
 * more cover what is left but 1..64 bytes, and one unaligned move of the
 * last 64 bytes covers that tail. Up to 256 bytes: straight-line
 * overlapping moves. No byte loops.
 */
#ifndef COPY_BODY_H
#define COPY_BODY_H

/*
 * One software prefetch per 256-byte iteration, 1 KiB ahead on the source:
 * the hardware prefetchers stop at page boundaries, and a cold copy of a
 * few KiB crosses one or two. Measured: cold 4-16 KiB copies gained ~10-20%,
 * hot ones did not move beyond noise (four prefetches per iteration cost a
 * few percent hot). Prefetching past the end of src is harmless.
 */
#define COPY_PREFETCH(s) __builtin_prefetch((s) + 1024, 0, 3)

static inline __attribute__((always_inline)) void
copy_body(void *dst, const void *src, size_t n, bool coaligned, bool entry,
	bool large)
{
	enum vsw_copy_path path =
		coaligned ? VSW_COPY_PATH_ALIGNED : VSW_COPY_PATH_GENERIC;
	uint8_t *restrict d = dst;
	const uint8_t *restrict s = src;
	size_t off;

	/* The dispatcher keeps n <= VSW_COPY_SMALL_MAX (64) inline. */
#ifdef VSW_COPY_DEBUG
	assert(n > VSW_COPY_SMALL_MAX);
#endif
	if (n <= 128) {
		if (entry)
			copy_count(path, n);
		COPY_MOVE64U(d, s);
		COPY_MOVE64U(d + n - 64, s + n - 64);
		return;
	}
	if (n <= 256) {
		if (entry)
			copy_count(path, n);
		COPY_MOVE64U(d, s);
		COPY_MOVE64U(d + 64, s + 64);
		COPY_MOVE64U(d + n - 128, s + n - 128);
		COPY_MOVE64U(d + n - 64, s + n - 64);
		return;
	}
	/* Only entries route to the large path; raw bodies never do. */
	if (entry && large && n >= vsw_copy_large_min) {
		copy_count(VSW_COPY_PATH_LARGE, n);
		copy_large(d, s, n);
		return;
	}
	if (entry)
		copy_count(path, n);
	COPY_MOVE64U(d, s);
	off = 64 - ((uintptr_t)d & 63);
	d += off;
	s += off;
	n -= off;
	/* n > 192 here: n was > 256 and off <= 64. */
	if (coaligned) {
		for (; n > 256; n -= 256, d += 256, s += 256) {
			COPY_PREFETCH(s);
			COPY_MOVE64A(d, s);
			COPY_MOVE64A(d + 64, s + 64);
			COPY_MOVE64A(d + 128, s + 128);
			COPY_MOVE64A(d + 192, s + 192);
		}
		if (n > 64)
			COPY_MOVE64A(d, s);
		if (n > 128)
			COPY_MOVE64A(d + 64, s + 64);
		if (n > 192)
			COPY_MOVE64A(d + 128, s + 128);
	} else {
		for (; n > 256; n -= 256, d += 256, s += 256) {
			COPY_PREFETCH(s);
			COPY_MOVE64S(d, s);
			COPY_MOVE64S(d + 64, s + 64);
			COPY_MOVE64S(d + 128, s + 128);
			COPY_MOVE64S(d + 192, s + 192);
		}
		if (n > 64)
			COPY_MOVE64S(d, s);
		if (n > 128)
			COPY_MOVE64S(d + 64, s + 64);
		if (n > 192)
			COPY_MOVE64S(d + 128, s + 128);
	}
	/* 1..64 bytes left past the aligned moves: one overlapping move. */
	COPY_MOVE64U(d + n - 64, s + n - 64);
}

#endif /* COPY_BODY_H */
