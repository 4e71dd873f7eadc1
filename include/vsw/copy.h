/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw copy engine: every guest copy goes through vsw_copy().
 *
 * vsw_copy(dst, src, n) copies n bytes; the buffers must NOT overlap. Debug
 * builds (meson buildtype=debug, or -Dvalidator=true: VSW_COPY_DEBUG, and
 * no NDEBUG) assert it on every copy; debugoptimized and release builds do
 * not, because the check measured ~0.5-1 TSC cycle on copies of 4-32 bytes
 * (up to a third of their cost). It is an inline dispatcher:
 *   n <= VSW_COPY_SMALL_MAX (64)   straight-line overlapping moves, here
 *   ((dst ^ src) & 63) == 0        the aligned path (co-aligned buffers)
 *   otherwise                      the generic path
 * The aligned and generic paths are out of line, in per-ISA files (scalar C,
 * SSE2, AVX2, AVX-512) chosen once at start-up from CPUID. Up to 512 bytes
 * they are straight-line overlapping 64-byte moves too; above, one move
 * fixes the head, a loop stores 64-byte aligned (loads aligned as well on
 * the aligned path), one move covers the tail. From vsw_copy_large_min_get()
 * bytes (2/3 of L1d: 32 KiB on a 48 KiB L1d) the x86 variants hand the
 * copy to the large path, rep movsb, which the CPU must have as ERMS.
 * vsw_copy_impl_set() switches the implementation at run time.
 *
 * Counters (stats build): every vsw_copy() is counted exactly once, in one
 * path (small, aligned, generic, large), copies and bytes, in per-thread
 * counters (one writer, no atomics). They are compiled in only with
 * VSW_COPY_STATS (meson -Dcopy_stats=true, or -Dvalidator=true), because
 * measured always-on they cost about one cycle per copy: 128-byte hot copies
 * went from 4.3 to 5.5 TSC cycles, 256-byte ones from 5.5 to 6.3. Without
 * them vsw_copy_route() still tells where a copy would go.
 *
 * Validator: when on, every out-of-line copy is also done by every available
 * implementation (and by the large path if n qualifies) into the
 * destination, filled with 0x00 and then 0xff first, and compared with the
 * source; differences are counted (vsw_copy_validator_mismatches()), logged
 * (rate-limited) and repaired. Off by default; the meson option
 * -Dvalidator=true turns it on by default and also checks the inline small
 * copies (a compiled-in check, as the small path never leaves the caller).
 *
 * Threads: vsw_copy() runs on any thread; selection and validator switches
 * are control-thread calls (one atomic pointer store).
 */
#ifndef VSW_COPY_H
#define VSW_COPY_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Copies up to this size never leave the inline dispatcher. */
#define VSW_COPY_SMALL_MAX 64
/* Co-alignment granule: the aligned path needs (dst ^ src) % this == 0. */
#define VSW_COPY_ALIGN 64

/* Paths; the X-macro gives the enum and the names (vsw_copy_path_name()). */
#define VSW_COPY_PATHS(X)     \
	X(SMALL, "small")     \
	X(ALIGNED, "aligned") \
	X(GENERIC, "generic") \
	X(LARGE, "large")

/* clang-format cannot see that the X-macro expands to enumerators. */
/* clang-format off */
enum vsw_copy_path {
#define VSW_COPY_PATH_ENUM_(id, str) VSW_COPY_PATH_##id,
	VSW_COPY_PATHS(VSW_COPY_PATH_ENUM_)
#undef VSW_COPY_PATH_ENUM_
	VSW_COPY_PATH_MAX
};
/* clang-format on */

/* Per-thread counters; the paths partition the calls. */
struct vsw_copy_stats {
	uint64_t copies[VSW_COPY_PATH_MAX];
	uint64_t bytes[VSW_COPY_PATH_MAX];
};

/* CPU features that gate implementations (see vsw_copy_cpu_mask_set()). */
#define VSW_COPY_CPU_SSE2 (1u << 0)
#define VSW_COPY_CPU_AVX2 (1u << 1)
#define VSW_COPY_CPU_AVX512 (1u << 2)
#define VSW_COPY_CPU_ERMS (1u << 3)

typedef void vsw_copy_fn(void *dst, const void *src, size_t n);

/* The out-of-line paths of the active implementation (immutable tables);
 * they take only n > VSW_COPY_SMALL_MAX. */
struct vsw_copy_ops {
	vsw_copy_fn *aligned;
	vsw_copy_fn *generic;
};

/* Internal to the dispatcher; use the functions below. */
extern const struct vsw_copy_ops *vsw_copy_active_ops;
extern _Thread_local struct vsw_copy_stats vsw_copy_thread_stats
	__attribute__((tls_model("initial-exec")));
extern bool vsw_copy_validating;
void vsw_copy_validate_small_slow(void *dst, const void *src, size_t n);
/* Effective large-path threshold (SIZE_MAX: off); written by the engine. */
extern size_t vsw_copy_large_min;
/* Entry tables of the x86 ISAs (copy_v64.h names the one compiled for). */
extern const struct vsw_copy_ops vsw_copy_ops_sse2;
extern const struct vsw_copy_ops vsw_copy_ops_avx2;
extern const struct vsw_copy_ops vsw_copy_ops_avx512;

static inline void
vsw_copy_count_(enum vsw_copy_path path, size_t n)
{
#ifdef VSW_COPY_STATS
	vsw_copy_thread_stats.copies[path]++;
	vsw_copy_thread_stats.bytes[path] += n;
#else
	(void)path;
	(void)n;
#endif
}

/* The large path: the CPU's own string copy (fast with ERMS/FSRM). */
static inline void
vsw_copy_large_(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
	__asm__ volatile("rep movsb"
			 : "+D"(dst), "+S"(src), "+c"(n)
			 :
			 : "memory");
#else
	__builtin_memcpy(dst, src, n);
#endif
}

/* Straight-line copy of n <= 64 bytes: two overlapping moves per class. */
static inline void
vsw_copy_small(void *restrict dst, const void *restrict src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (n >= 16) {
		uint64_t a[2], b[2], c[2], e[2];

#if defined(VSW_COPY_INLINE) && defined(__AVX2__)
		/* 33-64 B as the fall-through: inlined in a loop, gcc
		 * otherwise sent it out of line, and a hot 64-byte copy took
		 * four taken branches (to the small path, to this class,
		 * back, the back edge), three now: 0.73 -> 0.92x of one
		 * 64-byte move (bench copy, Intel). The small path as the
		 * loop's straight line (one taken branch) gave 1.03x but cost
		 * aligned 96-192 B copies 8-13 %, so it was not kept. */
		if (__builtin_expect(n > 32, 1)) {
#else
		if (n > 32) {
#endif
#if defined(VSW_COPY_INLINE) && defined(__AVX2__)
			/* compiled for AVX2 or better: two 32-byte moves */
			uint64_t y[4], z[4];

			__builtin_memcpy(y, s, 32);
			__builtin_memcpy(z, s + n - 32, 32);
			__builtin_memcpy(d, y, 32);
			__builtin_memcpy(d + n - 32, z, 32);
			(void)a;
			(void)b;
			(void)c;
			(void)e;
			return;
#endif
			__builtin_memcpy(a, s, 16);
			__builtin_memcpy(b, s + 16, 16);
			__builtin_memcpy(c, s + n - 32, 16);
			__builtin_memcpy(e, s + n - 16, 16);
			__builtin_memcpy(d, a, 16);
			__builtin_memcpy(d + 16, b, 16);
			__builtin_memcpy(d + n - 32, c, 16);
			__builtin_memcpy(d + n - 16, e, 16);
		} else {
			__builtin_memcpy(a, s, 16);
			__builtin_memcpy(e, s + n - 16, 16);
			__builtin_memcpy(d, a, 16);
			__builtin_memcpy(d + n - 16, e, 16);
		}
	} else if (n >= 8) {
		uint64_t a, e;

		__builtin_memcpy(&a, s, 8);
		__builtin_memcpy(&e, s + n - 8, 8);
		__builtin_memcpy(d, &a, 8);
		__builtin_memcpy(d + n - 8, &e, 8);
	} else if (n >= 4) {
		uint32_t a, e;

		__builtin_memcpy(&a, s, 4);
		__builtin_memcpy(&e, s + n - 4, 4);
		__builtin_memcpy(d, &a, 4);
		__builtin_memcpy(d + n - 4, &e, 4);
	} else if (n >= 2) {
		uint16_t a, e;

		__builtin_memcpy(&a, s, 2);
		__builtin_memcpy(&e, s + n - 2, 2);
		__builtin_memcpy(d, &a, 2);
		__builtin_memcpy(d + n - 2, &e, 2);
	} else if (n == 1) {
		*d = *s;
	}
}

/* True when [dst, dst+n) and [src, src+n) are disjoint (n == 0: always). */
static inline bool
vsw_copy_disjoint(const void *dst, const void *src, size_t n)
{
	uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;

	/* |d - s| >= n in one unsigned compare (cheap enough for an assert
	 * on every copy of a debug build): d - s + n - 1 wraps below 2n - 1
	 * exactly when the ranges overlap. */
	return n == 0 || d - s + n - 1 >= 2 * n - 1;
}

/*
 * VSW_COPY_INLINE (code compiled once per ISA, e.g. the virtq data path):
 * vsw_copy() is the body of the ISA this file is compiled for, inlined,
 * with no table load. Such code must run only while the engine's active
 * table is that ISA's own (VSW_COPY_V64_OPS), so that another selected
 * implementation or the validator still sees every copy: its caller checks
 * that once per burst (vhost/virtq/virtq_isa.c). A load and compare per
 * copy instead cost ~1.5 TSC cycles on hot 96-256 B copies (0.65-0.83x of
 * an inline 64-byte sequence at 128 B, 0.98-1.19x without).
 */
#ifdef VSW_COPY_INLINE
#include <vsw/copy_v64.h>

#include <vsw/copy_body.h>
#endif

/*
 * Copy n bytes from src to dst. Buffers must not overlap. Any alignment.
 * Inlined by force under VSW_COPY_INLINE: with the body inside, gcc
 * otherwise made it one out-of-line function per file, and every copy,
 * 64-byte ones too, paid a call (enqueue at 64 B: 74 -> 91 cycles/packet).
 */
#ifdef VSW_COPY_INLINE
static inline __attribute__((always_inline)) void
#else
static inline void
#endif
vsw_copy(void *dst, const void *src, size_t n)
{
#ifndef VSW_COPY_INLINE
	const struct vsw_copy_ops *ops;
#endif

#ifdef VSW_COPY_DEBUG
	assert(vsw_copy_disjoint(dst, src, n));
#endif
	if (n <= VSW_COPY_SMALL_MAX) {
		vsw_copy_small(dst, src, n);
#ifdef VSW_COPY_STATS
		vsw_copy_thread_stats.copies[VSW_COPY_PATH_SMALL]++;
		vsw_copy_thread_stats.bytes[VSW_COPY_PATH_SMALL] += n;
#endif
#ifdef VSW_COPY_VALIDATOR_DEFAULT
		if (__atomic_load_n(&vsw_copy_validating, __ATOMIC_RELAXED))
			vsw_copy_validate_small_slow(dst, src, n);
#endif
		return;
	}
#ifdef VSW_COPY_INLINE
	copy_body(dst, src, n,
		(((uintptr_t)dst ^ (uintptr_t)src) & (VSW_COPY_ALIGN - 1)) == 0,
		true, true);
#else
	/* Tables are immutable statics: a relaxed load sees a whole one. */
	ops = __atomic_load_n(&vsw_copy_active_ops, __ATOMIC_RELAXED);
	if ((((uintptr_t)dst ^ (uintptr_t)src) & (VSW_COPY_ALIGN - 1)) == 0)
		ops->aligned(dst, src, n);
	else
		ops->generic(dst, src, n);
#endif
}

/* --- implementations (control thread) ---------------------------------- */

/* Number of implementations in the registry ("scalar", "sse2", ...). */
unsigned vsw_copy_impl_count(void);

/*
 * Name and availability of implementation idx (0 .. count-1).
 * Returns 0, or -EINVAL if idx is out of range.
 */
int vsw_copy_impl_info(unsigned idx, const char **name, bool *available);

/*
 * Select an implementation by name: "auto" (the best this CPU runs) or one
 * listed by vsw_copy_impl_info(). Returns 0; -EINVAL for an unknown name;
 * -ENOTSUP if this CPU (or the test mask) lacks the ISA, and then nothing
 * changes. Takes effect for copies that start after the call.
 */
int vsw_copy_impl_set(const char *name);

/* Name of the active implementation ("auto" resolved, e.g. "avx512"). */
const char *vsw_copy_impl_get(void);

/* --- routing and counters ----------------------------------------------- */

/* The path vsw_copy(dst, src, n) takes now (same rules, no copy). */
enum vsw_copy_path vsw_copy_route(const void *dst, const void *src, size_t n);

/* "small", "aligned", "generic", "large"; NULL if out of range. */
const char *vsw_copy_path_name(enum vsw_copy_path path);

/* Copies of at least this many bytes take the large path (SIZE_MAX: off). */
size_t vsw_copy_large_min_get(void);

/*
 * Set the large-path threshold (benchmarks, tuning). Values below
 * VSW_COPY_SMALL_MAX + 1 are raised to it; SIZE_MAX turns the path off.
 * Returns -ENOTSUP (and changes nothing) if the CPU lacks ERMS, unless
 * min == SIZE_MAX.
 */
int vsw_copy_large_min_set(size_t min);

/* True in a stats build (VSW_COPY_STATS); otherwise counters stay 0. */
bool vsw_copy_stats_enabled(void);

/* The calling thread's counters: copy out, reset, or publish a pointer
 * (a control thread may read it; the owner stays the only writer). */
void vsw_copy_stats_get(struct vsw_copy_stats *out);
void vsw_copy_stats_reset(void);
const struct vsw_copy_stats *vsw_copy_stats_thread(void);

/* --- validator ---------------------------------------------------------- */

/* Turn the validator on or off (default: off, or on with -Dvalidator). */
void vsw_copy_validator_set(bool on);
bool vsw_copy_validator_get(void);
/* Copies (any thread) whose result differed from the source. */
uint64_t vsw_copy_validator_mismatches(void);

/* --- test hook ----------------------------------------------------------- */

/* CPU features found (VSW_COPY_CPU_* bits), after the mask below. */
uint32_t vsw_copy_cpu_features(void);

/*
 * Pretend the CPU lacks the features in hide (VSW_COPY_CPU_* bits); 0
 * restores the start-up state (the CPU minus VSW_CPU_HIDE). If the active
 * implementation becomes unavailable the engine falls back to "auto". For
 * tests of the selection logic.
 *
 * VSW_CPU_HIDE (environment, read once at start-up by the copy engine and
 * the classifier, see dpcls.h): a comma-separated list of features the
 * process treats as absent: sse2, avx2, avx512, erms. It is ORed into every
 * mask above, so "auto" and vsw_copy_impl_set() never pick a hidden ISA.
 * The names are independent: a CPU without AVX2 is "avx2,avx512". Used by
 * ./vswdev test (meson test --setup noavx512 / noavx2) so the fallback
 * paths run on a CPU that has the better ones; unknown names are reported
 * on stderr and ignored.
 */
void vsw_copy_cpu_mask_set(uint32_t hide);

#endif /* VSW_COPY_H */
