/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw-xconnect: two vhost-user ports, A and B, cross-connected (A -> B and
 * B -> A on every queue pair) by one polling thread, no classifier. The
 * real peer for vsw's vhost-user ports and virtqueue data path in the
 * integration test and the benchmark against testpmd's net_vhost.
 *
 *   vsw-xconnect [EAL args] -- --a PATH --b PATH [--client] [--queues N]
 *       [--mbufs N] [--stats-period SEC] [--duration SEC]
 *       [--socket-mode OCTAL] [--owner UID] [--group GID]
 *
 * Threads: the main lcore handles signals (SIGINT/SIGTERM: stop; SIGUSR1:
 * print stats), port state changes and periodic stats; the first worker
 * lcore polls. The poller is a urcu-qsbr reader (quiescent once per loop).
 * Stats lines are "key=value" words so scripts can parse them.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <urcu-qsbr.h>

#include <vsw/vport.h>

#define XC_BURST 32

struct xc_opts {
	const char *path[2];
	bool client;
	uint16_t queues;
	uint32_t mbufs;
	double stats_period;
	double duration;
	uint32_t socket_mode;
	uid_t owner;
	gid_t group;
};

/* Written by the poller only; read by main for the dump. */
struct xc_poll_stats {
	uint64_t iterations;
	uint64_t busy_iterations;
	uint64_t busy_cycles; /* iterations that moved packets */
	uint64_t idle_cycles;
	uint64_t packets;    /* dequeued (= forwarded or counted drop) */
	uint64_t deq_cycles; /* stage split of busy directions */
	uint64_t enq_cycles;
	uint64_t free_cycles;
	uint64_t dir_packets[2];   /* dequeued from port i */
	uint64_t dir_delivered[2]; /* ... and delivered to the other */
};

static struct vsw_vport *xc_port[2];
static struct rte_mempool *xc_pool;
static volatile bool xc_stop;
static struct xc_poll_stats xc_stats;
static const char *const xc_name[2] = {"A", "B"};

static void
usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [EAL args] -- --a PATH --b PATH [--client]\n"
		"  [--queues N] [--mbufs N] [--stats-period SEC]\n"
		"  [--duration SEC] [--socket-mode OCTAL] [--owner UID]\n"
		"  [--group GID]\n",
		prog);
}

static int
parse_opts(int argc, char **argv, struct xc_opts *o)
{
	static const struct option lo[] = {
		{"a", required_argument, NULL, 'a'},
		{"b", required_argument, NULL, 'b'},
		{"client", no_argument, NULL, 'c'},
		{"queues", required_argument, NULL, 'q'},
		{"mbufs", required_argument, NULL, 'm'},
		{"stats-period", required_argument, NULL, 's'},
		{"duration", required_argument, NULL, 'd'},
		{"socket-mode", required_argument, NULL, 'M'},
		{"owner", required_argument, NULL, 'U'},
		{"group", required_argument, NULL, 'G'},
		{NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->queues = 1;
	o->mbufs = 16384;
	o->socket_mode = VSW_VPORT_SOCKET_MODE_DEFAULT;
	o->owner = (uid_t)-1;
	o->group = (gid_t)-1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'a':
			o->path[0] = optarg;
			break;
		case 'b':
			o->path[1] = optarg;
			break;
		case 'c':
			o->client = true;
			break;
		case 'q':
			o->queues = (uint16_t)atoi(optarg);
			break;
		case 'm':
			o->mbufs = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 's':
			o->stats_period = atof(optarg);
			break;
		case 'd':
			o->duration = atof(optarg);
			break;
		case 'M':
			o->socket_mode = strtoul(optarg, NULL, 8);
			break;
		case 'U':
			o->owner = (uid_t)strtol(optarg, NULL, 0);
			break;
		case 'G':
			o->group = (gid_t)strtol(optarg, NULL, 0);
			break;
		default:
			return -1;
		}
	}
	if (o->path[0] == NULL || o->path[1] == NULL || optind != argc ||
		o->queues == 0 || o->queues > VSW_VPORT_QUEUE_PAIRS_MAX ||
		o->mbufs < 1024)
		return -1;
	return 0;
}

/* One direction of one queue pair; returns packets dequeued. */
static inline uint32_t
xc_forward(int from, uint16_t qp, uint64_t *last, struct xc_poll_stats *st)
{
	struct rte_mbuf *pkts[XC_BURST];
	uint64_t tb, tc, td;
	uint16_t n, sent;

	n = vsw_vport_dequeue_burst(xc_port[from], qp, xc_pool, pkts, XC_BURST);
	if (n == 0)
		return 0;
	tb = rte_rdtsc();
	sent = vsw_vport_enqueue_burst(xc_port[!from], qp, pkts, n);
	tc = rte_rdtsc();
	rte_pktmbuf_free_bulk(pkts, n);
	td = rte_rdtsc();
	st->deq_cycles += tb - *last;
	st->enq_cycles += tc - tb;
	st->free_cycles += td - tc;
	st->dir_packets[from] += n;
	st->dir_delivered[from] += sent;
	*last = td;
	return n;
}

static int
xc_poll(void *arg)
{
	struct xc_poll_stats *st = &xc_stats;
	uint16_t queues = *(const uint16_t *)arg;
	uint64_t t0, t1, last;
	uint32_t moved;
	uint16_t qp;

	rcu_register_thread();
	t0 = rte_rdtsc();
	while (!xc_stop) {
		moved = 0;
		last = t0;
		for (qp = 0; qp < queues; qp++) {
			moved += xc_forward(0, qp, &last, st);
			moved += xc_forward(1, qp, &last, st);
		}
		rcu_quiescent_state();
		t1 = rte_rdtsc();
		st->iterations++;
		if (moved != 0) {
			st->busy_iterations++;
			st->busy_cycles += t1 - t0;
			st->packets += moved;
		} else {
			st->idle_cycles += t1 - t0;
		}
		t0 = t1;
	}
	rcu_unregister_thread();
	return 0;
}

static void
dump_stats(const char *why)
{
	const struct xc_poll_stats *st = &xc_stats;
	uint64_t s[VSW_VIRTQ_STAT__MAX];
	struct vsw_vport_info info;
	uint32_t i, k;

	printf("stats begin reason=%s tsc_hz=%" PRIu64 "\n", why,
		rte_get_tsc_hz());
	for (i = 0; i < 2; i++) {
		vsw_vport_info_get(xc_port[i], &info);
		vsw_vport_stats_get(xc_port[i], s);
		printf("stats port=%s connected=%d running=%d queues_live=%u "
		       "connects=%" PRIu64 " queue_errors=%" PRIu64,
			xc_name[i], info.connected, info.running,
			info.queues_live, info.connects, info.queue_errors);
		for (k = 0; k < VSW_VIRTQ_STAT__MAX; k++)
			printf(" %s=%" PRIu64, vsw_virtq_stat_name(k), s[k]);
		printf("\n");
	}
	printf("stats poller iterations=%" PRIu64 " busy_iterations=%" PRIu64
	       " busy_cycles=%" PRIu64 " idle_cycles=%" PRIu64
	       " packets=%" PRIu64 " deq_cycles=%" PRIu64 " enq_cycles=%" PRIu64
	       " free_cycles=%" PRIu64 " a_to_b=%" PRIu64
	       " a_to_b_delivered=%" PRIu64 " b_to_a=%" PRIu64
	       " b_to_a_delivered=%" PRIu64 " cycles_per_packet=%.1f\n",
		st->iterations, st->busy_iterations, st->busy_cycles,
		st->idle_cycles, st->packets, st->deq_cycles, st->enq_cycles,
		st->free_cycles, st->dir_packets[0], st->dir_delivered[0],
		st->dir_packets[1], st->dir_delivered[1],
		st->packets ? (double)st->busy_cycles / st->packets : 0.0);
	printf("stats mempool size=%u avail=%u\n", xc_pool->size,
		rte_mempool_avail_count(xc_pool));
	printf("stats end\n");
	fflush(stdout);
}

/* Print port up/down transitions (the test harness waits for them). */
static void
watch_ports(bool up[2])
{
	struct vsw_vport_info info;
	int i;

	for (i = 0; i < 2; i++) {
		vsw_vport_info_get(xc_port[i], &info);
		if (info.running != up[i]) {
			up[i] = info.running;
			printf("port %s %s features=0x%" PRIx64 "\n",
				xc_name[i], up[i] ? "up" : "down",
				info.features);
			fflush(stdout);
		}
	}
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Main lcore: signals, port watch, periodic stats, until told to stop. */
static void
control_loop(const struct xc_opts *o, const sigset_t *sigs)
{
	const struct timespec tick = {.tv_sec = 0, .tv_nsec = 100000000};
	double start = now_s(), next = start + o->stats_period;
	bool up[2] = {false, false};
	int sig;

	for (;;) {
		sig = sigtimedwait(sigs, NULL, &tick);
		if (sig == SIGINT || sig == SIGTERM)
			break;
		if (sig == SIGUSR1)
			dump_stats("signal");
		watch_ports(up);
		if (o->stats_period > 0 && now_s() >= next) {
			dump_stats("period");
			next += o->stats_period;
		}
		if (o->duration > 0 && now_s() - start >= o->duration)
			break;
	}
}

static int
create_ports(const struct xc_opts *o)
{
	struct vsw_vport_config cfg;
	int i, rc;

	for (i = 0; i < 2; i++) {
		vsw_vport_config_init(&cfg);
		cfg.name = xc_name[i];
		cfg.path = o->path[i];
		cfg.client = o->client;
		cfg.queue_pairs = o->queues;
		cfg.socket_mode = o->socket_mode;
		cfg.owner = o->owner;
		cfg.group = o->group;
		rc = vsw_vport_create(&cfg, &xc_port[i]);
		if (rc != 0) {
			fprintf(stderr, "port %s (%s): %s\n", xc_name[i],
				o->path[i], strerror(-rc));
			return rc;
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct xc_opts o;
	sigset_t sigs;
	unsigned int lcore;
	int n, rc = 1;

	/* Signals go to the main lcore's sigtimedwait only: block them
	 * before EAL and librte_vhost start their threads. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	argv[n] = argv[0];
	if (parse_opts(argc - n, argv + n, &o) != 0) {
		usage(argv[0]);
		goto out_eal;
	}
	lcore = rte_get_next_lcore(-1, 1, 0);
	if (lcore >= RTE_MAX_LCORE) {
		fprintf(stderr, "need a worker lcore for the poller\n");
		goto out_eal;
	}
	xc_pool = rte_pktmbuf_pool_create("xc_pool", o.mbufs, 256, 0,
		RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (xc_pool == NULL) {
		fprintf(stderr, "mbuf pool: %s\n", rte_strerror(rte_errno));
		goto out_eal;
	}
	if (create_ports(&o) != 0)
		goto out_ports;
	printf("xconnect ready mode=%s a=%s b=%s queues=%u poller_lcore=%u\n",
		o.client ? "client" : "server", o.path[0], o.path[1], o.queues,
		lcore);
	fflush(stdout);
	rte_eal_remote_launch(xc_poll, &o.queues, lcore);
	control_loop(&o, &sigs);
	xc_stop = true;
	rte_eal_wait_lcore(lcore);
	dump_stats("exit");
	rc = 0;
out_ports:
	/* poller gone (unregistered): destroying ports waits for nothing */
	vsw_vport_destroy(xc_port[0]);
	vsw_vport_destroy(xc_port[1]);
	if (rc == 0) {
		if (rte_mempool_avail_count(xc_pool) != xc_pool->size) {
			fprintf(stderr, "mbuf leak: %u of %u in use\n",
				xc_pool->size -
					rte_mempool_avail_count(xc_pool),
				xc_pool->size);
			rc = 1;
		}
	}
	rte_mempool_free(xc_pool);
out_eal:
	rte_eal_cleanup();
	return rc;
}
