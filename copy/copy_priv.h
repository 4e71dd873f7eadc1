/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Copy engine internals shared by copy.c and the per-ISA files: the ISA
 * descriptor, the large-path threshold and the entry-point template.
 */
#ifndef VSW_COPY_PRIV_H
#define VSW_COPY_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vsw/copy.h>

/* One ISA variant. */
struct vsw_copy_isa {
	const char *name;
	uint32_t needs; /* VSW_COPY_CPU_* bits the CPU must have */
	bool large;	/* entries hand n >= large_min to rep movsb */
	const struct vsw_copy_ops *ops; /* entries: large, counters, body */
	struct vsw_copy_ops raw; /* bodies only (the validator runs these) */
};

extern const struct vsw_copy_isa copy_isa_libc;
extern const struct vsw_copy_isa copy_isa_scalar;
#if defined(__x86_64__)
extern const struct vsw_copy_isa copy_isa_sse2;
extern const struct vsw_copy_isa copy_isa_avx2;
extern const struct vsw_copy_isa copy_isa_avx512;
#endif

/*
 * Entry points of one ISA around its body (copy_body.h): the entries
 * count the path and may route to the large path; the raw bodies (for the
 * validator) do neither. The body tests sizes first, so the small and
 * medium copies pay for no threshold load.
 */
#define VSW_COPY_DEFINE_ISA(isa, name_, needs_, large_)                        \
	static void copy_##isa##_aligned(void *dst, const void *src, size_t n) \
	{                                                                      \
		copy_body(dst, src, n, true, true, (large_));                  \
	}                                                                      \
	static void copy_##isa##_generic(void *dst, const void *src, size_t n) \
	{                                                                      \
		copy_body(dst, src, n, false, true, (large_));                 \
	}                                                                      \
	static void copy_##isa##_aligned_raw(                                  \
		void *dst, const void *src, size_t n)                          \
	{                                                                      \
		copy_body(dst, src, n, true, false, false);                    \
	}                                                                      \
	static void copy_##isa##_generic_raw(                                  \
		void *dst, const void *src, size_t n)                          \
	{                                                                      \
		copy_body(dst, src, n, false, false, false);                   \
	}                                                                      \
	const struct vsw_copy_ops vsw_copy_ops_##isa = {                       \
		copy_##isa##_aligned, copy_##isa##_generic};                   \
	const struct vsw_copy_isa copy_isa_##isa = {                           \
		.name = (name_),                                               \
		.needs = (needs_),                                             \
		.large = (large_),                                             \
		.ops = &vsw_copy_ops_##isa,                                    \
		.raw = {copy_##isa##_aligned_raw, copy_##isa##_generic_raw},   \
	}

#endif /* VSW_COPY_PRIV_H */
