/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the libFuzzer targets: an invariant check that stays on in every
 * build (assert() would vanish with NDEBUG) and aborts, so libFuzzer saves
 * the input as a crash.
 */
#ifndef VSW_FUZZ_CHECK_H
#define VSW_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define FZ_CHECK(cond)                                                         \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: invariant failed: %s\n",      \
				__FILE__, __LINE__, #cond);                    \
			abort();                                               \
		}                                                              \
	} while (0)

#endif /* VSW_FUZZ_CHECK_H */
