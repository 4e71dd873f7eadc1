/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw-bench-c2c: what one cache line costs to cross between two CPUs, and
 * what a fixed piece of work costs on one, now. Two threads pinned to CPU
 * A and B bounce a counter in one cache line (each waits for the other's
 * value, then writes its own): TSC cycles per round trip = two line
 * transfers. Then a dependent multiply chain on A alone (no sharing) for
 * the core's own speed. A vhost ring moves a few lines per burst between
 * the guest's core and the PMD's, so the loop benchmarks' cycles/packet
 * follow the first figure; the second tells a slow core (a busy
 * hyperthread sibling, a throttled host) from a slow interconnect.
 *
 *   vsw-bench-c2c [CPU_A CPU_B [ROUNDS]]    default 0 1 200000
 *
 * Output, one line: "c2c rtt_cycles=MEDIAN min=MIN p90=P90 work_cycles=W"
 * (median/min/p90 over 50 blocks of ROUNDS/50 round trips each).
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

#define BLOCKS 50

static struct {
	_Alignas(64) volatile uint64_t v;
} line;

static long rounds = 200000;

static int
pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

/* The far side: answers every odd value with the next even one. */
static void *
echo(void *arg)
{
	(void)pin(*(int *)arg); /* unpinned it still answers */
	for (uint64_t want = 1; want < 2 * (uint64_t)rounds; want += 2) {
		while (line.v != want)
			_mm_pause();
		line.v = want + 1;
	}
	return NULL;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A dependent chain the core cannot overlap: cycles per 1000 steps. */
static uint64_t
work_cycles(void)
{
	uint64_t best = UINT64_MAX, x = 12345;

	for (int r = 0; r < 20; r++) {
		uint64_t t0 = __rdtsc();

		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t dt = __rdtsc() - t0;

		if (dt < best)
			best = dt;
	}
	if (x == 42) /* keep the chain */
		puts("");
	return best;
}

int
main(int argc, char **argv)
{
	int a = argc > 2 ? atoi(argv[1]) : 0, b = argc > 2 ? atoi(argv[2]) : 1;
	uint64_t blk[BLOCKS];
	long per;
	pthread_t t;

	if (argc > 3)
		rounds = atol(argv[3]);
	per = rounds / BLOCKS;
	if (per < 1 || pin(a) != 0) {
		fprintf(stderr, "usage: vsw-bench-c2c [CPU_A CPU_B [ROUNDS>=%d]]"
			" (CPU %d usable?)\n", BLOCKS, a);
		return 2;
	}
	rounds = per * BLOCKS;
	if (pthread_create(&t, NULL, echo, &b) != 0)
		return 1;
	uint64_t next = 1;

	for (int k = 0; k < BLOCKS; k++) {
		uint64_t t0 = __rdtsc();

		for (long i = 0; i < per; i++, next += 2) {
			line.v = next;
			while (line.v != next + 1)
				_mm_pause();
		}
		blk[k] = (__rdtsc() - t0) / (uint64_t)per;
	}
	pthread_join(t, NULL);
	qsort(blk, BLOCKS, sizeof(blk[0]), cmp_u64);
	printf("c2c rtt_cycles=%lu min=%lu p90=%lu work_cycles=%lu\n",
		(unsigned long)blk[BLOCKS / 2], (unsigned long)blk[0],
		(unsigned long)blk[BLOCKS * 9 / 10],
		(unsigned long)work_cycles());
	return 0;
}
