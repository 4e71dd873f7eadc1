/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The PMD watchdog (issue 10, the call eventfd residual): a PMD that makes
 * a syscall on an fd a peer shares (the call eventfd write in
 * vport_notify) publishes "inside since TSC t, on what" in its slot; one
 * watchdog thread (switch/core/watchdog.c) that sees a slot inside for
 * longer than its bound sends that thread VSW_WATCHDOG_SIGNAL, whose
 * handler does nothing and is installed without SA_RESTART: the blocked
 * write returns EINTR, and the caller, seeing its slot marked, gives up on
 * that fd. The eventfd's O_NONBLOCK belongs to the file the peer shares:
 * it can clear it and saturate the counter, and vsw cannot make the write
 * non-blocking from its side (doc/security.md).
 *
 * The slot functions are header-only: vhost/vport publishes, switch/core
 * watches, and neither library links the other (vswd wires a PMD's slot
 * to vport through vsw_switch_config.pmd_thread_init).
 *
 * Protocol on `since`: 0 outside; the TSC at entry with bit 0 clear while
 * inside; bit 0 set by the watchdog (compare-and-swap on the value it saw,
 * so a later syscall with a new TSC is never marked). Only the slot's own
 * thread enters and leaves.
 */
#ifndef VSW_WATCHDOG_H
#define VSW_WATCHDOG_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_cycles.h>

struct vsw_watchdog_slot {
	uint64_t since;	  /* see above */
	uint64_t entries; /* syscalls entered (the slot's thread only) */
	const void *what; /* the caller's (a vport queue), while inside */
	pthread_t thread; /* the slot's thread, valid once armed */
	bool armed;	  /* thread set (atomic) */
	uint64_t signals; /* sent to this slot (watchdog thread only) */
};

/* Reserved for the watchdog: realtime, no one else in vswd uses it. */
#define VSW_WATCHDOG_SIGNAL (SIGRTMIN + 2)

/* Default bound: a write on a non-blocking eventfd takes microseconds. */
#define VSW_WATCHDOG_BOUND_US 2000

/*
 * The thread's back-off: after VSW_WATCHDOG_QUIET_CHECKS checks in a row
 * that saw no watched syscall (no slot inside, no entry since the check
 * before), it checks every VSW_WATCHDOG_IDLE_US instead of every period;
 * the first check that sees one brings the period back. Why: with polling
 * guests (no interrupts, so no call eventfd writes) a 1 kHz wake-up is
 * pure disturbance to whatever shares its CPU, on a small host the
 * guest's vCPU: on a 2-CPU AMD Zen 4 it held vswd's PVP loop in its slow
 * state (doc/benchmarks.md). The price: the first stuck write after a
 * quiet spell is interrupted within the idle period plus the bound
 * instead of the period plus the bound.
 */
#define VSW_WATCHDOG_QUIET_CHECKS 100
#define VSW_WATCHDOG_IDLE_US 20000

/* The calling thread owns s from now on (before its first enter). */
static inline void
vsw_watchdog_arm(struct vsw_watchdog_slot *s)
{
	s->thread = pthread_self();
	__atomic_store_n(&s->armed, true, __ATOMIC_RELEASE);
}

/* Around one syscall on a peer's fd: three relaxed stores (the syscall
 * itself orders them before anything it does). s may be NULL (a thread
 * with no slot: not watched). */
static inline void
vsw_watchdog_enter(struct vsw_watchdog_slot *s, const void *what)
{
	if (s == NULL)
		return;
	__atomic_store_n(&s->entries, s->entries + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->what, what, __ATOMIC_RELAXED);
	__atomic_store_n(&s->since, rte_rdtsc() & ~1ull, __ATOMIC_RELAXED);
}

/* Leave; true when the watchdog signalled this syscall (it was stuck). */
static inline bool
vsw_watchdog_leave(struct vsw_watchdog_slot *s)
{
	if (s == NULL)
		return false;
	return (__atomic_exchange_n(&s->since, 0, __ATOMIC_RELAXED) & 1) != 0;
}

/*
 * The watchdog's decision for one slot at TSC now: true (and the slot
 * marked) when it is inside a syscall that began more than bound TSC
 * ticks ago; the caller then signals s->thread. A slot already marked
 * and still inside is signalled again (the first signal may have come
 * between the entry and the syscall).
 */
bool vsw_watchdog_check(
	struct vsw_watchdog_slot *s, uint64_t now, uint64_t bound);

/* Install the no-op handler (no SA_RESTART). 0 or -errno. */
int vsw_watchdog_install(void);

struct vsw_watchdog;
/*
 * Start a thread that checks slots[0..n) every period_us (backing off
 * while they are quiet, above) and signals those stuck for more than
 * bound_us. The slots must outlive it. NULL and
 * errno on failure.
 */
struct vsw_watchdog *vsw_watchdog_start(struct vsw_watchdog_slot *const *slots,
	unsigned n, uint32_t bound_us, uint32_t period_us);
/* The thread's checks so far (tests: its back-off). */
uint64_t vsw_watchdog_checks(const struct vsw_watchdog *wd);
/* Stop and join the thread (NULL: nothing). */
void vsw_watchdog_stop(struct vsw_watchdog *wd);

#endif /* VSW_WATCHDOG_H */
