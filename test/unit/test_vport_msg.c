/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vsw's vhost-user message checks (vhost/vport/vport_msg.c) against a
 * reference predicate written independently from the vhost-user spec, on
 * messages laid out by the tests' own wire format (test/hostile/vu_front.h):
 * hand-picked edge cases (every size and index boundary, every memory-table
 * field wrapping, the port's ring-size cap, NET_SET_MTU's range and the
 * port's MTU limit) and many random messages. No EAL, no socket: the checks
 * only read the message and the port's queue count (the ring-address check,
 * which needs librte_vhost's memory table, is covered by
 * test/integration/vswd_hostile.py).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tl_rng.h"
#include "vport_msg_table.h"
#include "vport_priv.h"
#include "vu_front.h"

/* The bytes a message can fill in vsw's view: header + a full memory
 * table (what the random messages below are drawn over). */
#define MSG_BYTES (VU_HDR_SIZE + 8 + 8 * sizeof(struct vu_region))

static struct vsw_vport port;
static struct vport_queue queues[2];

static void
port_init(void)
{
	memset(&port, 0, sizeof(port));
	memset(queues, 0, sizeof(queues));
	port.nr_queues = 2;
	port.queues = queues;
	port.vid = -1;
}

/* The reference: what the spec and vsw's offer allow. */
static bool
ref_ok(const struct vu_msg *m)
{
	uint32_t r = m->request, i, j;

	if (r == 6) { /* SET_LOG_BASE: u64 size, u64 offset; no memory table */
		uint64_t lg[2];

		memcpy(lg, &m->u, sizeof(lg));
		return m->size == 16 && lg[0] != 0 && lg[1] <= UINT64_MAX - lg[0];
	}
	if (r == 19) /* SEND_RARP: a u64 holding the MAC */
		return m->size == 8;
	if (r == 20) /* NET_SET_MTU: a u64 in the virtio range, <= limit */
		return m->size == 8 && m->u.u64 >= 68 && m->u.u64 <= 65535 &&
		       (port.mtu_limit == 0 || m->u.u64 <= port.mtu_limit);
	if (r == 0 || r == 7 || r > 18)
		return false;
	if ((r == 2 || r == 16 ||
		    (r >= 8 && r <= 18 && r != 9 && r != 15 && r != 17)) &&
		m->size != 8)
		return false;
	if (r == 9 && m->size != 40)
		return false;
	if (r == 5) {
		uint32_t n = m->u.mem.nregions;

		if (m->size < 8 || n < 1 || n > 8 || m->size != 8 + 32 * n)
			return false;
		for (i = 0; i < n; i++) {
			const struct vu_region *a = &m->u.mem.r[i];

			if (a->size == 0 || a->gpa > UINT64_MAX - a->size ||
				a->uaddr > UINT64_MAX - a->size ||
				a->offset > UINT64_MAX - a->size)
				return false;
			for (j = 0; j < i; j++) {
				const struct vu_region *b = &m->u.mem.r[j];

				if (!(a->gpa + a->size <= b->gpa ||
					    b->gpa + b->size <= a->gpa))
					return false;
			}
		}
		return true;
	}
	if (r >= 8 && r <= 18 && r != 15 && r != 16 && r != 17) {
		uint32_t idx = (r >= 12 && r <= 14)
				       ? (uint32_t)(m->u.u64 & 0xff)
				       : m->u.state.index;

		if (idx >= port.nr_queues)
			return false;
		if (r == 8) {
			uint32_t n = m->u.state.num;
			uint32_t cap = port.cfg.max_ring_size ?
				port.cfg.max_ring_size : 1024;

			/* the spec's rule, then the port's cap (issue 10) */
			return n >= 1 && n <= 32768 && (n & (n - 1)) == 0 &&
				n <= cap;
		}
	}
	return true;
}

static void
check(struct vu_msg *m)
{
	bool want = ref_ok(m);
	const char *why = vport_msg_check(&port, m);

	if ((why == NULL) != want)
		fail_msg("request %u size %u: vsw says %s, reference %s",
			m->request, m->size, why ? why : "ok",
			want ? "ok" : "refuse");
}

static void
test_edges(void **state)
{
	static const uint32_t nums[] = {
		0, 1, 2, 3, 100, 256, 32767, 32768, 32769, 65536, UINT32_MAX};
	struct vu_msg m;
	uint32_t r, s, i;

	(void)state;
	port_init();
	for (r = 0; r < 45; r++) {
		for (s = 0; s <= 48; s += 4) {
			for (i = 0; i < 260; i += (i < 8 ? 1 : 63)) {
				memset(&m, 0, sizeof(m));
				m.request = r;
				m.size = s;
				m.u.state.index = i;
				m.u.state.num = 256;
				check(&m);
				m.u.u64 = i;
				check(&m);
			}
		}
	}
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		memset(&m, 0, sizeof(m));
		m.request = 8;
		m.size = 8;
		m.u.state.num = nums[i];
		check(&m);
		assert_int_equal(vport_msg_check(&port, &m) == NULL,
			nums[i] != 0 && nums[i] <= 1024 &&
				(nums[i] & (nums[i] - 1)) == 0);
	}
}

/* SET_VRING_NUM against max-ring-size: the cap passes, cap * 2 and a
 * size just under the cap that is no power of two do not; the default cap
 * is 1024 (QEMU's largest); 32768 (the spec's) when raised that far. */
static void
test_ring_cap(void **state)
{
	static const uint32_t caps[] = {0, 1, 64, 1024, 4096, 32768};
	struct vu_msg m;
	uint32_t i, cap;

	(void)state;
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		port_init();
		port.cfg.max_ring_size = caps[i];
		cap = caps[i] ? caps[i] : 1024;
		memset(&m, 0, sizeof(m));
		m.request = 8;
		m.size = 8;
		m.u.state.index = 1;
		m.u.state.num = cap;
		check(&m);
		assert_null(vport_msg_check(&port, &m));
		assert_int_equal(queues[1].num, cap);
		m.u.state.num = cap * 2;
		check(&m);
		assert_non_null(vport_msg_check(&port, &m));
		assert_int_equal(queues[1].num, cap); /* not recorded */
		m.u.state.num = cap / 2;
		check(&m);
		assert_int_equal(vport_msg_check(&port, &m) == NULL, cap >= 2);
		if (cap > 2) {
			m.u.state.num = cap - 1; /* under the cap, not 2^k */
			check(&m);
			assert_non_null(vport_msg_check(&port, &m));
		}
	}
}

/* NET_SET_MTU against the range and a port's limit (an L2 domain's
 * underlay MTU - 50): both bounds, the limit and one above it, the high
 * word set; an accepted MTU is recorded, a refused one counted. */
static void
test_mtu(void **state)
{
	static const uint16_t limits[] = {0, 68, 1450, 1500, 8950, 65535};
	const uint64_t vals[] = {0, 67, 68, 69, 1449, 1450, 1451, 1500, 1501,
		8950, 8951, 65534, 65535, 65536, (1ull << 32) | 1450,
		UINT64_MAX};
	struct vu_msg m;
	uint32_t i, j;

	(void)state;
	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		port_init();
		port.mtu_limit = limits[i];
		for (j = 0; j < sizeof(vals) / sizeof(vals[0]); j++) {
			uint64_t refused = port.mtu_refused;
			bool ok = vals[j] >= 68 && vals[j] <= 65535 &&
				  (limits[i] == 0 || vals[j] <= limits[i]);

			memset(&m, 0, sizeof(m));
			m.request = 20;
			m.size = 8;
			m.u.u64 = vals[j];
			port.mtu = 1;
			check(&m);
			port.mtu = 1;
			assert_int_equal(
				vport_msg_check(&port, &m) == NULL, ok);
			assert_int_equal(port.mtu, ok ? vals[j] : 1);
			assert_int_equal(port.mtu_refused, refused + 2 * !ok);
		}
		m.size = 4; /* a short payload: the size check */
		m.u.u64 = 1400;
		check(&m);
		assert_non_null(vport_msg_check(&port, &m));
	}
}

/* SET_FEATURES (2): LOG_ALL (26) is accepted with any checksum/TSO
 * offload bit (0, 1, 7, 8, 11, 12), with packed rings (34), and with
 * both. */
static void
test_log_all_combinations(void **state)
{
	static const unsigned offl[] = {0, 1, 7, 8, 11, 12};
	const uint64_t base = (1ULL << 32) | (1ULL << 15);
	struct vu_msg m;
	unsigned i;

	(void)state;
	port_init();
	memset(&m, 0, sizeof(m));
	m.request = 2;
	m.size = 8;
	m.u.u64 = base | (1ULL << 26);
	check(&m);
	assert_null(vport_msg_check(&port, &m));
	for (i = 0; i < sizeof(offl) / sizeof(offl[0]); i++) {
		m.u.u64 = base | (1ULL << offl[i]);
		check(&m);
		assert_null(vport_msg_check(&port, &m));
		m.u.u64 |= 1ULL << 26;
		check(&m);
		assert_null(vport_msg_check(&port, &m));
		m.u.u64 |= 1ULL << 34;
		check(&m);
		assert_null(vport_msg_check(&port, &m));
	}
	m.u.u64 = base | (1ULL << 34) | (1ULL << 26);
	check(&m);
	assert_null(vport_msg_check(&port, &m));
}

static void
test_mem_table(void **state)
{
	struct vu_msg m;
	uint32_t n, f;

	(void)state;
	port_init();
	for (n = 0; n <= 9; n++) {
		memset(&m, 0, sizeof(m));
		m.request = 5;
		m.u.mem.nregions = n;
		m.size = 8 + 32 * (n > 8 ? 8 : n);
		for (f = 0; f < n && f < 8; f++)
			m.u.mem.r[f] = (struct vu_region){0x100000ull * (f + 1),
				0x100000, 0x7f0000000000ull, 0};
		check(&m); /* adjacent regions: fine */
		assert_int_equal(
			vport_msg_check(&port, &m) == NULL, n >= 1 && n <= 8);
		m.size += 32;
		check(&m);
	}
	/* each field wrapping, an empty region, an overlap */
	for (f = 0; f < 5; f++) {
		memset(&m, 0, sizeof(m));
		m.request = 5;
		m.u.mem.nregions = 2;
		m.size = 8 + 64;
		m.u.mem.r[0] =
			(struct vu_region){0x100000, 0x100000, 0x1000, 0};
		m.u.mem.r[1] =
			(struct vu_region){0x200000, 0x100000, 0x1000, 0};
		if (f == 0)
			m.u.mem.r[1].gpa = UINT64_MAX - 0xfff;
		if (f == 1)
			m.u.mem.r[1].uaddr = UINT64_MAX - 0xfff;
		if (f == 2)
			m.u.mem.r[1].offset = UINT64_MAX - 0xfff;
		if (f == 3)
			m.u.mem.r[1].size = 0;
		if (f == 4)
			m.u.mem.r[1].gpa = 0x1ff000;
		check(&m);
		assert_non_null(vport_msg_check(&port, &m));
	}
}

static void
test_random(void **state)
{
	struct vu_msg m;
	struct tl_rng r;
	uint32_t i, k;

	(void)state;
	port_init();
	memset(&m, 0, sizeof(m));
	tl_rng_init(&r, "test_vport_msg", 6);
	for (i = 0; i < 200000; i++) {
		uint8_t *b = (uint8_t *)&m;

		for (k = 0; k < MSG_BYTES; k++)
			b[k] = (uint8_t)tl_rand32(&r);
		m.request = tl_rand32(&r) % 24;
		port.mtu_limit = tl_rand32(&r) % 2 ? 0 : 1450;
		m.size = tl_rand32(&r) % 3 == 0 ? 8 : tl_rand32(&r) % 300;
		if (m.request == 5) {
			m.u.mem.nregions = tl_rand32(&r) % 10;
			m.size = 8 + 32 * (m.u.mem.nregions % 9);
			for (k = 0; k < 8; k++) /* mostly sane ranges */
				if (tl_rand32(&r) % 4) {
					m.u.mem.r[k].gpa = (uint64_t)k << 30;
					m.u.mem.r[k].size = 1u << 20;
					m.u.mem.r[k].uaddr >>= 20;
					m.u.mem.r[k].offset >>= 20;
				}
		} else if (m.request == 20 && tl_rand32(&r) % 2) {
			m.u.u64 = 1400 + tl_rand32(&r) % 100; /* near 1450 */
		} else {
			m.u.state.index &= tl_rand32(&r) % 2 ? 0x3 : 0xffff;
			if (tl_rand32(&r) % 2)
				m.u.state.num = 1u << (tl_rand32(&r) % 17);
		}
		check(&m);
	}
}

/*
 * The product's request table against the tests' own (vu_front.h): the
 * same requests, under the same names (log lines name messages by them).
 */
static void
test_names(void **state)
{
	uint32_t r;

	(void)state;
	for (r = 0; r < 64; r++) {
		const struct vport_msg_row *row = vport_msg_row(r);
		const char *name = vu_req_name(r);

		if ((row != NULL) != (name != NULL))
			fail_msg("request %u: vsw %s, tests %s", r,
				row ? row->name : "unknown",
				name ? name : "unknown");
		if (row != NULL)
			assert_string_equal(row->name, name);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_mem_table),
		cmocka_unit_test(test_ring_cap),
		cmocka_unit_test(test_mtu),
		cmocka_unit_test(test_log_all_combinations),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
