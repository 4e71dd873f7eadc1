/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw's checks on the fds a vhost-user front-end hands over
 * (vhost/vport/vport_fd.c), on real fds of every kind: eventfds, pipes,
 * sockets, memfds, a file on a disk file system. No EAL, no librte_vhost:
 * the checks see the message context the pre-message hook gets.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "vport_msg_table.h"
#include "vport_priv.h"

#define MEM (1u << 20)

static struct vport_msg_ctx ctx;

static void
ctx_vring(uint32_t req, uint32_t idx, int fd)
{
	memset(&ctx, 0xff, sizeof(ctx));
	ctx.msg.request = req;
	ctx.msg.flags = 1;
	ctx.msg.size = 8;
	ctx.msg.u.u64 = idx | (fd < 0 ? VPORT_MSG_VRING_NOFD : 0);
	ctx.fd_num = fd < 0 ? 0 : 1;
	ctx.fds[0] = fd;
}

static int
memfd(uint64_t size)
{
	int fd = memfd_create("test_vport_fd", MFD_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	return fd;
}

static bool
is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0 || errno != EBADF;
}

/* kick/call/err: eventfds only; the call fd comes out non-blocking. */
static void
test_vring_fds(void **state)
{
	static const uint32_t reqs[] = {VPORT_MSG_SET_VRING_KICK,
		VPORT_MSG_SET_VRING_CALL, VPORT_MSG_SET_VRING_ERR};
	int efd, p[2], sp[2], mfd, i;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	mfd = memfd(4096);
	for (i = 0; i < 3; i++) {
		efd = eventfd(0, EFD_CLOEXEC); /* blocking, as a peer may */
		ctx_vring(reqs[i], 1, efd);
		assert_null(vport_fds_check(&ctx));
		if (reqs[i] == VPORT_MSG_SET_VRING_CALL)
			assert_true(fcntl(efd, F_GETFL) & O_NONBLOCK);
		close(efd);
		ctx_vring(reqs[i], 1, -1); /* NOFD, no fd: fine */
		assert_null(vport_fds_check(&ctx));
		ctx_vring(reqs[i], 1, p[1]); /* a pipe */
		assert_non_null(vport_fds_check(&ctx));
		ctx_vring(reqs[i], 1, sp[0]); /* a socket */
		assert_non_null(vport_fds_check(&ctx));
		ctx_vring(reqs[i], 1, mfd); /* a regular file */
		assert_non_null(vport_fds_check(&ctx));
		ctx_vring(reqs[i], 1, mfd); /* NOFD but an fd */
		ctx.msg.u.u64 |= VPORT_MSG_VRING_NOFD;
		assert_non_null(vport_fds_check(&ctx));
		ctx_vring(reqs[i], 1, -1); /* an fd promised, none */
		ctx.msg.u.u64 &= ~VPORT_MSG_VRING_NOFD;
		assert_non_null(vport_fds_check(&ctx));
	}
	/* a saturated non-blocking call eventfd: EAGAIN, never a sleep */
	efd = eventfd(0, EFD_CLOEXEC);
	assert_null(vport_callfd_prepare(efd));
	{
		uint64_t v = UINT64_MAX - 1, one = 1;

		assert_int_equal(write(efd, &v, 8), 8);
		assert_int_equal(write(efd, &one, 8), -1);
		assert_int_equal(errno, EAGAIN);
	}
	close(efd);
	close(p[0]);
	close(p[1]);
	close(sp[0]);
	close(sp[1]);
	close(mfd);
}

static void
ctx_mem(uint32_t n, uint64_t size, uint64_t offset, int fd)
{
	uint32_t i;

	memset(&ctx, 0, sizeof(ctx));
	ctx.msg.request = VPORT_MSG_SET_MEM_TABLE;
	ctx.msg.size = 8 + 32 * n;
	ctx.msg.u.mem.nregions = n;
	for (i = 0; i < n; i++) {
		ctx.msg.u.mem.r[i] = (struct vport_msg_region){
			0x100000ull * (i + 1), size, 0x7f0000000000ull, offset};
		ctx.fds[i] = fd;
	}
	ctx.fd_num = (int)n;
}

/* Regions: regular files on tmpfs/hugetlbfs, each region inside. */
static void
test_region_fds(void **state)
{
	char name[] = "/tmp/test_vport_fd-XXXXXX";
	int mfd = memfd(MEM), dfd = mkstemp(name), p[2];

	(void)state;
	assert_true(dfd >= 0);
	unlink(name);
	assert_int_equal(ftruncate(dfd, MEM), 0);
	assert_int_equal(pipe(p), 0);
	ctx_mem(1, MEM, 0, mfd);
	assert_null(vport_fds_check(&ctx));
	ctx_mem(8, MEM / 8, MEM / 8 * 7, mfd); /* the last eighth, 8 times */
	assert_null(vport_fds_check(&ctx));
	ctx_mem(1, MEM + 1, 0, mfd); /* one byte past the end */
	assert_non_null(vport_fds_check(&ctx));
	ctx_mem(1, 4096, MEM, mfd); /* starts at the end */
	assert_non_null(vport_fds_check(&ctx));
	ctx_mem(1, 4096, UINT64_MAX - 0xfff, mfd); /* offset + size wraps */
	assert_non_null(vport_fds_check(&ctx));
	ctx_mem(1, MEM, 0, dfd); /* a disk file (when /tmp is not tmpfs) */
	assert_true(vport_fds_check(&ctx) != NULL ||
		    vport_region_fd_check(dfd, 0, MEM) == NULL);
	ctx_mem(1, 4096, 0, p[0]); /* a pipe */
	assert_non_null(vport_fds_check(&ctx));
	ctx_mem(2, 4096, 0, mfd); /* one fd short */
	ctx.fd_num = 1;
	assert_non_null(vport_fds_check(&ctx));
	/* an fd on a request that takes none */
	memset(&ctx, 0, sizeof(ctx));
	ctx.msg.request = VPORT_MSG_SET_VRING_NUM;
	ctx.msg.size = 8;
	ctx.fd_num = 1;
	ctx.fds[0] = mfd;
	assert_non_null(vport_fds_check(&ctx));
	close(mfd);
	close(dfd);
	close(p[0]);
	close(p[1]);
}

/* A refused message's fds are ours to close: all of them, once. */
static void
test_fds_close(void **state)
{
	int i, fds[8];

	(void)state;
	memset(&ctx, 0, sizeof(ctx));
	for (i = 0; i < 8; i++)
		ctx.fds[i] = fds[i] = eventfd(0, EFD_CLOEXEC);
	ctx.fds[3] = -1; /* librte_vhost marks closed ones -1 */
	close(fds[3]);
	ctx.fd_num = 8;
	vport_fds_close(&ctx);
	assert_int_equal(ctx.fd_num, 0);
	for (i = 0; i < 8; i++) {
		assert_false(is_open(fds[i]));
		assert_int_equal(ctx.fds[i], -1);
	}
	vport_fds_close(&ctx); /* again: nothing */
}

/* The port's accepted connection is found and made non-blocking; replies
 * a peer leaves unread are noticed well before the socket buffer fills. */
static void
test_conn(void **state)
{
	struct vsw_vport port;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int l, c, a, fd;
	char buf[256];

	(void)state;
	memset(&port, 0, sizeof(port));
	snprintf(port.path, sizeof(port.path), "/tmp/test_vport_fd.%d.sock",
		(int)getpid());
	unlink(port.path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.100s", port.path);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 4), 0);
	assert_int_equal(vport_conn_nonblock(&port), -ENOENT);
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
	a = accept(l, NULL, NULL);
	fd = vport_conn_nonblock(&port);
	assert_int_equal(fd, a);
	assert_true(fcntl(a, F_GETFL) & O_NONBLOCK);
	assert_false(fcntl(l, F_GETFL) & O_NONBLOCK);
	assert_false(fcntl(c, F_GETFL) & O_NONBLOCK);
	/* client mode: the socket whose peer is the path */
	port.cfg.client = true;
	assert_int_equal(vport_conn_nonblock(&port), c);
	assert_false(vport_conn_backlogged(a));
	assert_false(vport_conn_backlogged(-1));
	memset(buf, 0, sizeof(buf));
	while (!vport_conn_backlogged(a))
		assert_int_equal(send(a, buf, 20, 0), 20); /* a reply */
	while (recv(c, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	assert_false(vport_conn_backlogged(a));
	close(a);
	close(c);
	close(l);
	unlink(port.path);
}

/* A fresh socket (mode 0600, ours) at path: bound under umask 0177. */
static int
fresh_sock(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	mode_t old = umask(0177);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.100s", path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	umask(old);
	return fd;
}

/*
 * Socket owner/mode never through a symlink or onto another file: the
 * path swapped for a symlink to a file (what an attacker with write
 * access to the directory does between bind and chown), for a hard link
 * to one, or for a socket that is not fresh, and nothing changes.
 */
static void
test_sock_perms(void **state)
{
	char dir[] = "/tmp/test_vport_fd-perms-XXXXXX", sock[80], target[80];
	uid_t other = geteuid() == 0 ? 4242 : (uid_t)-1;
	struct stat st;
	int s, f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/s", dir);
	snprintf(target, sizeof(target), "%s/target", dir);
	f = open(target, O_CREAT | O_WRONLY, 0644);
	assert_true(f >= 0);
	close(f);
	/* the well-behaved case: mode set, owner set when we may */
	s = fresh_sock(sock);
	assert_int_equal(vport_sock_perms(sock, other, (gid_t)-1, 0660), 0);
	assert_int_equal(lstat(sock, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0660);
	if (other != (uid_t)-1)
		assert_int_equal(st.st_uid, other);
	/* no longer fresh (0660 now, maybe not ours): refused */
	assert_int_equal(vport_sock_perms(sock, (uid_t)-1, (gid_t)-1, 0666),
		-EPERM);
	close(s);
	unlink(sock);
	/* a symlink to a file in its place */
	assert_int_equal(symlink(target, sock), 0);
	assert_int_equal(vport_sock_perms(sock, other, 0, 0666), -ELOOP);
	unlink(sock);
	/* a regular file of ours at 0600 in its place */
	f = open(sock, O_CREAT | O_WRONLY, 0600);
	close(f);
	assert_int_equal(vport_sock_perms(sock, other, 0, 0666), -EPERM);
	unlink(sock);
	/* a hard link to the file */
	assert_int_equal(chmod(target, 0600), 0);
	assert_int_equal(link(target, sock), 0);
	assert_int_equal(vport_sock_perms(sock, other, 0, 0666), -EPERM);
	unlink(sock);
	assert_int_equal(vport_sock_perms(sock, other, 0, 0666), -ENOENT);
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, geteuid());
	unlink(target);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vring_fds),
		cmocka_unit_test(test_region_fds),
		cmocka_unit_test(test_fds_close),
		cmocka_unit_test(test_conn),
		cmocka_unit_test(test_sock_perms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
