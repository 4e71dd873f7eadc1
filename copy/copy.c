/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy engine control: the implementation registry, CPUID probing, the
 * start-up choice, run-time selection by name, the large-path threshold,
 * the validator and the per-thread counters.
 *
 * Threads: selection, validator and threshold calls come from the control
 * thread; data threads only read vsw_copy_active_ops (one atomic pointer to
 * an immutable table) and write their own thread-local counters.
 * Trust: callers of vsw_copy() promise disjoint buffers; names passed to
 * vsw_copy_impl_set() are untrusted strings (a CLI will forward them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "copy_priv.h"

#ifdef VSW_COPY_VALIDATOR_DEFAULT
#define VALIDATOR_DEFAULT true
#else
#define VALIDATOR_DEFAULT false
#endif

/*
 * Large-path threshold: two thirds of the L1 data cache. Measured on the
 * development CPU (AMD, 48 KiB L1d; bench/vsw-bench-copy --large-min): with
 * src and dst hot, the AVX-512 loop gives ~100 B/cycle up to 24 KiB, where
 * source and destination still fit L1, and rep movsb ~65; at 32 KiB the
 * loop falls to ~29 and rep movsb keeps ~65 (50 at 64 KiB). When the data
 * sits in L2, rep movsb wins from ~3 KiB (45 vs 26 B/cycle at 16 KiB), but
 * a copy cannot know that, and hot copies are the common case here.
 * AMD Zen 5 (family 1Ah, 48 KiB L1d, 2026-12-07): half of L1d was tried,
 * and kept losing hot 24 KiB copies (loop 83-108 B/cycle, rep movsb
 * 68-70) whenever the machine ran at its faster clock; 2/3 stays there.
 * Some CPUs have their own (large_min_rules).
 */
#define LARGE_MIN_FALLBACK ((size_t)32 * 1024)

/* Registry, lowest priority first: "auto" takes the last available. */
static const struct vsw_copy_isa *const isas[] = {
	&copy_isa_libc,
	&copy_isa_scalar,
#if defined(__x86_64__)
	&copy_isa_sse2,
	&copy_isa_avx2,
	&copy_isa_avx512,
#endif
};
#define N_ISAS (sizeof(isas) / sizeof(isas[0]))

static void resolve_aligned(void *dst, const void *src, size_t n);
static void resolve_generic(void *dst, const void *src, size_t n);
static void validate_aligned(void *dst, const void *src, size_t n);
static void validate_generic(void *dst, const void *src, size_t n);

/* Until start-up selection ran (e.g. a copy from another constructor). */
static const struct vsw_copy_ops resolve_ops = {
	resolve_aligned, resolve_generic};
static const struct vsw_copy_ops validate_ops = {
	validate_aligned, validate_generic};

const struct vsw_copy_ops *vsw_copy_active_ops = &resolve_ops;
_Thread_local struct vsw_copy_stats vsw_copy_thread_stats
	__attribute__((tls_model("initial-exec")));
bool vsw_copy_validating;
size_t vsw_copy_large_min = SIZE_MAX;

static bool inited;
static unsigned active_idx; /* index in isas[] */
static uint32_t cpu_found;  /* what CPUID said */
static uint32_t cpu_hidden; /* test hook mask | env_hidden */
static uint32_t env_hidden; /* VSW_CPU_HIDE, read once at start-up */
static size_t large_min_pref = LARGE_MIN_FALLBACK;
static uint64_t mismatches; /* atomic: validators on any thread */

#if defined(__x86_64__)
static uint64_t
xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

static uint32_t
cpu_probe(void)
{
	unsigned int a, b, c, d, c1;
	uint64_t xcr0 = 0;
	uint32_t f = 0;

	if (!__get_cpuid(1, &a, &b, &c1, &d))
		return 0;
	if (d & (1u << 26))
		f |= VSW_COPY_CPU_SSE2;
	if (c1 & (1u << 27)) /* OSXSAVE: XCR0 readable */
		xcr0 = xgetbv0();
	if (__get_cpuid_max(0, NULL) < 7)
		return f;
	__cpuid_count(7, 0, a, b, c, d);
	/* AVX2 needs AVX (leaf 1) and the OS saving XMM+YMM state. */
	if ((b & (1u << 5)) && (c1 & (1u << 28)) && (xcr0 & 0x6) == 0x6)
		f |= VSW_COPY_CPU_AVX2;
	/* AVX-512F needs opmask, ZMM_Hi256 and Hi16_ZMM state too. */
	if ((b & (1u << 16)) && (xcr0 & 0xe6) == 0xe6)
		f |= VSW_COPY_CPU_AVX512;
	if (b & (1u << 9))
		f |= VSW_COPY_CPU_ERMS;
	return f;
}
#else
static uint32_t
cpu_probe(void)
{
	return 0;
}
#endif

/*
 * VSW_CPU_HIDE: comma-separated feature names to hide (see copy.h), so
 * the fallback implementations run on a CPU that has better ones. An
 * unknown name is reported, not fatal: the fallback unit case catches a
 * setup that hides nothing.
 */
static uint32_t
env_hide(void)
{
	static const struct {
		const char *name;
		uint32_t bit;
	} names[] = {
		{"sse2", VSW_COPY_CPU_SSE2},
		{"avx2", VSW_COPY_CPU_AVX2},
		{"avx512", VSW_COPY_CPU_AVX512},
		{"erms", VSW_COPY_CPU_ERMS},
	};
	const char *p = getenv("VSW_CPU_HIDE");
	uint32_t hide = 0;
	size_t len, i;

	for (; p != NULL && *p != '\0'; p += len + (p[len] != '\0')) {
		len = strcspn(p, ",");
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == len &&
				strncmp(p, names[i].name, len) == 0)
				break;
		if (i < sizeof(names) / sizeof(names[0]))
			hide |= names[i].bit;
		else if (len > 0)
			fprintf(stderr, "vsw copy: VSW_CPU_HIDE: unknown "
					"feature '%.*s' ignored\n",
				(int)len, p);
	}
	return hide;
}

uint32_t
vsw_copy_cpu_features(void)
{
	return cpu_found & ~cpu_hidden;
}

static bool
isa_available(const struct vsw_copy_isa *isa)
{
	return (isa->needs & ~vsw_copy_cpu_features()) == 0;
}

static const struct vsw_copy_isa *
active_isa(void)
{
	return isas[__atomic_load_n(&active_idx, __ATOMIC_RELAXED)];
}

/* Publish the table the dispatcher calls through. */
static void
install(void)
{
	const struct vsw_copy_ops *ops = active_isa()->ops;

	if (__atomic_load_n(&vsw_copy_validating, __ATOMIC_RELAXED))
		ops = &validate_ops;
	__atomic_store_n(&vsw_copy_active_ops, ops, __ATOMIC_RELEASE);
}

static void
large_min_apply(void)
{
	size_t v = SIZE_MAX;

	if (vsw_copy_cpu_features() & VSW_COPY_CPU_ERMS)
		v = large_min_pref;
	__atomic_store_n(&vsw_copy_large_min, v, __ATOMIC_RELAXED);
}

static unsigned
best_idx(void)
{
	unsigned i = N_ISAS;

	while (i-- > 0)
		if (isa_available(isas[i]))
			return i;
	return 0; /* scalar needs nothing */
}

/*
 * CPUs whose measured threshold is not 2/3 of L1d (bench copy --large-min
 * against the default, side by side). Matched on vendor, display family
 * and model (0: any) and on AVX-512, the body that was measured.
 *
 * AMD family 19h with AVX-512 (Zen 4; Zen 3 has none): no large path.
 * Measured on an EPYC model 11h (32 KiB L1d, 1 MiB L2, 2026-12-07): hot
 * 24-64 KiB copies, the AVX-512 loop is 0.97-0.99x of the best anchor at
 * every alignment and rep movsb 0.90-0.91x with a misaligned source (equal
 * when aligned); cold at 24-64 KiB, the loop is 0.87-0.99x of rep movsb
 * aligned and 0.95-1.04x misaligned.
 *
 * Intel Ice Lake server (family 6 model 6Ah; 6Ch is its D part): from
 * 3 KiB. Measured on model 6Ah (48 KiB L1d, 2026-12-07): hot aligned 3-16
 * KiB copies, the 64-byte store loops ran at 33.5-35.7 B/TSC cycle and
 * glibc's memcpy at 35-54 (one run), rep movsb at 38-52 (the next run), so
 * with the 32 KiB default hot 3-24 KiB copies were 0.44-0.95x of the best
 * anchor and cold ones 0.89-0.98x. From 3 KiB they are 0.98-1.08x hot and
 * 0.96-1.04x cold (medians of two runs); from 1 KiB, hot 1-1.5 KiB copies
 * (aligned, co-aligned, src+3/dst+17) fell to 0.63-0.81x; from 2 KiB,
 * aligned 2 KiB ones to 0.96x. Below 3 KiB the data path's 2 KiB buffer
 * copies stay on the loop.
 */
#if defined(__x86_64__)
struct large_min_rule {
	unsigned int vendor_ebx; /* CPUID 0 ebx: "Auth" / "Genu" is enough */
	unsigned int family, model;
	size_t min;
};

static const struct large_min_rule large_min_rules[] = {
	{0x68747541, 0x19, 0, SIZE_MAX}, /* AMD Zen 4 */
	{0x756e6547, 0x6, 0x6a, 3072},	 /* Intel Ice Lake SP */
	{0x756e6547, 0x6, 0x6c, 3072},	 /* Intel Ice Lake D */
};
#endif

/* The threshold this CPU's rule gives, or 0 (then 2/3 of L1d). */
static size_t
cpu_large_min_rule(void)
{
#if defined(__x86_64__)
	unsigned int a, b, c, d, vendor, family, model, i;

	if (!(cpu_found & VSW_COPY_CPU_AVX512) ||
		!__get_cpuid(0, &a, &vendor, &c, &d) ||
		!__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	family = (a >> 8) & 0xf;
	model = (a >> 4) & 0xf;
	if (family == 0x6 || family == 0xf)
		model |= ((a >> 16) & 0xf) << 4;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	for (i = 0; i < sizeof(large_min_rules) / sizeof(large_min_rules[0]);
		i++) {
		const struct large_min_rule *r = &large_min_rules[i];

		if (r->vendor_ebx == vendor && r->family == family &&
			(r->model == 0 || r->model == model))
			return r->min;
	}
#endif
	return 0;
}

static size_t
large_min_default(void)
{
	size_t rule = cpu_large_min_rule();

	if (rule != 0)
		return rule;
#ifdef _SC_LEVEL1_DCACHE_SIZE
	long l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE);

	if (l1d >= 16 * 1024 && l1d <= 1024 * 1024)
		return (size_t)l1d * 2 / 3;
#endif
	return LARGE_MIN_FALLBACK;
}

__attribute__((constructor)) static void
copy_init(void)
{
	if (__atomic_load_n(&inited, __ATOMIC_ACQUIRE))
		return;
	cpu_found = cpu_probe();
	env_hidden = env_hide();
	cpu_hidden = env_hidden;
	large_min_pref = large_min_default();
	__atomic_store_n(&active_idx, best_idx(), __ATOMIC_RELAXED);
	__atomic_store_n(
		&vsw_copy_validating, VALIDATOR_DEFAULT, __ATOMIC_RELAXED);
	large_min_apply();
	install();
	__atomic_store_n(&inited, true, __ATOMIC_RELEASE);
}

static void
resolve_aligned(void *dst, const void *src, size_t n)
{
	copy_init();
	__atomic_load_n(&vsw_copy_active_ops, __ATOMIC_ACQUIRE)
		->aligned(dst, src, n);
}

static void
resolve_generic(void *dst, const void *src, size_t n)
{
	copy_init();
	__atomic_load_n(&vsw_copy_active_ops, __ATOMIC_ACQUIRE)
		->generic(dst, src, n);
}

unsigned
vsw_copy_impl_count(void)
{
	return N_ISAS;
}

int
vsw_copy_impl_info(unsigned idx, const char **name, bool *available)
{
	copy_init();
	if (idx >= N_ISAS)
		return -EINVAL;
	if (name != NULL)
		*name = isas[idx]->name;
	if (available != NULL)
		*available = isa_available(isas[idx]);
	return 0;
}

int
vsw_copy_impl_set(const char *name)
{
	unsigned i;

	copy_init();
	if (name == NULL)
		return -EINVAL;
	if (strcmp(name, "auto") == 0) {
		i = best_idx();
	} else {
		for (i = 0; i < N_ISAS; i++)
			if (strcmp(name, isas[i]->name) == 0)
				break;
		if (i == N_ISAS)
			return -EINVAL;
		if (!isa_available(isas[i]))
			return -ENOTSUP;
	}
	__atomic_store_n(&active_idx, i, __ATOMIC_RELAXED);
	install();
	return 0;
}

const char *
vsw_copy_impl_get(void)
{
	copy_init();
	return active_isa()->name;
}

enum vsw_copy_path
vsw_copy_route(const void *dst, const void *src, size_t n)
{
	copy_init();
	if (n <= VSW_COPY_SMALL_MAX)
		return VSW_COPY_PATH_SMALL;
	if (active_isa()->large &&
		n >= __atomic_load_n(&vsw_copy_large_min, __ATOMIC_RELAXED))
		return VSW_COPY_PATH_LARGE;
	if ((((uintptr_t)dst ^ (uintptr_t)src) & (VSW_COPY_ALIGN - 1)) == 0)
		return VSW_COPY_PATH_ALIGNED;
	return VSW_COPY_PATH_GENERIC;
}

const char *
vsw_copy_path_name(enum vsw_copy_path path)
{
	static const char *const names[] = {
#define PATH_NAME(id, str) [VSW_COPY_PATH_##id] = str,
		VSW_COPY_PATHS(PATH_NAME)
#undef PATH_NAME
	};
	_Static_assert(sizeof(names) / sizeof(names[0]) == VSW_COPY_PATH_MAX,
		"one name per path");

	if ((unsigned)path >= VSW_COPY_PATH_MAX)
		return NULL;
	return names[path];
}

size_t
vsw_copy_large_min_get(void)
{
	copy_init();
	return __atomic_load_n(&vsw_copy_large_min, __ATOMIC_RELAXED);
}

int
vsw_copy_large_min_set(size_t min)
{
	copy_init();
	if (min != SIZE_MAX && !(vsw_copy_cpu_features() & VSW_COPY_CPU_ERMS))
		return -ENOTSUP;
	if (min < VSW_COPY_SMALL_MAX + 1)
		min = VSW_COPY_SMALL_MAX + 1;
	large_min_pref = min;
	large_min_apply();
	return 0;
}

bool
vsw_copy_stats_enabled(void)
{
#ifdef VSW_COPY_STATS
	return true;
#else
	return false;
#endif
}

void
vsw_copy_stats_get(struct vsw_copy_stats *out)
{
	*out = vsw_copy_thread_stats;
}

void
vsw_copy_stats_reset(void)
{
	memset(&vsw_copy_thread_stats, 0, sizeof(vsw_copy_thread_stats));
}

const struct vsw_copy_stats *
vsw_copy_stats_thread(void)
{
	return &vsw_copy_thread_stats;
}

void
vsw_copy_cpu_mask_set(uint32_t hide)
{
	copy_init();
	cpu_hidden = hide | env_hidden;
	large_min_apply();
	if (!isa_available(active_isa()))
		__atomic_store_n(&active_idx, best_idx(), __ATOMIC_RELAXED);
	install();
}

/* --- validator ------------------------------------------------------------ */

void
vsw_copy_validator_set(bool on)
{
	copy_init();
	__atomic_store_n(&vsw_copy_validating, on, __ATOMIC_RELAXED);
	install();
}

bool
vsw_copy_validator_get(void)
{
	copy_init();
	return __atomic_load_n(&vsw_copy_validating, __ATOMIC_RELAXED);
}

uint64_t
vsw_copy_validator_mismatches(void)
{
	return __atomic_load_n(&mismatches, __ATOMIC_RELAXED);
}

/* Count a difference; log the first few and then every power of two. */
static void
mismatch(const char *impl, const char *path, const void *dst, const void *src,
	size_t n)
{
	uint64_t k = __atomic_add_fetch(&mismatches, 1, __ATOMIC_RELAXED);

	if (k <= 8 || (k & (k - 1)) == 0)
		fprintf(stderr,
			"vsw copy validator: %s %s copy of %zu bytes "
			"%p <- %p differs from the source (mismatch #%llu)\n",
			impl, path, n, dst, src, (unsigned long long)k);
}

/*
 * Run fn twice, over dst filled with 0x00 and then 0xff: a byte fn fails
 * to write equals the fill, so at least one run shows it, whatever src is.
 */
static bool
run_checked(vsw_copy_fn *fn, void *dst, const void *src, size_t n)
{
	bool ok;

	memset(dst, 0x00, n);
	fn(dst, src, n);
	ok = memcmp(dst, src, n) == 0;
	memset(dst, 0xff, n);
	fn(dst, src, n);
	return ok && memcmp(dst, src, n) == 0;
}

static void
large_fn(void *dst, const void *src, size_t n)
{
	vsw_copy_large_(dst, src, n);
}

static void
validate(void *dst, const void *src, size_t n, bool coaligned)
{
	const struct vsw_copy_isa *sel = active_isa();
	const char *path = coaligned ? "aligned" : "generic";
	unsigned i;

	for (i = 0; i < N_ISAS; i++) {
		const struct vsw_copy_ops *raw = &isas[i]->raw;

		if (!isa_available(isas[i]))
			continue;
		if (!run_checked(coaligned ? raw->aligned : raw->generic, dst,
			    src, n))
			mismatch(isas[i]->name, path, dst, src, n);
	}
	if (n >= __atomic_load_n(&vsw_copy_large_min, __ATOMIC_RELAXED) &&
		!run_checked(large_fn, dst, src, n))
		mismatch("rep-movsb", "large", dst, src, n);
	/* Last the real thing, through the entry (counts the path once). */
	memset(dst, 0x5a, n);
	(coaligned ? sel->ops->aligned : sel->ops->generic)(dst, src, n);
	if (memcmp(dst, src, n) != 0) {
		mismatch(sel->name, path, dst, src, n);
		memcpy(dst, src, n);
	}
}

static void
validate_aligned(void *dst, const void *src, size_t n)
{
	validate(dst, src, n, true);
}

static void
validate_generic(void *dst, const void *src, size_t n)
{
	validate(dst, src, n, false);
}

void
vsw_copy_validate_small_slow(void *dst, const void *src, size_t n)
{
	if (memcmp(dst, src, n) != 0) {
		mismatch("inline", "small", dst, src, n);
		memcpy(dst, src, n);
	}
}
