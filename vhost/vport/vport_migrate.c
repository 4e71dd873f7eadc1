/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Live migration on a vhost-user port: the dirty log the front-end hands
 * over (SET_LOG_BASE, checked here before librte_vhost maps it) and the
 * announcement of a migrated guest that cannot announce itself
 * (SEND_RARP: the port's next RX burst injects a RARP from its MAC, so
 * the switch's MAC learning moves the MAC to this port at once).
 *
 * Which guest writes are logged, and how, is the virtq's business
 * (vhost/virtq/virtq_log.c); this file hands it the log at queue
 * publication. SET_LOG_BASE and SET_FEATURES (LOG_ALL on or off on a live
 * device) withdraw the queues first (VPORT_MSG_F_PARK) and republish them
 * after, each created with or without the log: pollers switch between the
 * logging and non-logging burst at a grace period, never mid-burst, and
 * take no lock for it.
 *
 * Threads: the checks and SEND_RARP run on librte_vhost's event thread
 * (port->lock held); vport_rarp_inject on the TX vring's poller.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include <stdlib.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_vhost.h>

#include "vport_msg_table.h"
#include "vport_priv.h"

/* The highest guest address of the table librte_vhost holds, as log
 * bytes; 0 before any table (then the queues' creation checks it). */
static uint64_t
log_needed(struct vsw_vport *port)
{
	struct rte_vhost_memory *m = NULL;
	struct vsw_mem mem = {.nregions = 0};
	uint32_t i;

	if (!port->mem_seen || rte_vhost_get_mem_table(port->vid, &m) != 0 ||
		m == NULL)
		return 0;
	for (i = 0; i < m->nregions && i < VSW_MEM_REGIONS_MAX; i++) {
		mem.regions[i].guest_phys_addr = m->regions[i].guest_phys_addr;
		mem.regions[i].size = m->regions[i].size;
		mem.nregions = i + 1;
	}
	free(m);
	return vsw_virtq_log_size_needed(&mem);
}

const char *
vport_log_base_check(struct vsw_vport *port, const struct vport_msg *m)
{
	uint64_t size = m->u.log.mmap_size, off = m->u.log.mmap_offset;

	if (size == 0)
		return "dirty log: size 0";
	/* librte_vhost maps size + offset bytes (CVE-2020-10722) */
	if (off + size < off)
		return "dirty log: mmap_size + mmap_offset wraps";
	if (size < log_needed(port))
		return "dirty log smaller than guest memory needs";
	return NULL;
}

const char *
vport_log_fd_check(int fd, uint64_t offset, uint64_t size)
{
	struct statfs sfs;
	struct stat st;

	if (fstat(fd, &st) != 0 || fstatfs(fd, &sfs) != 0)
		return "dirty log: fd not stat-able";
	if (!S_ISREG(st.st_mode) ||
		(sfs.f_type != TMPFS_MAGIC && sfs.f_type != HUGETLBFS_MAGIC))
		return "dirty log: fd not a memfd, tmpfs or hugetlbfs file";
	/* touching a shared mapping past the end of its file is SIGBUS */
	if ((uint64_t)st.st_size < offset + size)
		return "dirty log: larger than its file";
	return NULL;
}

int
vport_log_get(struct vsw_vport *port, struct vsw_virtq_config *cfg)
{
	uint64_t base = 0, size = 0;

	if (!(port->features & (1ULL << VHOST_F_LOG_ALL)))
		return 0;
	if (rte_vhost_get_log_base(port->vid, &base, &size) != 0 || base == 0)
		return -ENODATA; /* LOG_ALL without SET_LOG_BASE */
	cfg->log_base = (uint8_t *)(uintptr_t)base;
	cfg->log_size = size;
	return 0;
}

void
vport_rarp_note(struct vsw_vport *port, const struct vport_msg *m)
{
	memcpy(port->rarp_mac, &m->u.u64, RTE_ETHER_ADDR_LEN);
	port->rarp_received++;
	/* the MAC before the flag (the poller reads them the other way) */
	__atomic_store_n(&port->rarp_pending, 1, __ATOMIC_RELEASE);
}

/* RFC 903 request: "who am I", from and about mac, broadcast. */
static void
rarp_fill(uint8_t *f, const uint8_t *mac)
{
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)f;
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)(eh + 1);

	memset(f, 0, RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN);
	memset(&eh->dst_addr, 0xff, RTE_ETHER_ADDR_LEN);
	memcpy(&eh->src_addr, mac, RTE_ETHER_ADDR_LEN);
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_RARP);
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = RTE_ETHER_ADDR_LEN;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REVREQUEST);
	memcpy(&a->arp_data.arp_sha, mac, RTE_ETHER_ADDR_LEN);
	memcpy(&a->arp_data.arp_tha, mac, RTE_ETHER_ADDR_LEN);
}

uint16_t
vport_rarp_inject(struct vsw_vport *port, struct rte_mempool *mp,
	struct rte_mbuf **pkts)
{
	const uint16_t len = RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN;
	struct rte_mbuf *m;
	uint8_t mac[RTE_ETHER_ADDR_LEN];

	/* one poller wins it (several may poll the port's queue pairs) */
	if (__atomic_exchange_n(&port->rarp_pending, 0, __ATOMIC_ACQUIRE) == 0)
		return 0;
	memcpy(mac, port->rarp_mac, sizeof(mac));
	m = rte_pktmbuf_alloc(mp);
	if (m == NULL || rte_pktmbuf_append(m, len) == NULL) {
		rte_pktmbuf_free(m);
		/* try again next burst */
		__atomic_store_n(&port->rarp_pending, 1, __ATOMIC_RELAXED);
		return 0;
	}
	rarp_fill(rte_pktmbuf_mtod(m, uint8_t *), mac);
	__atomic_fetch_add(&port->rarp_sent, 1, __ATOMIC_RELAXED);
	pkts[0] = m;
	return 1;
}
