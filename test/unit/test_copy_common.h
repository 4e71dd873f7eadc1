/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What test_copy.c and test_copy_edges.c both do with the copy engine:
 * step through the available implementations, selecting each, and run a
 * sweep once more with the large path off. Header-only (cmocka asserts).
 */
#ifndef TEST_COPY_COMMON_H
#define TEST_COPY_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vsw/copy.h>

/*
 * From *idx on, the next implementation this CPU runs: selects it, sets
 * *name and *idx, returns true; false when none is left. Use as
 * for (i = 0; tcc_impl_next(&i, &name); i++).
 */
static inline bool
tcc_impl_next(unsigned *idx, const char **name)
{
	bool avail;

	for (; *idx < vsw_copy_impl_count(); (*idx)++) {
		assert_int_equal(vsw_copy_impl_info(*idx, name, &avail), 0);
		if (!avail)
			continue;
		assert_int_equal(vsw_copy_impl_set(*name), 0);
		assert_string_equal(vsw_copy_impl_get(), *name);
		return true;
	}
	return false;
}

/* Run fn(ctx) with the large path off (where the CPU has one), then put
 * the threshold back; false (fn not run) when there is no large path. */
static inline bool
tcc_large_off(void (*fn)(void *ctx), void *ctx)
{
	size_t large = vsw_copy_large_min_get();

	if (large == SIZE_MAX)
		return false;
	assert_int_equal(vsw_copy_large_min_set(SIZE_MAX), 0);
	fn(ctx);
	assert_int_equal(vsw_copy_large_min_set(large), 0);
	return true;
}

#endif /* TEST_COPY_COMMON_H */
