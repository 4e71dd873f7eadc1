/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vswd's ports: the objects behind "port-add" (vhost-user sockets through
 * vsw_vport, DPDK ethdev ports by devargs, probed and configured here).
 * Control thread only. The switch core polls them through the adapters in
 * switch/ports/ (vsw/port.h), which own what they are sent and report what
 * they delivered; the switch chooses tx queues and locks a shared one.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <vsw/port.h>
#include <vsw/switch.h>
#include <vsw/vport.h>

#include "vswd_priv.h"

#define ETH_RING_SIZE 1024
/* A port's own pool (eth_pool): its rx rings, bursts and batches in flight */
#define ETH_OWN_POOL_MBUFS 4095u

static int
vhost_open(struct vswd *d, struct vswd_port *p,
	const struct vswd_port_args *a, char *err, size_t errlen)
{
	struct vsw_vport_config cfg;
	int rc;

	vsw_vport_config_init(&cfg);
	cfg.name = p->name;
	cfg.client = a->client;
	cfg.queue_pairs = a->queues;
	cfg.no_offloads = a->no_offloads;
	p->no_offloads = a->no_offloads;
	if (a->path[0] != '\0')
		snprintf(p->path, sizeof(p->path), "%s", a->path);
	else
		snprintf(p->path, sizeof(p->path), "%s/%s.sock",
			d->opts.run_dir, p->name);
	cfg.path = p->path;
	if (a->sock_mode != 0)
		cfg.socket_mode = a->sock_mode;
	cfg.owner = a->owner;
	cfg.group = a->group;
	cfg.max_ring_size = a->max_ring_size;
	p->max_ring_size = a->max_ring_size != 0 ? a->max_ring_size :
		VSW_VPORT_RING_SIZE_DEFAULT;
	rc = vsw_vport_create(&cfg, &p->vport);
	if (rc == 0) {
		vsw_port_vhost_init(&p->vhost, p->vport, p->pool);
		if (d->tx_retries_set)
			vsw_port_vhost_set_tx_retries(&p->vhost, d->tx_retries);
	}
	if (rc < 0)
		snprintf(err, errlen, "cannot create vhost-user socket %s: %s",
			p->path, strerror(-rc));
	return rc;
}

/* Close an ethdev port and detach its device (hot-unplug). */
static void
eth_remove(uint16_t port_id)
{
	struct rte_eth_dev_info info;
	struct rte_device *dev = NULL;

	if (rte_eth_dev_info_get(port_id, &info) == 0)
		dev = info.device;
	rte_eth_dev_stop(port_id);
	rte_eth_dev_close(port_id);
	if (dev != NULL)
		rte_dev_remove(dev);
}

/* Detach the device devargs named (bus and name parsed as the probe did). */
static int
probe_undo(const char *devargs)
{
	struct rte_devargs da;
	int rc;

	memset(&da, 0, sizeof(da));
	rc = rte_devargs_parse(&da, devargs);
	if (rc == 0)
		rc = rte_eal_hotplug_remove(rte_bus_name(da.bus), da.name);
	free(da.data); /* what rte_devargs_reset (experimental) frees */
	return rc;
}

/* The frame size a net_null source claims (its size=, default 64), 0 for
 * any other driver. */
static unsigned long
null_frame_size(const char *devargs)
{
	const char *s;

	if (strncmp(devargs, "net_null", 8) != 0)
		return 0;
	s = strstr(devargs, ",size=");
	return s == NULL ? 64 : strtoul(s + 6, NULL, 0);
}

/*
 * net_null (DPDK 22.11) sets every mbuf it returns to its size= without
 * looking at the mbuf's room: frames larger than vswd's 2 KiB mbufs would
 * make the switch read (and copy to guests) past the buffer. Such a port
 * gets its own pool of mbufs that hold a whole frame; a frame no mbuf can
 * hold is refused.
 */
static int
eth_pool(struct vswd_port *p, const char *devargs, char *err, size_t errlen)
{
	static unsigned seq;
	unsigned long need = null_frame_size(devargs);
	unsigned room = rte_pktmbuf_data_room_size(p->pool);
	char name[RTE_MEMPOOL_NAMESIZE];

	if (need + RTE_PKTMBUF_HEADROOM <= room)
		return 0;
	if (need > UINT16_MAX - RTE_PKTMBUF_HEADROOM) {
		snprintf(err, errlen, "frames of %lu bytes do not fit an mbuf "
			"(at most %u)", need,
			UINT16_MAX - RTE_PKTMBUF_HEADROOM);
		return -EINVAL;
	}
	snprintf(name, sizeof(name), "vsw_eth%u", seq++);
	p->pool = rte_pktmbuf_pool_create(name, ETH_OWN_POOL_MBUFS, 256, 0,
		(uint16_t)(need + RTE_PKTMBUF_HEADROOM), rte_socket_id());
	if (p->pool == NULL) {
		snprintf(err, errlen, "no pool of %u mbufs of %lu bytes: %s",
			ETH_OWN_POOL_MBUFS, need, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	p->own_pool = true;
	VSWD_LOG(INFO, "port %s: own pool of %u mbufs of %lu bytes (frames "
		"larger than vswd's mbufs)\n", p->name, ETH_OWN_POOL_MBUFS,
		need);
	return 0;
}

/* After the device is closed: no mbuf of its own pool is in flight. */
static void
eth_pool_free(struct vswd_port *p)
{
	unsigned in_use;

	if (!p->own_pool)
		return;
	in_use = rte_mempool_in_use_count(p->pool);
	if (in_use != 0) {
		VSWD_LOG(ERR, "port %s: %u mbufs of its pool still in use: "
			"pool kept (LEAK)\n", p->name, in_use);
		return;
	}
	rte_mempool_free(p->pool);
	p->own_pool = false;
}

static int
eth_configure(struct vswd_port *p, uint16_t queues)
{
	struct rte_eth_conf conf;
	int rc;

	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_configure(p->eth_port, queues, queues, &conf);
	for (uint16_t q = 0; rc == 0 && q < queues; q++) {
		rc = rte_eth_rx_queue_setup(p->eth_port, q, ETH_RING_SIZE,
			(unsigned)rte_eth_dev_socket_id(p->eth_port), NULL,
			p->pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(p->eth_port, q,
				ETH_RING_SIZE,
				(unsigned)rte_eth_dev_socket_id(p->eth_port),
				NULL);
	}
	if (rc == 0)
		rc = rte_eth_dev_start(p->eth_port);
	if (rc == 0)
		rte_eth_promiscuous_enable(p->eth_port);
	return rc;
}

/*
 * Why net_af_packet may fail to probe where nothing else is wrong: DPDK
 * 22.11 puts an interface's sockets in PACKET_FANOUT group (pid ^ ifindex)
 * & 0xffff, and the kernel refuses (EINVAL) a group id that another
 * socket in the network namespace holds on another interface: another
 * process's port whose pid ^ ifindex is the same 16 bits.
 */
static void
af_packet_hint(const char *devargs, char *err, size_t errlen)
{
	const char *s = strstr(devargs, ",iface=");
	char ifname[IF_NAMESIZE];
	size_t len = strlen(err);
	unsigned idx;

	if (strncmp(devargs, "net_af_packet", 13) != 0 || s == NULL)
		return;
	snprintf(ifname, sizeof(ifname), "%.*s", (int)strcspn(s + 7, ","),
		s + 7);
	idx = if_nametoindex(ifname);
	if (idx == 0 || len >= errlen)
		return;
	snprintf(err + len, errlen - len,
		"; if DPDK logged PACKET_FANOUT failing: its fanout group "
		"0x%04x (vswd's pid ^ ifindex %u) is taken by another "
		"process's packet socket on another interface",
		(unsigned)(getpid() ^ (int)idx) & 0xffffu, idx);
}

static int
eth_open(struct vswd_port *p, const struct vswd_port_args *a, char *err,
	size_t errlen)
{
	char devname[RTE_DEV_NAME_MAX_LEN];
	uint16_t port_id;
	int rc;

	snprintf(devname, sizeof(devname), "%.*s",
		(int)strcspn(a->devargs, ","), a->devargs);
	rc = rte_dev_probe(a->devargs);
	if (rc < 0 && rc != -EEXIST) {
		snprintf(err, errlen, "cannot probe device '%s': %s",
			a->devargs, strerror(-rc));
		af_packet_hint(a->devargs, err, errlen);
		return rc;
	}
	if (rte_eth_dev_get_port_by_name(devname, &port_id) != 0) {
		/* Probed but no such ethdev (e.g. a crypto or dma vdev): a
		 * device we attached must not stay attached. One probed
		 * before (EEXIST) is not ours to remove. */
		bool ours = rc == 0 && probe_undo(a->devargs) == 0;

		snprintf(err, errlen,
			"no ethdev port named '%s' after probing "
			"'%s' (%s)",
			devname, a->devargs,
			rc == -EEXIST
				? "device was already probed, left attached"
			: ours ? "device detached"
			       : "could not detach device");
		return -ENODEV;
	}
	p->eth_port = port_id;
	vsw_port_eth_init(&p->eth, port_id);
	snprintf(p->path, sizeof(p->path), "%s", devname);
	rc = eth_pool(p, a->devargs, err, errlen);
	if (rc < 0) {
		eth_remove(port_id);
		return rc;
	}
	rc = eth_configure(p, a->queues);
	if (rc < 0) {
		snprintf(err, errlen, "cannot start device '%s': %s", devname,
			strerror(-rc));
		eth_remove(port_id);
		eth_pool_free(p);
	}
	return rc;
}

static void
port_close(struct vswd_port *p)
{
	if (p->type == VSWD_PORT_VHOST) {
		vsw_vport_destroy(p->vport);
	} else {
		eth_remove(p->eth_port);
		eth_pool_free(p);
	}
}

int
vswd_port_add(struct vswd *d, const char *name,
	const struct vswd_port_args *a, char *err, size_t errlen)
{
	struct vswd_port *p;
	int rc;

	if (vswd_port_find(d, name) != NULL) {
		snprintf(err, errlen, "port '%s' already exists", name);
		return -EEXIST;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->type = a->type;
	p->pool = d->pool;
	p->queues = a->queues;
	rc = a->type == VSWD_PORT_VHOST ? vhost_open(d, p, a, err, errlen) :
		eth_open(p, a, err, errlen);
	if (rc < 0) {
		free(p);
		return rc;
	}
	if (a->type == VSWD_PORT_VHOST)
		rc = vsw_switch_port_add(d->sw, p->name, &vsw_port_vhost_ops,
			&p->vhost, a->queues, a->queues);
	else
		rc = vsw_switch_port_add(d->sw, p->name, &vsw_port_eth_ops,
			&p->eth, a->queues, a->queues);
	if (rc < 0) {
		snprintf(err, errlen, "switch refused port '%s': %s", name,
			strerror(-rc));
		port_close(p);
		free(p);
		return rc;
	}
	p->port_no = (uint16_t)rc;
	/* Keep the list in the order ports were added (port-show). */
	struct vswd_port **tail = &d->ports;

	while (*tail != NULL)
		tail = &(*tail)->next;
	*tail = p;
	VSWD_LOG(INFO, "port %s added as %u (%s)\n", p->name, p->port_no,
		p->path);
	return 0;
}

struct vswd_port *
vswd_port_find(struct vswd *d, const char *name)
{
	for (struct vswd_port *p = d->ports; p != NULL; p = p->next)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

int
vswd_port_del(struct vswd *d, const char *name)
{
	struct vswd_port **pp, *p;

	for (pp = &d->ports; *pp != NULL; pp = &(*pp)->next)
		if (strcmp((*pp)->name, name) == 0)
			break;
	p = *pp;
	if (p == NULL)
		return -ENOENT;
	/* After this returns no PMD polls or sends to the port. */
	vsw_switch_port_del(d->sw, p->port_no);
	*pp = p->next;
	port_close(p);
	VSWD_LOG(INFO, "port %s deleted\n", p->name);
	free(p);
	return 0;
}

void
vswd_ports_del_all(struct vswd *d)
{
	while (d->ports != NULL) {
		char name[VSW_PORT_NAME_MAX];

		snprintf(name, sizeof(name), "%s", d->ports->name);
		vswd_port_del(d, name);
	}
}
