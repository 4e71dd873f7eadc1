/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PMD watchdog (vsw/watchdog.h, switch/core/watchdog.c): the decision
 * at the exact bound (bound - 1, bound, bound + 1 ticks), a slot outside
 * a syscall or not armed is never marked, and with the real thread and
 * signal: a blocked read() between enter and leave comes back with EINTR
 * and the mark, while a thread blocked outside enter/leave is left alone;
 * the back-off: quiet slots are checked every VSW_WATCHDOG_IDLE_US after
 * VSW_WATCHDOG_QUIET_CHECKS checks, entries bring the period back, and a
 * read blocked after a quiet spell is still interrupted.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <vsw/watchdog.h>

#include "tl_mbuf.h"

static void
slot_init(struct vsw_watchdog_slot *s, uint64_t since)
{
	memset(s, 0, sizeof(*s));
	vsw_watchdog_arm(s);
	s->since = since;
}

static void
test_bound_exact(void **state)
{
	const uint64_t t = 1000000, bound = 4000;
	struct vsw_watchdog_slot s;

	(void)state;
	slot_init(&s, t);
	assert_false(vsw_watchdog_check(&s, t + bound - 1, bound));
	assert_false(vsw_watchdog_check(&s, t + bound, bound));
	assert_int_equal(s.since, t);
	assert_true(vsw_watchdog_check(&s, t + bound + 1, bound));
	assert_int_equal(s.since, t | 1);
	/* still inside: signalled again, the mark stays */
	assert_true(vsw_watchdog_check(&s, t + 2 * bound, bound));
	assert_int_equal(s.since, t | 1);
	assert_true(vsw_watchdog_leave(&s));
	assert_int_equal(s.since, 0);
}

static void
test_outside_never(void **state)
{
	struct vsw_watchdog_slot s;
	uint64_t now;

	(void)state;
	slot_init(&s, 0);
	for (now = 0; now < 1ull << 40; now = now * 3 + 7)
		assert_false(vsw_watchdog_check(&s, now, 10));
	assert_false(vsw_watchdog_check(&s, UINT64_MAX, 0));
	/* inside but not armed (no thread to signal) */
	s.since = 1000;
	__atomic_store_n(&s.armed, false, __ATOMIC_RELEASE);
	assert_false(vsw_watchdog_check(&s, 1ull << 40, 10));
	/* a TSC read behind the entry's (another core) */
	slot_init(&s, 1000);
	assert_false(vsw_watchdog_check(&s, 999, 0));
	assert_false(vsw_watchdog_check(&s, 1000, 0));
	assert_true(vsw_watchdog_check(&s, 1001, 0));
	/* enter/leave: the entry is even, leave unmarked is false */
	slot_init(&s, 0);
	vsw_watchdog_enter(&s, &s);
	assert_int_equal(s.since & 1, 0);
	assert_ptr_equal(s.what, &s);
	assert_false(vsw_watchdog_leave(&s));
	assert_false(vsw_watchdog_leave(NULL));
}

struct blocked {
	struct vsw_watchdog_slot slot;
	int fd;
	bool watched;
	bool done; /* atomic */
	ssize_t n;
	int err;
	bool fired;
};

static void *
reader(void *arg)
{
	struct blocked *b = arg;
	char c;

	vsw_watchdog_arm(&b->slot);
	if (b->watched)
		vsw_watchdog_enter(&b->slot, b);
	b->n = read(b->fd, &c, 1);
	b->err = errno;
	b->fired = b->watched && vsw_watchdog_leave(&b->slot);
	__atomic_store_n(&b->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Run a reader on an empty pipe under a watchdog (bound 2 ms, period
 * 1 ms), quiet_ms after the watchdog started; after wait_ms, release it
 * with a byte if it is still blocked. */
static void
run_reader_after(struct blocked *b, bool watched, int wait_ms, int quiet_ms)
{
	struct vsw_watchdog_slot *slots[1] = {&b->slot};
	struct vsw_watchdog *wd;
	pthread_t th;
	int p[2], i;

	memset(b, 0, sizeof(*b));
	assert_int_equal(pipe(p), 0);
	b->fd = p[0];
	b->watched = watched;
	wd = vsw_watchdog_start(slots, 1, 2000, 1000);
	assert_non_null(wd);
	usleep(quiet_ms * 1000);
	assert_int_equal(pthread_create(&th, NULL, reader, b), 0);
	for (i = 0; i < wait_ms && !__atomic_load_n(&b->done, __ATOMIC_ACQUIRE);
		i++)
		usleep(1000);
	if (!__atomic_load_n(&b->done, __ATOMIC_ACQUIRE))
		assert_int_equal(write(p[1], "x", 1), 1);
	pthread_join(th, NULL);
	vsw_watchdog_stop(wd);
	close(p[0]);
	close(p[1]);
}

static void
run_reader(struct blocked *b, bool watched, int wait_ms)
{
	run_reader_after(b, watched, wait_ms, 0);
}

static void
test_signal_interrupts(void **state)
{
	struct blocked b;

	(void)state;
	run_reader(&b, true, 2000);
	assert_int_equal(b.n, -1); /* not the releasing byte */
	assert_int_equal(b.err, EINTR);
	assert_true(b.fired);
	assert_true(b.slot.signals >= 1);
}

static void
test_unwatched_left_alone(void **state)
{
	struct blocked b;

	(void)state;
	run_reader(&b, false, 100); /* 50 bounds */
	assert_int_equal(b.n, 1);   /* released by the byte, not a signal */
	assert_int_equal(b.slot.signals, 0);
}

/* After 300 ms with no watched syscall the thread is on its idle period
 * (the first 100 checks took ~100 ms): the blocked read is still
 * interrupted, within the idle period plus the bound. */
static void
test_signal_after_quiet(void **state)
{
	struct blocked b;

	(void)state;
	run_reader_after(&b, true, 2000, 300);
	assert_int_equal(b.n, -1);
	assert_int_equal(b.err, EINTR);
	assert_true(b.fired);
	assert_true(b.slot.signals >= 1);
}

/*
 * The wake-up rate: 600 ms quiet takes ~100 checks at the 1 ms period,
 * then ~25 at the 20 ms idle one (at most 300: a thread that never backs
 * off makes ~600 here, fewer only if the machine delays its sleeps);
 * then 600 ms of entries every ~1 ms (outside any syscall: nothing to
 * signal) bring the period back: ~580 checks (at least 150, where the
 * idle period would give ~30).
 */
static void
test_backoff(void **state)
{
	struct vsw_watchdog_slot slot, *slots[1] = {&slot};
	struct vsw_watchdog *wd;
	uint64_t quiet, busy;
	int i;

	(void)state;
	memset(&slot, 0, sizeof(slot));
	vsw_watchdog_arm(&slot);
	assert_true(VSW_WATCHDOG_IDLE_US >= 10 * 1000);
	wd = vsw_watchdog_start(slots, 1, 2000, 1000);
	assert_non_null(wd);
	usleep(600 * 1000);
	quiet = vsw_watchdog_checks(wd);
	for (i = 0; i < 600; i++) {
		vsw_watchdog_enter(&slot, &slot);
		assert_false(vsw_watchdog_leave(&slot));
		usleep(1000);
	}
	busy = vsw_watchdog_checks(wd) - quiet;
	vsw_watchdog_stop(wd);
	printf("# checks: %llu in 600 ms quiet, %llu in ~600 ms busy\n",
		(unsigned long long)quiet, (unsigned long long)busy);
	assert_true(quiet >= 50 && quiet <= 300);
	assert_true(busy >= 150);
	assert_int_equal(slot.entries, 600);
	assert_int_equal(slot.signals, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound_exact),
		cmocka_unit_test(test_outside_never),
		cmocka_unit_test(test_signal_interrupts),
		cmocka_unit_test(test_unwatched_left_alone),
		cmocka_unit_test(test_signal_after_quiet),
		cmocka_unit_test(test_backoff),
	};

	if (tl_eal_init("test_watchdog", "vsw_test_watchdog") < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
