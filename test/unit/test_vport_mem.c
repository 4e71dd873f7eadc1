/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Guest memory that changes under vsw (vhost/vport/vport_mem.c, issue 10
 * item 4): the region file type at the limits, memfds sealed against
 * shrinking before their size is checked, and the SIGBUS guard (a fault
 * in a registered mapping is survived, counted and disconnects the port;
 * any other SIGBUS still kills). The guard tests run in a child each:
 * cmocka swaps SIGBUS handlers around every test.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "vport_msg_table.h"
#include "vport_priv.h"

#define PG 4096u
#define MEM (16 * PG)

static int
memfd(unsigned flags, uint64_t size)
{
	int fd = memfd_create("test_vport_mem", MFD_CLOEXEC | flags);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	return fd;
}

/* Region inside its file: exactly the file, one byte past, offsets. */
static void
test_region_limits(void **state)
{
	int fd = memfd(0, MEM);

	(void)state;
	assert_null(vport_region_fd_check(fd, 0, MEM));
	assert_non_null(vport_region_fd_check(fd, 0, MEM + 1));
	assert_null(vport_region_fd_check(fd, PG, MEM - PG));
	assert_non_null(vport_region_fd_check(fd, PG, MEM - PG + 1));
	assert_null(vport_region_fd_check(fd, MEM - 1, 1));
	assert_non_null(vport_region_fd_check(fd, MEM, 1));
	assert_non_null(vport_region_fd_check(fd, UINT64_MAX, 2));
	close(fd);
}

/* Only tmpfs/hugetlbfs regular files: not a pipe, a socket, an eventfd,
 * a directory, nor a regular file of a disk file system. */
static void
test_region_types(void **state)
{
	char name[] = "test_vport_mem-XXXXXX"; /* the build dir: not tmpfs */
	int p[2], s[2], e = eventfd(0, 0), d = open(".", O_RDONLY), f;
	struct statfs sfs;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	assert_non_null(vport_region_fd_check(p[0], 0, 1));
	assert_non_null(vport_region_fd_check(p[1], 0, 1));
	assert_non_null(vport_region_fd_check(s[0], 0, 1));
	assert_non_null(vport_region_fd_check(e, 0, 1));
	assert_non_null(vport_region_fd_check(d, 0, 1));
	assert_non_null(vport_region_fd_check(-1, 0, 1));
	f = mkstemp(name);
	assert_true(f >= 0);
	unlink(name);
	assert_int_equal(ftruncate(f, MEM), 0);
	assert_int_equal(fstatfs(f, &sfs), 0);
	if (sfs.f_type != 0x01021994 /* TMPFS_MAGIC */)
		assert_non_null(vport_region_fd_check(f, 0, MEM));
	else
		print_message("build dir on tmpfs: disk-file case skipped\n");
	close(p[0]);
	close(p[1]);
	close(s[0]);
	close(s[1]);
	close(e);
	close(d);
	close(f);
}

/* A memfd that takes seals leaves the check unable to shrink; others are
 * left as they are (and accepted: the SIGBUS guard covers them). */
static void
test_region_seals(void **state)
{
	int a = memfd(MFD_ALLOW_SEALING, MEM), b = memfd(0, MEM);
	int c = memfd(MFD_ALLOW_SEALING, MEM);

	(void)state;
	assert_null(vport_region_fd_check(a, 0, MEM));
	assert_true(fcntl(a, F_GET_SEALS) & F_SEAL_SHRINK);
	assert_int_equal(ftruncate(a, PG), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(a, 2 * MEM), 0); /* growing is fine */
	assert_null(vport_region_fd_check(b, 0, MEM));
	assert_int_equal(fcntl(b, F_GET_SEALS), F_SEAL_SEAL);
	assert_false(vport_region_seal(b));
	assert_int_equal(fcntl(c, F_ADD_SEALS, F_SEAL_SEAL), 0);
	assert_null(vport_region_fd_check(c, 0, MEM));
	assert_false(fcntl(c, F_GET_SEALS) & F_SEAL_SHRINK);
	assert_int_equal(ftruncate(c, PG), 0);
	/* sealed even when the size check then fails */
	close(a);
	a = memfd(MFD_ALLOW_SEALING, MEM);
	assert_non_null(vport_region_fd_check(a, 0, MEM + 1));
	assert_true(vport_region_seal(a));
	close(a);
	close(b);
	close(c);
}

/* Run fn in a child; its exit status (or 128 + the signal it died of). */
static int
in_child(int (*fn)(void))
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		signal(SIGBUS, SIG_DFL); /* not cmocka's: the guard chains */
		_exit(fn());
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static struct vsw_vport port;

/* what the handler counted (it runs between our own accesses) */
static uint64_t
faults(void)
{
	return __atomic_load_n(&port.mem_faults, __ATOMIC_SEQ_CST);
}

/* A mapping of a memfd truncated to one page under it. */
static volatile uint8_t *
shrunk_map(void)
{
	int fd = memfd(0, MEM);
	void *m = mmap(NULL, MEM, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED || ftruncate(fd, PG) != 0)
		_exit(90);
	close(fd);
	return m;
}

/* Faults past the end in a registered mapping: survived, counted, read
 * as zeros; the page before the end is untouched. */
static int
child_guarded(void)
{
	volatile uint8_t *m = shrunk_map();

	port.conn_fd = -1;
	m[0] = 7;
	if (vport_guard_add(&port, (void *)m, MEM, PG) != 0)
		return 91;
	if (m[5 * PG + 3] != 0 || faults() != 1)
		return 92;
	if ((uintptr_t)port.mem_fault_addr != (uintptr_t)&m[5 * PG + 3])
		return 93;
	m[MEM - 1] = 1; /* a write, in the last page */
	if (faults() != 2 || m[0] != 7)
		return 94;
	m[MEM - 1] = 2; /* that page is anonymous now: no fault */
	return faults() == 2 ? 0 : 95;
}

/* The same fault once the port removed its ranges: the default action. */
static int
child_removed(void)
{
	volatile uint8_t *m = shrunk_map();

	if (vport_guard_add(&port, (void *)m, MEM, PG) != 0)
		return 91;
	vport_guard_remove(&port);
	return m[5 * PG] == 0 ? 96 : 97;
}

/* One byte past the registered range is not the port's. */
static int
child_past_range(void)
{
	volatile uint8_t *m = shrunk_map();

	if (vport_guard_add(&port, (void *)m, 8 * PG, PG) != 0)
		return 91;
	(void)m[7 * PG + PG - 1]; /* the range's last byte: recovered */
	if (faults() != 1)
		return 92;
	return m[8 * PG] == 0 ? 96 : 97;
}

/* A SIGBUS that was sent, not a fault, is not swallowed either. */
static int
child_sent(void)
{
	volatile uint8_t *m = shrunk_map();

	if (vport_guard_add(&port, (void *)m, MEM, PG) != 0)
		return 91;
	raise(SIGBUS);
	return 98;
}

/* A fault shuts the port's connection down: the peer reads the end. */
static int
child_disconnects(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	volatile uint8_t *m = shrunk_map();
	int l, c, a;
	char b;

	snprintf(port.path, sizeof(port.path), "/tmp/test_vport_mem.%d.sock",
		(int)getpid());
	unlink(port.path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.100s", port.path);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	if (bind(l, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
		listen(l, 1) != 0 ||
		connect(c, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		return 91;
	a = accept(l, NULL, NULL);
	unlink(port.path);
	port.conn_fd = l; /* not the connection: left alone */
	if (vport_guard_add(&port, (void *)m, MEM, PG) != 0)
		return 91;
	(void)m[2 * PG];
	if (recv(c, &b, 1, MSG_DONTWAIT) != -1 || errno != EAGAIN)
		return 92;
	port.conn_fd = a;
	(void)m[3 * PG];
	if (recv(c, &b, 1, MSG_DONTWAIT) != 0 || faults() != 2)
		return 93;
	return 0;
}

static void
test_guard(void **state)
{
	(void)state;
	assert_int_equal(in_child(child_guarded), 0);
	assert_int_equal(in_child(child_removed), 128 + SIGBUS);
	assert_int_equal(in_child(child_past_range), 128 + SIGBUS);
	assert_int_equal(in_child(child_sent), 128 + SIGBUS);
	assert_int_equal(in_child(child_disconnects), 0);
}

/* Bad ranges are refused; the table has room for 256 ports x 8. */
static int
child_slots(void)
{
	static struct vsw_vport many[257];
	static uint8_t page[PG] __attribute__((aligned(PG)));
	int i, j;

	if (vport_guard_add(&port, page, PG, 3 * PG) != -EINVAL ||
		vport_guard_add(&port, page + 1, PG, PG) != -EINVAL ||
		vport_guard_add(&port, page, 0, PG) != -EINVAL)
		return 91;
	for (i = 0; i < 256; i++)
		for (j = 0; j < 8; j++)
			if (vport_guard_add(&many[i], page, PG, PG) != 0)
				return 92;
	if (vport_guard_add(&many[256], page, PG, PG) != -ENOSPC)
		return 93;
	vport_guard_remove(&many[3]);
	for (j = 0; j < 8; j++)
		if (vport_guard_add(&many[256], page, PG, PG) != 0)
			return 94;
	return vport_guard_add(&many[256], page, PG, PG) == -ENOSPC ? 0 : 95;
}

static void
test_guard_slots(void **state)
{
	(void)state;
	assert_int_equal(in_child(child_slots), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_region_limits),
		cmocka_unit_test(test_region_types),
		cmocka_unit_test(test_region_seals),
		cmocka_unit_test(test_guard),
		cmocka_unit_test(test_guard_slots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
