/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fds a front-end hands over, checked in the pre-message hook before
 * librte_vhost keeps, maps or closes any of them, and the connection
 * socket itself.
 *
 * - kick, call and error fds must be eventfds. The call fd is the one vsw
 *   writes (from a PMD): it is made non-blocking here, and again at every
 *   queue publication, so a saturated counter is an EAGAIN the PMD counts
 *   (vport_notify) instead of a PMD asleep in write(). A pipe, a socket or
 *   a file in its place is refused.
 * - memory region fds must be regular files on tmpfs (memfd, /dev/shm) or
 *   hugetlbfs, the only files that can back guest RAM without I/O on a
 *   page fault (a FUSE or network file would stall the PMD just as a pipe
 *   does), and each region must lie inside its file; a memfd that takes
 *   seals is sealed against shrinking first (vport_mem.c).
 * - the count must be what the request carries (librte_vhost checks it
 *   only after running parts of its handler, for some requests).
 *
 * A refused message's fds are closed here: returning ERR from the hook
 * keeps librte_vhost's handler (and its close) from running.
 *
 * Threads: librte_vhost's event thread (the hook, new_connection), port
 * lock held; vport_callfd_prepare also from queue publication.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "vport_msg_table.h"
#include "vport_priv.h"

static bool
is_eventfd(int fd)
{
	static const char want[] = "anon_inode:[eventfd]";
	char path[40], link[sizeof(want) + 1];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link));
	return n == (ssize_t)sizeof(want) - 1 && memcmp(link, want, n) == 0;
}

const char *
vport_callfd_prepare(int fd)
{
	int fl;

	if (!is_eventfd(fd))
		return "call fd is not an eventfd";
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (!(fl & O_NONBLOCK) &&
			      fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0))
		return "call fd cannot be made non-blocking";
	return NULL;
}

const char *
vport_region_fd_check(int fd, uint64_t offset, uint64_t size)
{
	struct statfs sfs;
	struct stat st;

	if (fstat(fd, &st) != 0 || fstatfs(fd, &sfs) != 0)
		return "memory table: region fd not stat-able";
	if (!S_ISREG(st.st_mode) ||
		(sfs.f_type != TMPFS_MAGIC && sfs.f_type != HUGETLBFS_MAGIC))
		return "memory table: region fd not a memfd, tmpfs or "
		       "hugetlbfs file";
	/* sealed first, so that the size checked below stays */
	if (vport_region_seal(fd) && fstat(fd, &st) != 0)
		return "memory table: region fd not stat-able";
	if (offset + size < offset || (uint64_t)st.st_size < offset + size)
		return "memory table: region larger than its file";
	return NULL;
}

/* How many fds the message must carry. */
static int
fds_expected(const struct vport_msg_row *row, const struct vport_msg *m)
{
	if (row->flags & VPORT_MSG_F_VRING_FD)
		return (m->u.u64 & VPORT_MSG_VRING_NOFD) ? 0 : 1;
	if (m->request == VPORT_MSG_SET_MEM_TABLE)
		return (int)m->u.mem.nregions;
	return row->fds;
}

const char *
vport_fds_check(const struct vport_msg_ctx *ctx)
{
	const struct vport_msg *m = &ctx->msg;
	const struct vport_msg_row *row = vport_msg_row(m->request);
	const char *why;
	int i;

	/* vport_msg_check passed: row != NULL, offered, sizes right */
	if (ctx->fd_num != fds_expected(row, m))
		return "wrong number of fds for the request";
	if (ctx->fd_num == 0)
		return NULL;
	switch (m->request) {
	case VPORT_MSG_SET_VRING_CALL:
		return vport_callfd_prepare(ctx->fds[0]);
	case VPORT_MSG_SET_VRING_KICK:
	case VPORT_MSG_SET_VRING_ERR:
		return is_eventfd(ctx->fds[0])
			       ? NULL
			       : "kick/error fd is not an eventfd";
	case VPORT_MSG_SET_MEM_TABLE:
		for (i = 0; i < ctx->fd_num; i++) {
			const struct vport_msg_region *r = &m->u.mem.r[i];

			why = vport_region_fd_check(
				ctx->fds[i], r->offset, r->size);
			if (why != NULL)
				return why;
		}
		return NULL;
	default:
		return "fds on a request vsw takes none with";
	}
}

void
vport_fds_close(struct vport_msg_ctx *ctx)
{
	int i;

	for (i = 0; i < ctx->fd_num && i < VPORT_MSG_FDS_MAX; i++) {
		if (ctx->fds[i] >= 0)
			close(ctx->fds[i]);
		ctx->fds[i] = -1;
	}
	ctx->fd_num = 0;
}

/* fd is a connected unix socket whose name (server) or peer (client) is
 * the port's socket path. */
bool
vport_is_conn(int fd, const char *path, bool client)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	int listening = 0;
	socklen_t ll = sizeof(listening);
	struct stat st;

	if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode) ||
		getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &ll) !=
			0 ||
		listening)
		return false;
	memset(&sa, 0, sizeof(sa));
	if ((client ? getpeername(fd, (struct sockaddr *)&sa, &len)
		    : getsockname(fd, (struct sockaddr *)&sa, &len)) != 0 ||
		sa.sun_family != AF_UNIX)
		return false;
	return strncmp(sa.sun_path, path, sizeof(sa.sun_path)) == 0;
}

/*
 * librte_vhost reads a message's payload with a blocking read() on its
 * single event thread, and writes replies with a blocking sendmsg(): a
 * peer that sends a header and never its payload, or never reads its
 * replies, would hold every port's control. Its connection fd is not
 * exposed, so find it (new_connection runs before librte_vhost reads
 * from it) and make it non-blocking: such a read or write fails at once
 * and librte_vhost drops that connection. Real front-ends send header
 * and payload in one sendmsg (QEMU, virtio_user, rust-vmm). Returns the
 * fd (for vport_conn_backlogged) or -ENOENT.
 */
int
vport_conn_nonblock(const struct vsw_vport *port)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -ENOENT;

	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name), fl;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' ||
			fd == dirfd(d) ||
			!vport_is_conn(fd, port->path, port->cfg.client))
			continue;
		fl = fcntl(fd, F_GETFL);
		if (fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0)
			found = fd;
	}
	closedir(d);
	return found;
}

bool
vport_conn_backlogged(int fd)
{
	int queued = 0;

	/* unix sockets: bytes sent that the peer has not read yet */
	return fd >= 0 && ioctl(fd, SIOCOUTQ, &queued) == 0 &&
	       (unsigned int)queued > VPORT_CONN_BACKLOG_MAX;
}

/*
 * Owner and mode of the socket librte_vhost just bound at path, without
 * following a symlink put there since (the directory may be writable by
 * others): the last component is opened O_PATH|O_NOFOLLOW, must be a
 * socket of ours still at the mode it was created with (umask 0177:
 * 0600) with one link, and that very inode is changed (fchownat on the
 * fd, chmod through /proc/self/fd). 0 or -errno (-ELOOP, -EPERM: not our
 * socket; nothing changed).
 */
int
vport_sock_perms(const char *path, uid_t owner, gid_t group, mode_t mode)
{
	char proc[40];
	struct stat st;
	int fd, rc = 0;

	fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0)
		rc = -errno;
	else if (S_ISLNK(st.st_mode))
		rc = -ELOOP;
	else if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid() ||
		(st.st_mode & 07777) != 0600 || st.st_nlink != 1)
		rc = -EPERM;
	if (rc == 0 && (owner != (uid_t)-1 || group != (gid_t)-1) &&
		fchownat(fd, "", owner, group, AT_EMPTY_PATH) != 0)
		rc = -errno;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (rc == 0 && chmod(proc, mode) != 0)
		rc = -errno;
	close(fd);
	return rc;
}
