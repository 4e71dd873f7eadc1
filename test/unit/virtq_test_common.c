/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by the split and packed ring tests (virtq_test_common.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "virtq_test_common.h"

void
virtq_stats_expect(const struct vsw_virtq *vq, uint64_t *seen,
	const struct stat_delta *d, size_t n)
{
	bool ok = true;
	uint32_t i;
	size_t j;

	for (i = 0; i < VSW_VIRTQ_STAT__MAX; i++) {
		uint64_t want = 0, got = vsw_virtq_stat(vq, i) - seen[i];

		for (j = 0; j < n; j++)
			if ((uint32_t)d[j].s == i)
				want += d[j].d;
		if (got != want) {
			print_error("counter %s moved by %llu, expected %llu\n",
				vsw_virtq_stat_name(i), (unsigned long long)got,
				(unsigned long long)want);
			ok = false;
		}
		seen[i] = vsw_virtq_stat(vq, i);
	}
	assert_true(ok);
}
