/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vhost-user port internals shared by vport.c (socket lifecycle, port
 * table, data-path entry points) and vport_dev.c (librte_vhost callbacks,
 * queue publication).
 */
#ifndef VSW_VPORT_PRIV_H
#define VSW_VPORT_PRIV_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_log.h>

#include <vsw/vport.h>
#include <vsw/virtq.h>

extern int vport_logtype;

#define VPORT_LOG(level, port, fmt, ...)                                   \
	rte_log(RTE_LOG_##level, vport_logtype, "vport %s: " fmt "\n", \
		(port)->name, ##__VA_ARGS__)

/*
 * One vring. `live` is what pollers see (RCU-published; NULL: not polled).
 * Everything else belongs to the vhost thread under port->lock, except
 * not_ready which only the queue's poller writes.
 */
struct vport_queue {
	struct vsw_virtq *live; /* RCU: == vq while published, else NULL */
	struct vsw_virtq *vq;	/* created on publish, destroyed on retire */
	struct vsw_vport *port;
	int callfd;	  /* guest interrupt eventfd, < 0: none */
	uint16_t index;	  /* vring index */
	char name[80];	  /* "<port> q<pair> rx|tx", for virtq logs */
	bool enabled;	  /* guest enabled it (vring_state_changed) */
	uint32_t num;	  /* size from the last SET_VRING_NUM (checks) */
	uint64_t retired[VSW_VIRTQ_STAT__MAX]; /* previous incarnations */
	/* poller-owned, on its own cache line */
	uint64_t not_ready __attribute__((aligned(64)));
};

struct vsw_vport {
	char name[64];
	char path[PATH_MAX];
	struct vsw_vport_config cfg; /* name/path point into the arrays */
	pthread_mutex_t lock;	     /* device state, below */
	int vid;		     /* librte_vhost device, -1: none */
	bool running;		     /* new_device accepted, not destroyed */
	bool parked;		     /* queues withdrawn around a message */
	uint64_t features;
	uint64_t connects;
	uint64_t queue_errors;
	uint64_t disconnects;
	uint64_t msg_rejected;
	bool reject;	       /* refuse the message in flight */
	bool mem_seen;	       /* librte_vhost took a memory table:
				* rte_vhost_get_mem_table() crashes
				* (NULL dev->mem) before that in 22.11 */
	uint64_t log_next_tsc; /* rate limit for guest-error lines */
	uint32_t log_suppressed;
	struct vsw_mem mem;	    /* what published queues translate with */
	uint16_t nr_queues;	    /* 2 * queue pairs */
	struct vport_queue *queues; /* nr_queues, 64-byte aligned */
	struct vsw_vport *next;	    /* port table (vport.c) */
};

/* The port owning librte_vhost device vid (by socket path), or NULL. */
struct vsw_vport *vport_lookup_vid(int vid);

/* librte_vhost callbacks (vport_dev.c). */
extern const struct rte_vhost_device_ops vport_dev_ops;

/*
 * vsw's checks on vhost-user messages against the request table
 * (vport_msg.c, vport_msg_table.h): NULL or why not.
 */
const char *vport_msg_check(struct vsw_vport *port, void *msg);
void vport_msg_poison(void *msg);
const char *vport_mem_files_check(struct vsw_vport *port);
/* A memory table fit to translate with: 1..8 regions, each non-empty,
 * no range wrapping, none overlapping another in guest-physical space. */
const char *vport_mem_check(const struct vsw_mem *mem);

/* What a front-end caused, rate-limited per port (include/vsw/log.h). */
void vport_log_guest(struct vsw_vport *port, const char *fmt, ...) __rte_cold
	__rte_format_printf(2, 3);
/* "SET_VRING_CALL refused: why" (the request's name from the table). */
void vport_log_refused(
	struct vsw_vport *port, uint32_t request, const char *why) __rte_cold;

/* Free per-queue storage (control thread, port gone from librte_vhost). */
void vport_queues_free(struct vsw_vport *port);

#endif /* VSW_VPORT_PRIV_H */
