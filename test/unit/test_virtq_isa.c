/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The data path per ISA (vhost/virtq/virtq_isa.c): the selection API, and
 * the hook that runs this whole executable under one implementation
 * (VSW_TEST_DATAPATH=NAME, set by test/unit/meson.build once per variant),
 * so every reference test also checks every variant the CPU runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsw/copy.h>

#include "test_virtq.h"

int
test_virtq_datapath_select(void)
{
	const char *want = getenv("VSW_TEST_DATAPATH");
	int rc;

	if (want == NULL || *want == '\0')
		return 0;
	/* the noavx* setups run 'virtq' on their fallback already */
	if (getenv("VSW_CPU_HIDE") != NULL) {
		printf("ok 1 # SKIP datapath %s: runs in the default setup\n"
		       "1..1\n",
			want);
		return 1;
	}
	rc = vsw_virtq_datapath_impl_set(want);
	if (rc == -ENOTSUP) {
		/* TAP: one skipped case, so meson shows why */
		printf("ok 1 # SKIP datapath %s: this CPU cannot run "
		       "it\n1..1\n",
			want);
		return 1;
	}
	if (rc != 0 || strcmp(vsw_virtq_datapath_impl_get(), want) != 0) {
		fprintf(stderr,
			"VSW_TEST_DATAPATH=%s: no such data path (%d)\n", want,
			rc);
		return -1;
	}
	/* the inlined copy runs only under its own ISA's copy engine table */
	if (strcmp(want, "baseline") != 0 && vsw_copy_impl_set(want) != 0) {
		fprintf(stderr, "VSW_TEST_DATAPATH=%s: copy-impl %s refused\n",
			want, want);
		return -1;
	}
	fprintf(stderr, "test_virtq: data path %s, copy %s\n", want,
		vsw_copy_impl_get());
	return 0;
}

/* Names, availability, set/get, and the refusals (nothing changes). */
static void
test_datapath_impl_api(void **state)
{
	const char *name, *before = vsw_virtq_datapath_impl_get();
	unsigned i, n = vsw_virtq_datapath_impl_count();
	bool avail;

	(void)state;
	assert_true(n >= 1);
	assert_int_equal(
		vsw_virtq_datapath_impl_info(n, &name, &avail), -EINVAL);
	for (i = 0; i < n; i++) {
		assert_int_equal(
			vsw_virtq_datapath_impl_info(i, &name, &avail), 0);
		if (i == 0)
			assert_string_equal(name, "baseline");
		if (!avail) {
			/* A refused set leaves the current one in place. */
			const char *cur = vsw_virtq_datapath_impl_get();

			assert_int_equal(
				vsw_virtq_datapath_impl_set(name), -ENOTSUP);
			assert_string_equal(vsw_virtq_datapath_impl_get(), cur);
			continue;
		}
		assert_int_equal(vsw_virtq_datapath_impl_set(name), 0);
		assert_string_equal(vsw_virtq_datapath_impl_get(), name);
	}
	assert_int_equal(vsw_virtq_datapath_impl_set("avx1024"), -EINVAL);
	assert_int_equal(vsw_virtq_datapath_impl_set(NULL), -EINVAL);
	assert_int_equal(vsw_virtq_datapath_impl_set(before), 0);
}

/* "auto" is baseline, "best" the best the CPU runs; a hidden ISA is
 * refused. */
static void
test_datapath_impl_auto(void **state)
{
	const char *before = vsw_virtq_datapath_impl_get();
	uint32_t cpu = vsw_copy_cpu_features();

	(void)state;
	assert_int_equal(vsw_virtq_datapath_impl_set("auto"), 0);
	assert_string_equal(vsw_virtq_datapath_impl_get(), "baseline");
	assert_int_equal(vsw_virtq_datapath_impl_set("best"), 0);
	assert_string_equal(vsw_virtq_datapath_impl_get(),
		cpu & VSW_COPY_CPU_AVX512 ? "avx512"
		: cpu & VSW_COPY_CPU_AVX2 ? "avx2"
		: cpu & VSW_COPY_CPU_SSE2 ? "sse2"
					  : "baseline");
	vsw_copy_cpu_mask_set(VSW_COPY_CPU_AVX512 | VSW_COPY_CPU_AVX2);
	assert_int_equal(vsw_virtq_datapath_impl_set("avx512"), -ENOTSUP);
	assert_int_equal(vsw_virtq_datapath_impl_set("avx2"), -ENOTSUP);
	assert_int_equal(vsw_virtq_datapath_impl_set("best"), 0);
	assert_string_equal(vsw_virtq_datapath_impl_get(),
		cpu & VSW_COPY_CPU_SSE2 ? "sse2" : "baseline");
	vsw_copy_cpu_mask_set(0);
	assert_int_equal(vsw_virtq_datapath_impl_set(before), 0);
}

/* An ISA build runs only on its own copy table; baseline otherwise. */
static void
test_datapath_impl_effective(void **state)
{
	const char *dp = vsw_virtq_datapath_impl_get();
	const char *copy = vsw_copy_impl_get();
	bool validating = vsw_copy_validator_get();
	const char *isa = NULL, *name;
	unsigned i;
	bool avail;

	(void)state;
	for (i = 1; i < vsw_virtq_datapath_impl_count(); i++)
		if (vsw_virtq_datapath_impl_info(i, &name, &avail) == 0 &&
			avail)
			isa = name;
	if (isa == NULL)
		skip();
	vsw_copy_validator_set(false);
	assert_int_equal(vsw_virtq_datapath_impl_set(isa), 0);
	assert_int_equal(vsw_copy_impl_set(isa), 0);
	assert_string_equal(vsw_virtq_datapath_impl_effective(), isa);
	assert_int_equal(vsw_copy_impl_set("libc"), 0);
	assert_string_equal(vsw_virtq_datapath_impl_effective(), "baseline");
	assert_string_equal(vsw_virtq_datapath_impl_get(), isa);
	assert_int_equal(vsw_copy_impl_set(isa), 0);
	vsw_copy_validator_set(true);
	assert_string_equal(vsw_virtq_datapath_impl_effective(), "baseline");
	vsw_copy_validator_set(validating);
	assert_int_equal(vsw_virtq_datapath_impl_set("baseline"), 0);
	assert_string_equal(vsw_virtq_datapath_impl_effective(), "baseline");
	assert_int_equal(vsw_copy_impl_set(copy), 0);
	assert_int_equal(vsw_virtq_datapath_impl_set(dp), 0);
}

int
test_virtq_isa_run(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_datapath_impl_api),
		cmocka_unit_test(test_datapath_impl_auto),
		cmocka_unit_test(test_datapath_impl_effective),
	};

	return cmocka_run_group_tests_name("virtq_isa", tests, NULL, NULL);
}
