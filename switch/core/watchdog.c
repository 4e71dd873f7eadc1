/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PMD watchdog thread (vsw/watchdog.h): one for all PMDs, asleep
 * between checks, never on the data path. What the signal can hit: it is
 * sent only to a thread whose slot says it is inside a watched syscall
 * for longer than the bound; at worst (the thread left just after the
 * check) it lands on that thread's next instructions, where the no-op
 * handler changes nothing, or shortens the next idle nanosleep of a PMD
 * (pmd.c sleeps in steps and goes on). A watched caller retries an EINTR
 * its slot was not marked for (vport_notify).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>

#include <vsw/watchdog.h>

struct vsw_watchdog {
	pthread_t thread;
	bool stop; /* atomic */
	uint64_t bound;
	struct timespec period;
	struct timespec idle; /* the back-off's, never below period */
	uint64_t checks;      /* atomic: written by the thread */
	unsigned n;
	struct {
		struct vsw_watchdog_slot *slot;
		uint64_t seen; /* its entries at the last check */
	} w[];
};

bool
vsw_watchdog_check(struct vsw_watchdog_slot *s, uint64_t now, uint64_t bound)
{
	uint64_t t = __atomic_load_n(&s->since, __ATOMIC_RELAXED);

	if (t == 0 || !__atomic_load_n(&s->armed, __ATOMIC_ACQUIRE))
		return false;
	/* a TSC read on another core may lag the entry's a little */
	if (now <= (t & ~1ull) || now - (t & ~1ull) <= bound)
		return false;
	return __atomic_compare_exchange_n(&s->since, &t, t | 1, false,
		__ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static void
on_signal(int sig)
{
	(void)sig; /* the point is the EINTR */
}

int
vsw_watchdog_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = 0; /* no SA_RESTART: the blocked syscall must return */
	sigemptyset(&sa.sa_mask);
	return sigaction(VSW_WATCHDOG_SIGNAL, &sa, NULL) == 0 ? 0 : -errno;
}

/* One pass over the slots: signal the stuck; true if any slot is inside
 * a watched syscall or entered one since the last pass. */
static bool
check_slots(struct vsw_watchdog *wd)
{
	bool active = false;
	unsigned i;

	for (i = 0; i < wd->n; i++) {
		struct vsw_watchdog_slot *s = wd->w[i].slot;
		uint64_t e = __atomic_load_n(&s->entries, __ATOMIC_RELAXED);

		if (e != wd->w[i].seen ||
			__atomic_load_n(&s->since, __ATOMIC_RELAXED) != 0)
			active = true;
		wd->w[i].seen = e;
		if (vsw_watchdog_check(s, rte_rdtsc(), wd->bound) &&
			pthread_kill(s->thread, VSW_WATCHDOG_SIGNAL) == 0)
			__atomic_fetch_add(&s->signals, 1, __ATOMIC_RELAXED);
	}
	return active;
}

static void *
watch(void *arg)
{
	struct vsw_watchdog *wd = arg;
	unsigned quiet = 0;

	while (!__atomic_load_n(&wd->stop, __ATOMIC_ACQUIRE)) {
		nanosleep(quiet < VSW_WATCHDOG_QUIET_CHECKS ? &wd->period
							    : &wd->idle,
			NULL);
		if (check_slots(wd))
			quiet = 0;
		else if (quiet < VSW_WATCHDOG_QUIET_CHECKS)
			quiet++;
		__atomic_store_n(&wd->checks, wd->checks + 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

uint64_t
vsw_watchdog_checks(const struct vsw_watchdog *wd)
{
	return __atomic_load_n(&wd->checks, __ATOMIC_RELAXED);
}

struct vsw_watchdog *
vsw_watchdog_start(struct vsw_watchdog_slot *const *slots, unsigned n,
	uint32_t bound_us, uint32_t period_us)
{
	struct vsw_watchdog *wd;
	sigset_t all, old;
	unsigned i;
	int rc;

	/* no TSC rate (EAL not initialised): every bound would be 0 */
	if (bound_us == 0 || period_us == 0 || period_us >= 1000000 ||
		rte_get_tsc_hz() < 1000000) {
		errno = EINVAL;
		return NULL;
	}
	rc = vsw_watchdog_install();
	if (rc != 0) {
		errno = -rc;
		return NULL;
	}
	wd = calloc(1, sizeof(*wd) + n * sizeof(wd->w[0]));
	if (wd == NULL)
		return NULL;
	wd->bound = rte_get_tsc_hz() / 1000000 * bound_us;
	wd->period.tv_nsec = (long)period_us * 1000;
	wd->idle.tv_nsec = (long)(period_us > VSW_WATCHDOG_IDLE_US
					   ? period_us
					   : VSW_WATCHDOG_IDLE_US) *
			   1000;
	wd->n = n;
	for (i = 0; i < n; i++)
		wd->w[i].slot = slots[i];
	/* the thread takes no process signal (SIGTERM etc. stay vswd's) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&wd->thread, NULL, watch, wd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		free(wd);
		errno = rc;
		return NULL;
	}
	pthread_setname_np(wd->thread, "vsw-watchdog");
	return wd;
}

void
vsw_watchdog_stop(struct vsw_watchdog *wd)
{
	if (wd == NULL)
		return;
	__atomic_store_n(&wd->stop, true, __ATOMIC_RELEASE);
	pthread_join(wd->thread, NULL);
	free(wd);
}
