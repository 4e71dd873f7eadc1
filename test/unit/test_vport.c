/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost-user port unit tests (no guest): config checks, the server
 * socket's file (mode, owner, stale/live/foreign files at the path), client
 * mode without a peer, not-ready accounting on the data-path entry points,
 * and the protocol answers librte_vhost gives a raw front-end on our behalf
 * (offered features, protocol features, queue count through our message
 * hook). test_vport_guest.c drives a whole device lifetime from a raw
 * front-end; the data path against dpdk-testpmd is the integration test.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_vhost.h>

#include <vsw/vport.h>

#include "test_vport.h"

static char tmpdir[64];
struct rte_mempool *vport_test_pool;
#define pool vport_test_pool

static void
sock_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static struct vsw_vport *
make_port(const char *name, bool client, uint16_t qps, uint32_t mode)
{
	struct vsw_vport_config cfg;
	struct vsw_vport *p = NULL;
	char path[108];

	sock_path(path, sizeof(path), name);
	vsw_vport_config_init(&cfg);
	cfg.path = path;
	cfg.name = name;
	cfg.client = client;
	cfg.queue_pairs = qps;
	cfg.socket_mode = mode;
	assert_int_equal(vsw_vport_create(&cfg, &p), 0);
	assert_non_null(p);
	return p;
}

/* A front-end's connection to socket name (replies within 5 s). */
static int
connect_port(const char *name)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = 5};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	sock_path(sun.sun_path, sizeof(sun.sun_path), name);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	return fd;
}

/* Close the front-end's end; the port sees the disconnect within 5 s. */
static void
close_until_disconnected(struct vsw_vport *p, int fd)
{
	struct vsw_vport_info info;
	int tries;

	close(fd);
	for (tries = 0; tries < 500; tries++) {
		vsw_vport_info_get(p, &info);
		if (!info.connected)
			break;
		usleep(10000);
	}
	assert_false(info.connected);
}

struct vsw_vport *
vport_test_port(const char *name, char *path, size_t len)
{
	sock_path(path, len, name);
	return make_port(name, false, 1, 0);
}

struct vsw_vport *
vport_test_port_qps(const char *name, char *path, size_t len, uint16_t qps)
{
	sock_path(path, len, name);
	return make_port(name, false, qps, 0);
}

static void
test_config_rejected(void **state)
{
	struct vsw_vport_config cfg;
	struct vsw_vport *p = NULL;
	char longpath[200];

	(void)state;
	vsw_vport_config_init(&cfg);
	assert_int_equal(vsw_vport_create(&cfg, &p), -EINVAL); /* no path */
	cfg.path = "";
	assert_int_equal(vsw_vport_create(&cfg, &p), -EINVAL);
	memset(longpath, 'x', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	cfg.path = longpath; /* longer than sun_path */
	assert_int_equal(vsw_vport_create(&cfg, &p), -EINVAL);
	cfg.path = "/tmp/vsw-never-created.sock";
	cfg.queue_pairs = 0;
	assert_int_equal(vsw_vport_create(&cfg, &p), -EINVAL);
	cfg.queue_pairs = VSW_VPORT_QUEUE_PAIRS_MAX + 1;
	assert_int_equal(vsw_vport_create(&cfg, &p), -EINVAL);
	cfg.queue_pairs = 1;
	cfg.socket_mode = 010000;
	assert_int_equal(vsw_vport_create(&cfg, &p), -EINVAL);
	assert_null(p);
	assert_int_equal(access("/tmp/vsw-never-created.sock", F_OK), -1);
}

static void
test_server_socket_mode(void **state)
{
	struct vsw_vport_config cfg;
	struct vsw_vport *p, *q = NULL;
	char path[108];
	struct stat st;

	(void)state;
	p = make_port("mode-default.sock", false, 1, 0);
	sock_path(path, sizeof(path), "mode-default.sock");
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0660);
	/* a second port on the same path is refused, the first unharmed */
	vsw_vport_config_init(&cfg);
	cfg.path = path;
	assert_int_equal(vsw_vport_create(&cfg, &q), -EEXIST);
	assert_int_equal(stat(path, &st), 0);
	vsw_vport_destroy(p);
	assert_int_equal(stat(path, &st), -1); /* removed on destroy */

	/* explicit mode, owner and group (ourselves: always allowed) */
	sock_path(path, sizeof(path), "mode-0600.sock");
	vsw_vport_config_init(&cfg);
	cfg.path = path;
	cfg.socket_mode = 0600;
	cfg.owner = getuid();
	cfg.group = getgid();
	assert_int_equal(vsw_vport_create(&cfg, &p), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, getuid());
	assert_int_equal(st.st_gid, getgid());
	vsw_vport_destroy(p);
}

static int
listen_at(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(fd, 1), 0);
	return fd;
}

static void
test_server_path_occupied(void **state)
{
	struct vsw_vport_config cfg;
	struct vsw_vport *p = NULL;
	char path[108];
	int fd;

	(void)state;
	sock_path(path, sizeof(path), "occupied.sock");
	vsw_vport_config_init(&cfg);
	cfg.path = path;
	/* someone is listening: refuse, leave their socket alone */
	fd = listen_at(path);
	assert_int_equal(vsw_vport_create(&cfg, &p), -EADDRINUSE);
	assert_int_equal(access(path, F_OK), 0);
	/* the listener died without unlinking: stale, replaced */
	close(fd);
	assert_int_equal(vsw_vport_create(&cfg, &p), 0);
	vsw_vport_destroy(p);
	/* a regular file is not ours to remove */
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	p = NULL;
	assert_int_equal(vsw_vport_create(&cfg, &p), -EEXIST);
	assert_null(p);
	unlink(path);
}

static void
test_not_ready_counted(void **state)
{
	uint64_t s[VSW_VIRTQ_STAT__MAX];
	struct rte_mbuf *m[VSW_VIRTQ_BURST_MAX];
	struct vsw_vport_info info;
	struct vsw_vport *p;
	uint32_t k;

	(void)state;
	p = make_port("client-nopeer.sock", true, 2, 0);
	vsw_vport_info_get(p, &info);
	assert_false(info.connected);
	assert_false(info.running);
	assert_int_equal(info.queues_live, 0);
	assert_int_equal(vsw_vport_queue_pairs(p), 2);
	assert_string_equal(vsw_vport_name(p), "client-nopeer.sock");
	assert_int_equal(rte_pktmbuf_alloc_bulk(pool, m, 32), 0);
	assert_int_equal(vsw_vport_enqueue_burst(p, 0, m, 32), 0);
	assert_int_equal(vsw_vport_enqueue_burst(p, 1, m, 7), 0);
	assert_int_equal(vsw_vport_enqueue_burst(p, 2, m, 1), 0); /* no qp 2 */
	rte_pktmbuf_free_bulk(m, 32); /* still ours */
	assert_int_equal(vsw_vport_dequeue_burst(p, 0, pool, m, 32), 0);
	assert_int_equal(vsw_vport_dequeue_burst(p, 5, pool, m, 32), 0);
	vsw_vport_stats_get(p, s);
	for (k = 0; k < VSW_VIRTQ_STAT__MAX; k++)
		assert_int_equal(
			s[k], k == VSW_VIRTQ_STAT_ENQ_DROP_NOT_READY ? 40 : 0);
	vsw_vport_destroy(p);
	assert_int_equal(rte_mempool_avail_count(pool), pool->size);
}

/* One vhost-user request without payload; returns the u64 reply. */
static uint64_t
vhu_get_u64(int fd, uint32_t request)
{
	struct {
		uint32_t request, flags, size;
		uint64_t u64;
	} __attribute__((packed)) msg = {request, 1, 0, 0};
	ssize_t n;

	assert_int_equal(write(fd, &msg, 12), 12);
	memset(&msg, 0, sizeof(msg));
	n = read(fd, &msg, sizeof(msg));
	assert_int_equal(n, (ssize_t)sizeof(msg));
	assert_int_equal(msg.request, request);
	assert_int_equal(msg.flags, 1 | 4); /* version 1, reply */
	assert_int_equal(msg.size, 8);
	return msg.u64;
}

/* A request with a u64 payload; with ack, NEED_REPLY and the reply's
 * u64 (0: done, else refused), else 0. */
static uint64_t
vhu_set_u64(int fd, uint32_t request, uint64_t v, bool ack)
{
	struct {
		uint32_t request, flags, size;
		uint64_t u64;
	} __attribute__((packed)) msg = {request, 1 | (ack ? 8 : 0), 8, v};

	assert_int_equal(write(fd, &msg, sizeof(msg)), (ssize_t)sizeof(msg));
	if (!ack)
		return 0;
	memset(&msg, 0, sizeof(msg));
	assert_int_equal(read(fd, &msg, sizeof(msg)), (ssize_t)sizeof(msg));
	assert_int_equal(msg.request, request);
	return msg.u64;
}

/*
 * NET_SET_MTU through librte_vhost and the pre-message hook, as QEMU
 * sends it (host_mtu=, REPLY_ACK): above the port's limit it is nacked
 * and counted, the connection kept; at the limit it is taken and shown; a
 * lower limit while the guest is at a higher MTU is counted once; the MTU
 * is forgotten on disconnect.
 */
static void
test_mtu_limit(void **state)
{
	struct vsw_vport_info info;
	struct vsw_vport_mtu mt;
	struct vsw_vport *p;
	int fd;

	(void)state;
	p = make_port("mtu.sock", false, 1, 0);
	vsw_vport_mtu_limit_set(p, 1450);
	fd = connect_port("mtu.sock");
	assert_true(vhu_get_u64(fd, 1 /* GET_FEATURES */) &
		    (1ULL << VIRTIO_NET_F_MTU));
	vhu_set_u64(fd, 16 /* SET_PROTOCOL_FEATURES */,
		(1ULL << VHOST_USER_PROTOCOL_F_REPLY_ACK) |
			(1ULL << VHOST_USER_PROTOCOL_F_NET_MTU),
		false);
	assert_int_not_equal(
		vhu_set_u64(fd, 20 /* NET_SET_MTU */, 1451, true), 0);
	vsw_vport_mtu_get(p, &mt);
	assert_int_equal(mt.mtu, 0);
	assert_int_equal(mt.limit, 1450);
	assert_int_equal(mt.refused, 1);
	assert_int_equal(vhu_set_u64(fd, 20, 1450, true), 0);
	assert_int_not_equal(vhu_set_u64(fd, 20, 67, true), 0);
	vsw_vport_mtu_get(p, &mt);
	assert_int_equal(mt.mtu, 1450);
	assert_int_equal(mt.refused, 2);
	assert_int_equal(mt.over_limit, 0);
	vsw_vport_mtu_limit_set(p, 1450); /* the same: nothing to say */
	vsw_vport_mtu_limit_set(p, 1449);
	vsw_vport_mtu_limit_set(p, 1449);
	vsw_vport_mtu_get(p, &mt);
	assert_int_equal(mt.over_limit, 1);
	assert_int_equal(mt.limit, 1449);
	vsw_vport_info_get(p, &info);
	assert_true(info.connected);
	close_until_disconnected(p, fd);
	vsw_vport_mtu_get(p, &mt);
	assert_int_equal(mt.mtu, 0);
	vsw_vport_destroy(p);
}

/* What every port offers; without no_offloads also the six offload bits. */
#define OFFER_BASE                                                           \
	((1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTIO_NET_F_MRG_RXBUF) |   \
		(1ULL << VIRTIO_RING_F_INDIRECT_DESC) |                      \
		(1ULL << VIRTIO_RING_F_EVENT_IDX) | (1ULL << VIRTIO_NET_F_MQ) | \
		(1ULL << VIRTIO_NET_F_MTU) | (1ULL << VHOST_F_LOG_ALL) |     \
		(1ULL << VIRTIO_NET_F_GUEST_ANNOUNCE) |                      \
		(1ULL << VIRTIO_F_RING_PACKED) | (1ULL << VIRTIO_F_IN_ORDER) | \
		(1ULL << VHOST_USER_F_PROTOCOL_FEATURES))

/* offloads off: the offer is the full set without the six offload bits */
static void
test_offer_no_offloads(void **state)
{
	struct vsw_vport_config cfg;
	struct vsw_vport *p = NULL;
	char path[108];
	int fd;

	(void)state;
	sock_path(path, sizeof(path), "nooffl.sock");
	vsw_vport_config_init(&cfg);
	cfg.path = path;
	cfg.no_offloads = true;
	assert_int_equal(vsw_vport_create(&cfg, &p), 0);
	fd = connect_port("nooffl.sock");
	assert_int_equal(vhu_get_u64(fd, 1 /* GET_FEATURES */), OFFER_BASE);
	close(fd);
	vsw_vport_destroy(p);
}

static void
test_protocol_offer(void **state)
{
	const uint64_t want = OFFER_BASE | (1ULL << VIRTIO_NET_F_CSUM) |
			      (1ULL << VIRTIO_NET_F_GUEST_CSUM) |
			      (1ULL << VIRTIO_NET_F_HOST_TSO4) |
			      (1ULL << VIRTIO_NET_F_HOST_TSO6) |
			      (1ULL << VIRTIO_NET_F_GUEST_TSO4) |
			      (1ULL << VIRTIO_NET_F_GUEST_TSO6);
	struct vsw_vport_info info;
	struct vsw_vport *p;
	int fd;

	(void)state;
	p = make_port("proto.sock", false, 3, 0);
	fd = connect_port("proto.sock");
	assert_int_equal(vhu_get_u64(fd, 1 /* GET_FEATURES */), want);
	assert_int_equal(vhu_get_u64(fd, 15 /* GET_PROTOCOL_FEATURES */),
		(1ULL << VHOST_USER_PROTOCOL_F_MQ) |
			(1ULL << VHOST_USER_PROTOCOL_F_REPLY_ACK) |
			(1ULL << VHOST_USER_PROTOCOL_F_LOG_SHMFD) |
			(1ULL << VHOST_USER_PROTOCOL_F_RARP) |
			(1ULL << VHOST_USER_PROTOCOL_F_NET_MTU));
	/* answered by our pre-message hook, not librte_vhost's 128 */
	assert_int_equal(vhu_get_u64(fd, 17 /* GET_QUEUE_NUM */), 3);
	vsw_vport_info_get(p, &info);
	assert_true(info.connected);
	assert_false(info.running);
	close_until_disconnected(p, fd);
	vsw_vport_destroy(p);
}

int
main(void)
{
	char prefix[64];
	char *eal[] = {"test_vport", "--no-huge", "-m", "64", "--no-pci",
		"--no-shconf", prefix, "-l", "0", "--log-level=*:error"};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_rejected),
		cmocka_unit_test(test_server_socket_mode),
		cmocka_unit_test(test_server_path_occupied),
		cmocka_unit_test(test_not_ready_counted),
		cmocka_unit_test(test_protocol_offer),
		cmocka_unit_test(test_offer_no_offloads),
		cmocka_unit_test(test_mtu_limit),
		cmocka_unit_test(test_vport_guest_resume),
		cmocka_unit_test(test_vport_mq_subset),
	};
	int rc;

	snprintf(prefix, sizeof(prefix), "--file-prefix=test_vport_%d",
		(int)getpid());
	if (rte_eal_init(RTE_DIM(eal), eal) < 0)
		return 1;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vsw-test-vport-XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	pool = rte_pktmbuf_pool_create("test_vport", 511, 0, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL)
		return 1;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rte_mempool_free(pool);
	rmdir(tmpdir);
	rte_eal_cleanup();
	return rc;
}
