/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory tables and vrings set up wrong: region counts, overlapping,
 * oversized and wrapping regions, a region past its file's end, a log
 * base that wraps, per-vring messages for vrings the port does not have,
 * ring sizes out of range, rings outside guest memory. vswd must refuse
 * the message (msg_rejected) and drop the connection before a descriptor
 * can point anywhere; the driver checks the counters and the fds.
 */
#include <string.h>

#include "hostile.h"

/* Memory table with n regions (r given), nfds copies of the memfd. */
static int
mem_table(struct hs_ctx *c, uint32_t n, const struct vu_region *r, uint32_t nr,
	int nfds)
{
	struct vu_msg m;
	int fds[8], i;

	if (hs_opened(c) != 0 || vu_negotiate(&c->f, VU_FEATURES_DEFAULT) != 0)
		return 1;
	for (i = 0; i < 8; i++)
		fds[i] = c->f.memfd;
	memset(&m, 0, sizeof(m));
	m.u.mem.nregions = n;
	if (nr != 0)
		memcpy(m.u.mem.r, r, nr * sizeof(*r));
	vu_send(&c->f, VU_SET_MEM_TABLE, &m.u.mem, 8 + 8 * 32, fds, nfds);
	return hs_closed(c);
}

static int
s_regions_0(struct hs_ctx *c)
{
	return mem_table(c, 0, NULL, 0, 0);
}

static int
s_regions_9(struct hs_ctx *c)
{
	struct vu_region r[8];
	int i;

	for (i = 0; i < 8; i++)
		r[i] = (struct vu_region){VU_GPA_BASE + i * 0x100000ull,
			0x100000, 0x100000000ull + i * 0x100000ull, 0};
	return mem_table(c, 9, r, 8, 8);
}

static int
s_regions_overlap(struct hs_ctx *c)
{
	struct vu_region r[2] = {
		{VU_GPA_BASE, VU_MEM_SIZE, 0x100000000ull, 0},
		{VU_GPA_BASE + 0x1000, 0x1000, 0x200000000ull, 0x1000},
	};

	return mem_table(c, 2, r, 2, 2);
}

/* 1 TiB region over an 8 MiB memfd: touching it past 8 MiB is SIGBUS. */
static int
s_region_huge(struct hs_ctx *c)
{
	struct vu_region r = {VU_GPA_BASE, 1ull << 40, 0x100000000ull, 0};

	return mem_table(c, 1, &r, 1, 1);
}

/*
 * A 64 MiB region over the 8 MiB memfd, a working device, then a TX
 * frame placed 16 MiB in: past the file's end, where any access is SIGBUS.
 * vsw must refuse the table before a descriptor can point there.
 */
static int
s_region_past_file(struct hs_ctx *c)
{
	struct vu_msg m;
	unsigned char frame[64];

	if (hs_opened(c) != 0 || vu_negotiate(&c->f, VU_FEATURES_DEFAULT) != 0)
		return 1;
	memset(&m, 0, sizeof(m));
	m.u.mem.nregions = 1;
	m.u.mem.r[0] = (struct vu_region){
		VU_GPA_BASE, 64u << 20, (uint64_t)(uintptr_t)c->f.mem, 0};
	vu_send(&c->f, VU_SET_MEM_TABLE, &m.u.mem, 8 + 32, &c->f.memfd, 1);
	vu_vring_setup(&c->f, 0, 256);
	vu_vring_setup(&c->f, 1, 256);
	hs_frame(frame, sizeof(frame), 0);
	vu_tx(&c->f, frame, sizeof(frame));
	c->f.q[1].vr.desc[0].addr = VU_GPA_BASE + (16u << 20);
	return hs_closed(c);
}

static int
s_region_offset_overflow(struct hs_ctx *c)
{
	struct vu_region r = {
		VU_GPA_BASE, VU_MEM_SIZE, 0x100000000ull, UINT64_MAX - 0xfff};

	return mem_table(c, 1, &r, 1, 1);
}

static int
s_region_gpa_wrap(struct hs_ctx *c)
{
	struct vu_region r = {
		UINT64_MAX - 0xfff, VU_MEM_SIZE, 0x100000000ull, 0};

	return mem_table(c, 1, &r, 1, 1);
}

static int
s_log_base_overflow(struct hs_ctx *c)
{
	uint64_t l[2] = {UINT64_MAX - 0xfff, 0x2000}; /* size, offset */

	return hs_sent_closes(c, VU_SET_LOG_BASE, l, sizeof(l), 1);
}

/* Per-vring message with an index beyond the port's 1 queue pair. */
static int
vring_oob(struct hs_ctx *c, uint32_t req, uint32_t idx)
{
	struct vu_msg m;

	if (hs_negotiated(c) != 0)
		return 1;
	memset(&m, 0, sizeof(m));
	switch (req) {
	case VU_SET_VRING_KICK:
	case VU_SET_VRING_CALL:
	case VU_SET_VRING_ERR:
		vu_send_u64(&c->f, req, idx, c->f.kick[0]);
		break;
	case VU_SET_VRING_ADDR:
		m.u.addr.index = idx;
		m.u.addr.desc = (uint64_t)(uintptr_t)c->f.mem;
		m.u.addr.avail = m.u.addr.desc + 0x1000;
		m.u.addr.used = m.u.addr.desc + 0x2000;
		vu_send(&c->f, req, &m.u.addr, sizeof(m.u.addr), NULL, 0);
		break;
	default:
		vu_send_state(
			&c->f, req, idx, req == VU_SET_VRING_NUM ? 256 : 0);
	}
	return hs_closed(c);
}

#define VRING_OOB(fn, req, idx)                \
	static int fn(struct hs_ctx *c)        \
	{                                      \
		return vring_oob(c, req, idx); \
	}
VRING_OOB(s_idx_num, VU_SET_VRING_NUM, 2)
VRING_OOB(s_idx_addr, VU_SET_VRING_ADDR, 3)
VRING_OOB(s_idx_base, VU_SET_VRING_BASE, 2)
VRING_OOB(s_idx_get_base, VU_GET_VRING_BASE, 5)
VRING_OOB(s_idx_kick, VU_SET_VRING_KICK, 2)
VRING_OOB(s_idx_call, VU_SET_VRING_CALL, 7)
VRING_OOB(s_idx_err, VU_SET_VRING_ERR, 2)
VRING_OOB(s_idx_enable, VU_SET_VRING_ENABLE, 3)
VRING_OOB(s_idx_huge, VU_SET_VRING_NUM, 0xffff)

static int
ring_num(struct hs_ctx *c, uint32_t num)
{
	if (hs_negotiated(c) != 0)
		return 1;
	vu_send_state(&c->f, VU_SET_VRING_NUM, 1, num);
	return hs_closed(c);
}

static int
s_num_pow2(struct hs_ctx *c)
{
	return ring_num(c, 100);
}

static int
s_num_0(struct hs_ctx *c)
{
	return ring_num(c, 0);
}

static int
s_num_huge(struct hs_ctx *c)
{
	return ring_num(c, 65536);
}

/* SET_VRING_ADDR for TX with one ring moved to addr (front-end VA). */
static int
ring_addr(struct hs_ctx *c, int which, uint64_t addr)
{
	struct vu_msg m;

	if (hs_negotiated(c) != 0)
		return 1;
	vu_send_state(&c->f, VU_SET_VRING_NUM, 1, 256);
	vu_send_state(&c->f, VU_SET_VRING_BASE, 1, 0);
	memset(&m, 0, sizeof(m));
	m.u.addr.index = 1;
	m.u.addr.desc = (uint64_t)(uintptr_t)c->f.mem + VU_RING_AREA;
	m.u.addr.avail = m.u.addr.desc + 256 * 16;
	m.u.addr.used = m.u.addr.desc + 0x2000;
	if (which == 0)
		m.u.addr.desc = addr;
	else if (which == 1)
		m.u.addr.avail = addr;
	else
		m.u.addr.used = addr;
	vu_send(&c->f, VU_SET_VRING_ADDR, &m.u.addr, sizeof(m.u.addr), NULL, 0);
	vu_send_u64(&c->f, VU_SET_VRING_KICK, 1, c->f.kick[1]);
	vu_send_state(&c->f, VU_SET_VRING_ENABLE, 1, 1);
	return hs_closed(c);
}

static int
s_used_outside(struct hs_ctx *c)
{
	return ring_addr(c, 2, 0x10000000000ull);
}

static int
s_avail_outside(struct hs_ctx *c)
{
	return ring_addr(c, 1, 0x1000);
}

const struct hs_scenario hs_vring_scenarios[] = {
	{"mem-regions-0", "msg_rejected,disconnects",
		"SET_MEM_TABLE with 0 regions", s_regions_0},
	{"mem-regions-9", "msg_rejected,disconnects",
		"SET_MEM_TABLE with 9 regions", s_regions_9},
	{"mem-regions-overlap", "msg_rejected,disconnects",
		"two regions with overlapping guest addresses",
		s_regions_overlap},
	{"mem-region-huge", "msg_rejected,disconnects",
		"1 TiB region over an 8 MiB memfd", s_region_huge},
	{"mem-region-past-file", "msg_rejected,disconnects",
		"64 MiB region over an 8 MiB memfd, TX frame 16 MiB in",
		s_region_past_file},
	{"mem-offset-overflow", "msg_rejected,disconnects",
		"mmap_offset + size wraps 2^64", s_region_offset_overflow},
	{"mem-gpa-wrap", "msg_rejected,disconnects",
		"guest address + size wraps 2^64", s_region_gpa_wrap},
	{"log-base-overflow", "msg_rejected,disconnects",
		"SET_LOG_BASE size + offset wraps", s_log_base_overflow},
	{"vring-idx-num", "msg_rejected,disconnects",
		"SET_VRING_NUM for vring 2 of 2", s_idx_num},
	{"vring-idx-addr", "msg_rejected,disconnects",
		"SET_VRING_ADDR for vring 3 of 2", s_idx_addr},
	{"vring-idx-base", "msg_rejected,disconnects",
		"SET_VRING_BASE for vring 2 of 2", s_idx_base},
	{"vring-idx-get-base", "msg_rejected,disconnects",
		"GET_VRING_BASE for vring 5 of 2", s_idx_get_base},
	{"vring-idx-kick", "msg_rejected,disconnects",
		"SET_VRING_KICK for vring 2 of 2", s_idx_kick},
	{"vring-idx-call", "msg_rejected,disconnects",
		"SET_VRING_CALL for vring 7 of 2", s_idx_call},
	{"vring-idx-err", "msg_rejected,disconnects",
		"SET_VRING_ERR for vring 2 of 2", s_idx_err},
	{"vring-idx-enable", "msg_rejected,disconnects",
		"SET_VRING_ENABLE for vring 3 of 2", s_idx_enable},
	{"vring-idx-huge", "disconnects", "SET_VRING_NUM for vring 65535",
		s_idx_huge},
	{"ring-size-not-pow2", "msg_rejected,disconnects", "SET_VRING_NUM 100",
		s_num_pow2},
	{"ring-size-0", "msg_rejected,disconnects", "SET_VRING_NUM 0", s_num_0},
	{"ring-size-65536", "msg_rejected,disconnects",
		"SET_VRING_NUM 65536 (> 32768)", s_num_huge},
	{"ring-used-outside", "msg_rejected,disconnects",
		"used ring address in no region", s_used_outside},
	{"ring-avail-outside", "msg_rejected,disconnects",
		"avail ring address in no region", s_avail_outside},
};
const size_t hs_n_vring =
	sizeof(hs_vring_scenarios) / sizeof(hs_vring_scenarios[0]);
