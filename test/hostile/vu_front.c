/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost-user front-end for tests (see vu_front.h): the socket messages, the
 * shared guest memory and a well-behaved split-ring data path. The unit
 * test test/unit/test_vport_guest.c speaks through it too.
 *
 * Runs on the caller's thread. Trusts nothing from the back-end except
 * the used ring entries it wrote for buffers we posted (still range-checked
 * before use).
 */
#include "vu_front.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

const char *
vu_req_name(uint32_t req)
{
	static const char *const names[] = {
#define VU_REQ_NAME(name, nr) [nr] = #name,
		VU_REQS(VU_REQ_NAME)
#undef VU_REQ_NAME
	};

	return req < sizeof(names) / sizeof(names[0]) ? names[req] : NULL;
}

static void
sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

int
vu_open(struct vu_front *f, const char *path)
{
	return vu_open_fd(f, path, -1);
}

int
vu_open_fd(struct vu_front *f, const char *path, int memfd)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int i;

	memset(f, 0, sizeof(*f));
	f->sock = -1;
	for (i = 0; i < 2; i++)
		f->kick[i] = f->call[i] = -1;
	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	f->memfd = memfd >= 0 ? memfd : memfd_create("vu-guest", MFD_CLOEXEC);
	if (f->memfd < 0)
		return -errno;
	if (memfd < 0 && ftruncate(f->memfd, VU_MEM_SIZE) != 0)
		goto fail;
	f->mem = mmap(NULL, VU_MEM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		f->memfd, 0);
	if (f->mem == MAP_FAILED) {
		f->mem = NULL;
		goto fail;
	}
	for (i = 0; i < 2; i++) {
		f->kick[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		f->call[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (f->kick[i] < 0 || f->call[i] < 0)
			goto fail;
	}
	f->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (f->sock < 0)
		goto fail;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	for (i = 0; i < 200; i++) {
		if (connect(f->sock, (struct sockaddr *)&sun, sizeof(sun)) == 0)
			return 0;
		if (errno != ENOENT && errno != ECONNREFUSED && errno != EAGAIN)
			break;
		sleep_ms(10);
	}
fail:
	i = -errno;
	vu_close(f);
	return i != 0 ? i : -EIO;
}

void
vu_close(struct vu_front *f)
{
	int i;

	if (f->sock >= 0)
		close(f->sock);
	for (i = 0; i < 2; i++) {
		if (f->kick[i] >= 0)
			close(f->kick[i]);
		if (f->call[i] >= 0)
			close(f->call[i]);
		f->kick[i] = f->call[i] = -1;
	}
	if (f->mem != NULL)
		munmap(f->mem, VU_MEM_SIZE);
	if (f->memfd >= 0)
		close(f->memfd);
	f->sock = f->memfd = -1;
	f->mem = NULL;
}

int
vu_send_raw(struct vu_front *f, const void *buf, size_t len, const int *fds,
	int nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * VU_MAX_FDS)];
	struct iovec iov = {(void *)(uintptr_t)buf, len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (nfds < 0 || nfds > VU_MAX_FDS)
		return -EINVAL;
	if (nfds > 0) {
		struct cmsghdr *c;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	n = sendmsg(f->sock, &mh, MSG_NOSIGNAL);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int
vu_send(struct vu_front *f, uint32_t req, const void *payload, uint32_t size,
	const int *fds, int nfds)
{
	struct vu_msg m = {
		.request = req, .flags = VU_FLAG_VERSION, .size = size};

	if (size > sizeof(m.u))
		return -EINVAL;
	if (size != 0)
		memcpy(&m.u, payload, size);
	return vu_send_raw(f, &m, VU_HDR_SIZE + size, fds, nfds);
}

int
vu_send_u64(struct vu_front *f, uint32_t req, uint64_t v, int fd)
{
	return vu_send(f, req, &v, sizeof(v), &fd, fd >= 0 ? 1 : 0);
}

int
vu_send_state(struct vu_front *f, uint32_t req, uint32_t idx, uint32_t num)
{
	uint32_t s[2] = {idx, num};

	return vu_send(f, req, s, sizeof(s), NULL, 0);
}

int
vu_recv(struct vu_front *f, struct vu_msg *m, int timeout_ms)
{
	struct pollfd p = {.fd = f->sock, .events = POLLIN};
	ssize_t n;

	if (poll(&p, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	n = recv(f->sock, m, sizeof(*m), 0);
	if (n <= 0)
		return -EPIPE;
	if (n < (ssize_t)VU_HDR_SIZE)
		return -EPROTO;
	return 0;
}

bool
vu_peer_closed(struct vu_front *f, int timeout_ms)
{
	struct pollfd p = {.fd = f->sock, .events = POLLIN};
	char c[256];

	for (;;) {
		if (poll(&p, 1, timeout_ms) <= 0)
			return false;
		if (recv(f->sock, c, sizeof(c), MSG_DONTWAIT) <= 0)
			return true;
		/* a reply we did not wait for: keep looking */
	}
}

int
vu_negotiate(struct vu_front *f, uint64_t features)
{
	uint64_t pf = 1ull << VU_PROTOCOL_F_MQ;
	struct vu_msg m;
	int rc;

	if ((rc = vu_send(f, VU_GET_FEATURES, NULL, 0, NULL, 0)) != 0 ||
		(rc = vu_recv(f, &m, 2000)) != 0)
		return rc;
	if (m.request != VU_GET_FEATURES || (m.u.u64 & features) != features)
		return -ENOTSUP;
	if (features & (1ull << VU_F_PROTOCOL_FEATURES)) {
		if ((rc = vu_send(f, VU_GET_PROTOCOL_FEATURES, NULL, 0, NULL,
			     0)) != 0 ||
			(rc = vu_recv(f, &m, 2000)) != 0)
			return rc;
		pf &= m.u.u64;
		if ((rc = vu_send_u64(f, VU_SET_PROTOCOL_FEATURES, pf, -1)))
			return rc;
	}
	if ((rc = vu_send(f, VU_SET_OWNER, NULL, 0, NULL, 0)) != 0)
		return rc;
	f->features = features;
	return vu_send_u64(f, VU_SET_FEATURES, features, -1);
}

int
vu_mem_table(struct vu_front *f)
{
	struct vu_msg m;

	memset(&m, 0, sizeof(m));
	m.u.mem.nregions = 1;
	m.u.mem.r[0].gpa = VU_GPA_BASE;
	m.u.mem.r[0].size = VU_MEM_SIZE;
	m.u.mem.r[0].uaddr = (uint64_t)(uintptr_t)f->mem;
	m.u.mem.r[0].offset = 0;
	return vu_send(f, VU_SET_MEM_TABLE, &m.u.mem,
		8 + sizeof(struct vu_region), &f->memfd, 1);
}

/* NUM/BASE/ADDR/KICK/CALL/ENABLE for vring q as laid out in f->q[q]. */
static int
vring_send(struct vu_front *f, uint32_t q, uint16_t base)
{
	struct vu_ring *r = &f->q[q];
	struct vu_msg m;
	int rc;

	memset(&m, 0, sizeof(m));
	m.u.addr.index = q;
	/* ring addresses are front-end virtual addresses: ours */
	m.u.addr.desc = (uint64_t)(uintptr_t)r->vr.desc;
	m.u.addr.avail = (uint64_t)(uintptr_t)r->vr.avail;
	m.u.addr.used = (uint64_t)(uintptr_t)r->vr.used;
	if ((rc = vu_send_state(f, VU_SET_VRING_NUM, q, r->size)) ||
		(rc = vu_send_state(f, VU_SET_VRING_BASE, q, base)) ||
		(rc = vu_send(f, VU_SET_VRING_ADDR, &m.u.addr, sizeof(m.u.addr),
			 NULL, 0)) ||
		(rc = vu_send_u64(f, VU_SET_VRING_KICK, q, f->kick[q])) ||
		(rc = vu_send_u64(f, VU_SET_VRING_CALL, q, f->call[q])) ||
		(rc = vu_send_state(f, VU_SET_VRING_ENABLE, q, 1)))
		return rc;
	return 0;
}

int
vu_vring_setup(struct vu_front *f, uint32_t q, uint32_t size)
{
	struct vu_ring *r = &f->q[q];

	if (q > 1 || size == 0 || size > 512 || (size & (size - 1)))
		return -EINVAL;
	memset(f->mem + q * VU_RING_AREA, 0, VU_RING_AREA);
	vring_init(&r->vr, size, f->mem + q * VU_RING_AREA, 4096);
	r->size = size;
	r->avail_idx = r->used_seen = 0;
	return vring_send(f, q, 0);
}

int
vu_vring_resume(struct vu_front *f, uint32_t q, uint16_t base)
{
	if (q > 1 || f->q[q].size == 0)
		return -EINVAL;
	return vring_send(f, q, base);
}

int
vu_start(
	struct vu_front *f, const char *path, uint64_t features, uint32_t qsize)
{
	return vu_start_fd(f, path, features, qsize, -1);
}

int
vu_start_fd(struct vu_front *f, const char *path, uint64_t features,
	uint32_t qsize, int memfd)
{
	int rc = vu_open_fd(f, path, memfd);

	if (rc != 0)
		return rc;
	if ((rc = vu_negotiate(f, features)) || (rc = vu_mem_table(f)) ||
		(rc = vu_vring_setup(f, 0, qsize)) ||
		(rc = vu_vring_setup(f, 1, qsize))) {
		vu_close(f);
		return rc;
	}
	return 0;
}

uint64_t
vu_gpa(const struct vu_front *f, const void *p)
{
	return VU_GPA_BASE + (uint64_t)((const uint8_t *)p - f->mem);
}

void *
vu_ptr(struct vu_front *f, uint64_t off)
{
	return f->mem + off;
}

uint8_t *
vu_buf(struct vu_front *f, uint32_t q, uint32_t slot)
{
	return f->mem + VU_BUF_AREA + ((uint64_t)q * 512 + slot) * VU_BUF_LEN;
}

void
vu_avail_push(struct vu_front *f, uint32_t q, uint16_t head)
{
	struct vu_ring *r = &f->q[q];

	r->vr.avail->ring[r->avail_idx % r->size] = head;
	r->avail_idx++;
	__atomic_store_n(&r->vr.avail->idx, r->avail_idx, __ATOMIC_RELEASE);
}

uint16_t
vu_used_idx(const struct vu_front *f, uint32_t q)
{
	return __atomic_load_n(&f->q[q].vr.used->idx, __ATOMIC_ACQUIRE);
}

bool
vu_wait_used(
	const struct vu_front *f, uint32_t q, uint16_t want, int timeout_ms)
{
	int i;

	for (i = 0; i <= timeout_ms; i++) {
		if ((int16_t)(vu_used_idx(f, q) - want) >= 0)
			return true;
		sleep_ms(1);
	}
	return false;
}

uint32_t
vu_tx_inflight(const struct vu_front *f)
{
	return (uint16_t)(f->q[1].avail_idx - vu_used_idx(f, 1));
}

uint32_t
vu_tx_reclaim(struct vu_front *f)
{
	uint16_t used = vu_used_idx(f, 1);
	uint32_t n = (uint16_t)(used - f->q[1].used_seen);

	f->q[1].used_seen = used;
	return n;
}

/* The back-end completes TX chains in order, so slot = avail index. */
int
vu_tx(struct vu_front *f, const void *frame, uint32_t len)
{
	struct vu_ring *r = &f->q[1];
	uint16_t slot = r->avail_idx % r->size;
	uint8_t *buf = vu_buf(f, 1, slot);

	if (len + VU_HDR_LEN > VU_BUF_LEN)
		return -EINVAL;
	if (vu_tx_inflight(f) >= r->size)
		return -EAGAIN;
	memset(buf, 0, VU_HDR_LEN);
	memcpy(buf + VU_HDR_LEN, frame, len);
	r->vr.desc[slot].addr = vu_gpa(f, buf);
	r->vr.desc[slot].len = VU_HDR_LEN + len;
	r->vr.desc[slot].flags = 0;
	r->vr.desc[slot].next = 0;
	vu_avail_push(f, 1, slot);
	f->tx_frames++;
	return 0;
}

uint32_t
vu_rx_post(struct vu_front *f, uint32_t n)
{
	struct vu_ring *r = &f->q[0];
	uint32_t posted = 0;

	while (posted < n &&
		(uint16_t)(r->avail_idx - r->used_seen) < r->size) {
		uint16_t slot = r->avail_idx % r->size;

		r->vr.desc[slot].addr = vu_gpa(f, vu_buf(f, 0, slot));
		r->vr.desc[slot].len = VU_BUF_LEN;
		r->vr.desc[slot].flags = VRING_DESC_F_WRITE;
		r->vr.desc[slot].next = 0;
		vu_avail_push(f, 0, slot);
		posted++;
	}
	return posted;
}

void
vu_rx_refill(struct vu_front *f)
{
	vu_rx_post(f, f->q[0].size);
}

uint32_t
vu_rx_poll(struct vu_front *f, vu_rx_fn cb, void *ctx)
{
	struct vu_ring *r = &f->q[0];
	uint16_t used = vu_used_idx(f, 0);
	uint32_t n = 0;

	while (r->used_seen != used) {
		const struct vring_used_elem *e =
			&r->vr.used->ring[r->used_seen % r->size];
		uint32_t id = e->id, len = e->len;
		const uint8_t *buf;

		r->used_seen++;
		n++;
		/* one buffer per frame: our frames are < VU_BUF_LEN */
		if (id >= r->size || len <= VU_HDR_LEN || len > VU_BUF_LEN) {
			f->rx_bad++;
			continue;
		}
		buf = vu_buf(f, 0, id);
		if ((f->features & (1ull << 15)) &&
			(buf[10] != 1 || buf[11] != 0)) { /* num_buffers */
			f->rx_bad++;
			continue;
		}
		f->rx_frames++;
		if (cb != NULL)
			cb(ctx, buf + VU_HDR_LEN, len - VU_HDR_LEN);
	}
	return n;
}
