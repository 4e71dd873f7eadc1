/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The copy engine at the edges of memory. Every implementation through the
 * dispatcher, and (x86) each ISA's body inlined as the per-ISA data path
 * compiles it (test_copy_inl.c), copies between buffers placed at the first
 * byte or ending at the last byte of a mapping with PROT_NONE pages on both
 * sides, so a load or store one byte outside [src, src+n) or [dst, dst+n)
 * faults; the rest of the destination mapping must keep its fill. Sizes:
 * 0, and each size class and loop boundary of the body -1/0/+1 (the small
 * classes, the 64-byte moves up to 512, the block loops, the large-path
 * threshold), then reproducible random sizes; with the large path at its
 * default and off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include <vsw/copy.h>

#include "test_copy_common.h"
#include "tl_rng.h"

#define MAX_N ((size_t)65536 + 64) /* largest size tested */
#define FILL 0xa5

typedef void copy_fn(void *dst, const void *src, size_t n);

#if defined(__x86_64__)
copy_fn tce_copy_inl_sse2, tce_copy_inl_avx2, tce_copy_inl_avx512;
#endif

/* One mapping with a PROT_NONE page each side; data is [lo, hi). */
struct area {
	uint8_t *map, *lo, *hi;
	size_t len;
};

struct edges {
	struct area src, dst;
	uint8_t *ref; /* the src data as written (src is never written) */
	unsigned long failures, cases;
};

static int
area_map(struct area *a, size_t data)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	data = (data + pg - 1) / pg * pg;
	a->len = data + 2 * pg;
	a->map = mmap(NULL, a->len, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a->map == MAP_FAILED)
		return -1;
	if (mprotect(a->map, pg, PROT_NONE) != 0 ||
		mprotect(a->map + pg + data, pg, PROT_NONE) != 0)
		return -1;
	a->lo = a->map + pg;
	a->hi = a->lo + data;
	return 0;
}

static int
setup(void **state)
{
	struct edges *e = calloc(1, sizeof(*e));
	struct tl_rng r;

	if (e == NULL || area_map(&e->src, MAX_N) != 0 ||
		area_map(&e->dst, MAX_N) != 0 ||
		(e->ref = malloc(e->src.hi - e->src.lo)) == NULL)
		return -1;
	tl_rng_seed(&r, 0x6a09e667f3bcc908ull);
	tl_rand_bytes(&r, e->src.lo, (uint32_t)(e->src.hi - e->src.lo));
	memcpy(e->ref, e->src.lo, e->src.hi - e->src.lo);
	memset(e->dst.lo, FILL, e->dst.hi - e->dst.lo);
	*state = e;
	return 0;
}

static int
teardown(void **state)
{
	struct edges *e = *state;

	vsw_copy_impl_set("auto");
	munmap(e->src.map, e->src.len);
	munmap(e->dst.map, e->dst.len);
	free(e->ref);
	free(e);
	return 0;
}

static bool
all_fill(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != FILL)
			return false;
	return true;
}

/* One copy of n bytes: src and dst each at the start (0) or end (1) of
 * their area. Checks the copy and the rest of the dst area, then refills. */
static void
one(struct edges *e, copy_fn *fn, const char *name, size_t n, int sp, int dp)
{
	const uint8_t *s = sp ? e->src.hi - n : e->src.lo;
	uint8_t *d = dp ? e->dst.hi - n : e->dst.lo;
	bool ok;

	fn(d, s, n);
	ok = memcmp(d, e->ref + (s - e->src.lo), n) == 0 &&
	     all_fill(e->dst.lo, d - e->dst.lo) &&
	     all_fill(d + n, e->dst.hi - (d + n));
	if (!ok && e->failures++ < 5)
		print_error("%s: n=%zu src at %s, dst at %s: wrong\n", name, n,
			sp ? "end" : "start", dp ? "end" : "start");
	memset(d, FILL, n);
	e->cases++;
}

static void
sweep(struct edges *e, copy_fn *fn, const char *name)
{
	/* size classes of vsw_copy_small, the 64-byte moves up to 512, the
	 * loop: head (<= 64) + blocks of 256/512 + 64-byte moves + tail */
	static const size_t bounds[] = {1, 2, 4, 8, 16, 32, 64, 128, 192, 256,
		320, 384, 448, 512, 576, 640, 768, 1024, 1088, 1536, 1600, 2048,
		4096, 4160, 32768, 65536};
	size_t large = vsw_copy_large_min_get();
	struct tl_rng r;
	size_t i, n;
	int k;

	tl_rng_seed(&r, 0xbb67ae8584caa73bull);
	for (k = 0; k < 4; k++)
		one(e, fn, name, 0, k & 1, k >> 1);
	for (i = 0; i < sizeof(bounds) / sizeof(bounds[0]) + 1; i++) {
		size_t b = i < sizeof(bounds) / sizeof(bounds[0]) ? bounds[i]
								  : large;

		if (b == SIZE_MAX || b + 1 > MAX_N)
			continue;
		for (n = b - 1; n <= b + 1; n++)
			for (k = 0; k < 4; k++)
				one(e, fn, name, n, k & 1, k >> 1);
	}
	for (i = 0; i < 64; i++) {
		n = tl_rand(&r) % (i & 1 ? 1024 : MAX_N + 1);
		for (k = 0; k < 4; k++)
			one(e, fn, name, n, k & 1, k >> 1);
	}
}

struct sweep_ctx {
	struct edges *e;
	copy_fn *fn;
	const char *name;
};

static void
sweep_cb(void *ctx)
{
	struct sweep_ctx *c = ctx;

	sweep(c->e, c->fn, c->name);
}

/* Both large-path settings (default, off) where the CPU has one. */
static void
sweep_both(struct edges *e, copy_fn *fn, const char *name)
{
	struct sweep_ctx c = {e, fn, name};

	sweep(e, fn, name);
	tcc_large_off(sweep_cb, &c);
}

static void
dispatch(void *dst, const void *src, size_t n)
{
	vsw_copy(dst, src, n);
}

static void
test_edges_dispatch(void **state)
{
	struct edges *e = *state;
	unsigned i, tested = 0;
	const char *name;

	for (i = 0; tcc_impl_next(&i, &name); i++) {
		sweep_both(e, dispatch, name);
		tested++;
	}
	printf("# %u implementations, %lu copies\n", tested, e->cases);
	assert_true(tested >= 1);
	assert_int_equal(e->failures, 0);
	assert_int_equal(vsw_copy_impl_set("auto"), 0);
}

static void
test_edges_inline(void **state)
{
#if defined(__x86_64__)
	static const struct {
		const char *isa;
		copy_fn *fn;
	} inl[] = {
		{"sse2", tce_copy_inl_sse2},
		{"avx2", tce_copy_inl_avx2},
		{"avx512", tce_copy_inl_avx512},
	};
	struct edges *e = *state;
	unsigned i, tested = 0;

	for (i = 0; i < sizeof(inl) / sizeof(inl[0]); i++) {
		/* the inlined body may run only while its ISA is active */
		if (vsw_copy_impl_set(inl[i].isa) != 0)
			continue;
		sweep_both(e, inl[i].fn, inl[i].isa);
		tested++;
	}
	printf("# inlined bodies of %u ISAs\n", tested);
	assert_true(tested >= 1);
	assert_int_equal(e->failures, 0);
	assert_int_equal(vsw_copy_impl_set("auto"), 0);
#else
	(void)state;
	skip();
#endif
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges_dispatch),
		cmocka_unit_test(test_edges_inline),
	};

	return cmocka_run_group_tests_name(
		"copy_edges", tests, setup, teardown);
}
