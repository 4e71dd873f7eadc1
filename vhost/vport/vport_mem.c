/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Guest memory that changes under vsw after it was checked (issue 10,
 * item 4). A region fd passed vport_region_fd_check (a tmpfs or hugetlbfs
 * file holding the region), but the front-end keeps the file: it can
 * truncate it afterwards, and touching a mapped page past the new end is
 * SIGBUS, on a PMD or on librte_vhost's event thread.
 *
 * - Seals: a memfd that still accepts seals gets F_SEAL_SHRINK before
 *   its size is checked (the guest's RAM never shrinks while mapped;
 *   QEMU's memory-backend-memfd seals it itself), so the check stays true.
 * - Recovery, for what seals cannot protect (tmpfs files, memfds created
 *   without MFD_ALLOW_SEALING such as DPDK's, hugetlbfs, where a punched
 *   hole may find the pool empty): every port's mappings are registered
 *   here; a SIGBUS (BUS_ADRERR) inside one maps an anonymous page over the
 *   faulting page and returns, so the access completes (reading zeros,
 *   writing into nothing), counts the fault on the port and shuts its
 *   connection down: librte_vhost sees the end of the connection and
 *   withdraws the port's queues as for any disconnect. Any other SIGBUS
 *   goes to the previous handler or the default action. Nothing runs on
 *   the data path for this: a guest-written value was never trusted, so
 *   zeros in the middle of a burst are just another hostile ring, and the
 *   burst's mbufs are accounted as usual (packets in = out + drops).
 *
 * Threads: register/unregister from librte_vhost's event thread under
 * port->lock (slots_lock orders them against each other); the handler on
 * whichever thread faulted, lock-free (a sequence count per slot).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <rte_vhost.h>

#include "vport_priv.h"

/* Every region of every port vsw can hold (256 ports of 8 regions). */
#define GUARD_SLOTS 2048

struct guard_slot {
	uint32_t seq; /* odd while written */
	uintptr_t start, end;
	uintptr_t align; /* page size of the mapping (huge on hugetlbfs) */
	struct vsw_vport *port;
};

static struct guard_slot slots[GUARD_SLOTS];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction bus_prev;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;

bool
vport_region_seal(int fd)
{
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals < 0)
		return false; /* not a memfd-capable file */
	if (!(seals & (F_SEAL_SHRINK | F_SEAL_SEAL)) &&
		fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) == 0)
		seals |= F_SEAL_SHRINK;
	return (seals & F_SEAL_SHRINK) != 0;
}

/* Sealed against shrinking and on tmpfs (a hugetlbfs hole needs a page
 * from the pool at the next fault, which may be empty). */
static bool
region_sealed(int fd)
{
	struct statfs sfs;
	int seals = fcntl(fd, F_GET_SEALS);

	return seals >= 0 && (seals & F_SEAL_SHRINK) &&
	       fstatfs(fd, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC;
}

/* The slot whose range holds a (NULL: none). Async-signal-safe. */
static struct guard_slot *
slot_find(uintptr_t a, struct guard_slot *copy)
{
	uint32_t i, s;

	for (i = 0; i < GUARD_SLOTS; i++) {
		struct guard_slot *g = &slots[i];

		s = __atomic_load_n(&g->seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			continue;
		copy->start = __atomic_load_n(&g->start, __ATOMIC_RELAXED);
		copy->end = __atomic_load_n(&g->end, __ATOMIC_RELAXED);
		copy->align = __atomic_load_n(&g->align, __ATOMIC_RELAXED);
		copy->port = __atomic_load_n(&g->port, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&g->seq, __ATOMIC_RELAXED) != s)
			continue;
		if (copy->port != NULL && a >= copy->start && a < copy->end)
			return g;
	}
	return NULL;
}

static void
slot_write(struct guard_slot *g, uintptr_t start, uintptr_t end,
	uintptr_t align, struct vsw_vport *port)
{
	__atomic_store_n(&g->seq, g->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&g->start, start, __ATOMIC_RELAXED);
	__atomic_store_n(&g->end, end, __ATOMIC_RELAXED);
	__atomic_store_n(&g->align, align, __ATOMIC_RELAXED);
	__atomic_store_n(&g->port, port, __ATOMIC_RELAXED);
	__atomic_store_n(&g->seq, g->seq + 1, __ATOMIC_RELEASE);
}

/* What the handler does with a SIGBUS that is not a guest's. */
static void
bus_chain(int sig, siginfo_t *si, void *uc)
{
	if ((bus_prev.sa_flags & SA_SIGINFO) && bus_prev.sa_sigaction) {
		bus_prev.sa_sigaction(sig, si, uc);
		return;
	}
	if (!(bus_prev.sa_flags & SA_SIGINFO) &&
		bus_prev.sa_handler != SIG_DFL &&
		bus_prev.sa_handler != SIG_IGN) {
		bus_prev.sa_handler(sig);
		return;
	}
	signal(SIGBUS, SIG_DFL);
	/* a fault re-runs the access on return and dies of it; a sent
	 * signal must be sent again (delivered once the handler returns) */
	if (si->si_code <= 0)
		raise(SIGBUS);
}

/* Async-signal-safe throughout: atomics, mmap, fstat, getsockname,
 * shutdown (vport_is_conn). */
static void
bus_handler(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr, page;
	struct guard_slot copy;
	struct vsw_vport *port;
	int saved = errno, fd;

	if (si->si_code != BUS_ADRERR || slot_find(a, &copy) == NULL) {
		bus_chain(sig, si, uc);
		return;
	}
	port = copy.port;
	page = copy.start + ((a - copy.start) & ~(copy.align - 1));
	if (mmap((void *)page, copy.align, PROT_READ | PROT_WRITE,
		    MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0) == MAP_FAILED) {
		bus_chain(sig, si, uc);
		return;
	}
	__atomic_store_n(&port->mem_fault_addr, a, __ATOMIC_RELAXED);
	__atomic_fetch_add(&port->mem_faults, 1, __ATOMIC_RELAXED);
	fd = __atomic_load_n(&port->conn_fd, __ATOMIC_RELAXED);
	/* still the port's connection (not a number reused since) */
	if (fd >= 0 && vport_is_conn(fd, port->path, port->cfg.client))
		shutdown(fd, SHUT_RDWR);
	errno = saved;
}

static void
bus_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = bus_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &bus_prev) != 0)
		rte_log(RTE_LOG_ERR, vport_logtype,
			"vport: SIGBUS handler not installed: %s\n",
			strerror(errno));
}

int
vport_guard_add(
	struct vsw_vport *port, void *addr, uint64_t len, uint64_t align)
{
	uint32_t i;
	int rc = -ENOSPC;

	pthread_once(&bus_once, bus_install);
	if (align == 0 || (align & (align - 1)) ||
		((uintptr_t)addr & (align - 1)) || len == 0)
		return -EINVAL;
	pthread_mutex_lock(&slots_lock);
	for (i = 0; i < GUARD_SLOTS; i++) {
		if (slots[i].port == NULL) {
			slot_write(&slots[i], (uintptr_t)addr,
				(uintptr_t)addr + len, align, port);
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&slots_lock);
	return rc;
}

void
vport_guard_remove(struct vsw_vport *port)
{
	uint32_t i;

	pthread_mutex_lock(&slots_lock);
	for (i = 0; i < GUARD_SLOTS; i++)
		if (slots[i].port == port)
			slot_write(&slots[i], 0, 0, 0, NULL);
	pthread_mutex_unlock(&slots_lock);
}

/*
 * After librte_vhost mapped a memory table (post-message hook of
 * SET_MEM_TABLE, again at device start): the port's mappings replace
 * whatever it had registered; mem_unsealed says how many regions rely on
 * the handler rather than on seals.
 */
int
vport_guard_register(struct vsw_vport *port)
{
	struct rte_vhost_memory *mem = NULL;
	uint32_t i, unsealed = 0;
	struct stat st;
	int rc = 0;

	vport_guard_remove(port);
	if (rte_vhost_get_mem_table(port->vid, &mem) != 0 || mem == NULL)
		return -ENOENT;
	for (i = 0; i < mem->nregions && rc == 0; i++) {
		const struct rte_vhost_mem_region *r = &mem->regions[i];

		if (fstat(r->fd, &st) != 0) {
			rc = -errno;
			break;
		}
		unsealed += !region_sealed(r->fd);
		rc = vport_guard_add(port, r->mmap_addr, r->mmap_size,
			(uint64_t)st.st_blksize);
	}
	free(mem);
	port->mem_unsealed = unsealed;
	if (rc != 0) {
		vport_guard_remove(port);
		VPORT_LOG(ERR, port, "guest memory not guarded: %s",
			strerror(-rc));
	}
	return rc;
}

void
vport_guard_report(struct vsw_vport *port)
{
	uint64_t n = __atomic_load_n(&port->mem_faults, __ATOMIC_RELAXED);

	if (n == port->mem_faults_logged)
		return;
	vport_log_guest(port,
		"guest memory gone under its mapping at %p (file shrunk?): "
		"%" PRIu64 " fault(s), disconnected",
		(void *)__atomic_load_n(
			&port->mem_fault_addr, __ATOMIC_RELAXED),
		n - port->mem_faults_logged);
	port->mem_faults_logged = n;
}
