/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hostile_frontend: a vhost-user front-end that connects to a running
 * vswd's port socket and either behaves (traffic mode: a source and a sink
 * on two ports, counted) or runs one named hostile scenario.
 *
 *   hostile_frontend list
 *   hostile_frontend run NAME SOCKET
 *   hostile_frontend traffic SOCKET_SRC SOCKET_DST
 *       stdin: "mark" -> pause, drain, print "sent S received R bad B
 *       inflight I good G dup D missing M", resume; "quit" -> the same,
 *       then exit; "window" -> print "received R offered O us T" (O:
 *       frames the source tried to send, T: monotonic) at once, without
 *       pausing. Every frame is checked (sequence number, length,
 *       CRC-32): bad = corrupt, dup = duplicate or reordered, missing =
 *       sent - good.
 *
 * Single-threaded. Trusts nothing vswd writes beyond what vu_front checks.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hostile.h"

#define FRAME_MAGIC 0x76737768u /* "vswh" */

void
hs_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("note: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
}

void
hs_sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

int
hs_closed(struct hs_ctx *c)
{
	if (!vu_peer_closed(&c->f, 3000)) {
		hs_note("connection still open after a bad message");
		return 1;
	}
	return 0;
}

int
hs_opened(struct hs_ctx *c)
{
	int rc = vu_open(&c->f, c->path);

	if (rc != 0)
		hs_note("connect: %s", strerror(-rc));
	return rc;
}

int
hs_negotiated(struct hs_ctx *c)
{
	if (hs_opened(c) != 0 ||
		vu_negotiate(&c->f, VU_FEATURES_DEFAULT) != 0 ||
		vu_mem_table(&c->f) != 0) {
		hs_note("set-up failed");
		return -1;
	}
	return 0;
}

int
hs_sent_closes(struct hs_ctx *c, uint32_t req, const void *payload,
	uint32_t size, int nfds)
{
	int fds[3];

	if (hs_negotiated(c) != 0)
		return 1;
	fds[0] = fds[1] = fds[2] = c->f.memfd;
	vu_send(&c->f, req, payload, size, fds, nfds);
	return hs_closed(c);
}

void
hs_frame(unsigned char *buf, unsigned len, unsigned long long seq)
{
	static const unsigned char hdr[14] = {
		2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xb5};
	unsigned int magic = FRAME_MAGIC;

	memset(buf, 0, len);
	memcpy(buf, hdr, sizeof(hdr));
	memcpy(buf + 14, &magic, 4);
	memcpy(buf + 18, &seq, 8);
}

/*
 * Traffic frames carry their own proof: after the Ethernet header, magic,
 * sequence number, length, a pattern derived from the sequence number and
 * a CRC-32 (zlib's) over everything after the Ethernet header. The sink
 * checks each one, so a corrupted, truncated, duplicated or reordered frame
 * is an error, and a missing one must be a drop that vswd counted.
 */
#define TF_HDR 30u /* eth 14, magic 4, seq 8, len 4 */
#define TF_MIN (TF_HDR + 4u)
#define TF_MAX (VU_BUF_LEN - VU_HDR_LEN)

static uint32_t crc_table[256];

static void
crc_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		for (c = i, j = 0; j < 8; j++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
}

static uint32_t
crc32_buf(const uint8_t *p, uint32_t n)
{
	uint32_t c = 0xffffffffu;

	while (n-- > 0)
		c = crc_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

/* Sizes sweep 60 .. TF_MAX by a stride coprime to the range. */
static uint32_t
tf_len(unsigned long long seq)
{
	return 60u + (uint32_t)((seq * 37u) % (TF_MAX - 60u + 1u));
}

static void
tf_build(uint8_t *buf, uint32_t len, unsigned long long seq)
{
	uint32_t i, crc;

	hs_frame(buf, TF_HDR, seq); /* eth header, magic, seq */
	memcpy(buf + 26, &len, 4);
	for (i = TF_HDR; i < len - 4; i++)
		buf[i] = (uint8_t)(seq * 131u + i);
	crc = crc32_buf(buf + 14, len - 18);
	memcpy(buf + len - 4, &crc, 4);
}

struct sink {
	unsigned long long next_seq, good, bad, dup;
};

static void
sink_rx(void *ctx, const uint8_t *frame, uint32_t len)
{
	struct sink *s = ctx;
	unsigned long long seq;
	uint32_t magic, flen, crc;

	if (len < TF_MIN) {
		s->bad++;
		return;
	}
	memcpy(&magic, frame + 14, 4);
	memcpy(&seq, frame + 18, 8);
	memcpy(&flen, frame + 26, 4);
	memcpy(&crc, frame + len - 4, 4);
	if (magic != FRAME_MAGIC || flen != len || flen != tf_len(seq) ||
		crc != crc32_buf(frame + 14, len - 18)) {
		s->bad++;
		return;
	}
	/* one queue, in order: going back is a duplicate or a reordering;
	 * gaps are drops, which vswd must have counted */
	if (seq < s->next_seq) {
		s->dup++;
		return;
	}
	s->good++;
	s->next_seq = seq + 1;
}

/* Stop sending; wait until vswd took every TX frame and RX went quiet. */
static void
drain(struct vu_front *src, struct vu_front *dst, struct sink *s)
{
	int quiet = 0, i;

	for (i = 0; i < 10000 && vu_tx_inflight(src) != 0; i++) {
		vu_rx_poll(dst, sink_rx, s);
		vu_rx_refill(dst);
		hs_sleep_ms(1);
	}
	while (quiet < 200) {
		quiet = vu_rx_poll(dst, sink_rx, s) ? 0 : quiet + 1;
		vu_rx_refill(dst);
		hs_sleep_ms(1);
	}
}

static int
traffic(const char *src_path, const char *dst_path)
{
	struct vu_front src, dst;
	struct sink s = {0, 0, 0, 0};
	unsigned long long seq = 0, offered = 0;
	uint8_t frame[TF_MAX];
	char line[64];
	int rc;

	if ((rc = vu_start(&dst, dst_path, VU_FEATURES_DEFAULT, 256)) != 0 ||
		(rc = vu_start(&src, src_path, VU_FEATURES_DEFAULT, 256)) !=
			0) {
		fprintf(stderr, "traffic: set-up failed: %s\n", strerror(-rc));
		return 1;
	}
	crc_init();
	vu_rx_refill(&dst);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		struct pollfd p = {.fd = 0, .events = POLLIN};
		int i;

		/* 16 frames a millisecond at most: steady, leaves CPU;
		 * what a full ring refused counts as offered too */
		offered += 16;
		for (i = 0; i < 16; i++) {
			tf_build(frame, tf_len(seq), seq);
			if (vu_tx(&src, frame, tf_len(seq)) != 0)
				break;
			seq++;
		}
		vu_tx_reclaim(&src);
		vu_rx_poll(&dst, sink_rx, &s);
		vu_rx_refill(&dst);
		if (poll(&p, 1, 1) <= 0)
			continue;
		if (fgets(line, sizeof(line), stdin) == NULL)
			break;
		if (strncmp(line, "window", 6) == 0) {
			/* no pause: a point of the receive rate */
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			printf("received %llu offered %llu us %lld\n",
				(unsigned long long)dst.rx_frames, offered,
				(long long)ts.tv_sec * 1000000LL +
					ts.tv_nsec / 1000);
			fflush(stdout);
			continue;
		}
		drain(&src, &dst, &s);
		/* missing: sent, never received intact (drops, or lost) */
		printf("sent %llu received %llu bad %llu inflight %u good %llu "
			"dup %llu missing %llu\n",
			(unsigned long long)src.tx_frames,
			(unsigned long long)dst.rx_frames,
			(unsigned long long)(s.bad + dst.rx_bad),
			vu_tx_inflight(&src), s.good, s.dup,
			(unsigned long long)src.tx_frames - s.good);
		fflush(stdout);
		if (strncmp(line, "quit", 4) == 0)
			break;
	}
	vu_close(&src);
	vu_close(&dst);
	return 0;
}

/* Every scenario file's table, in listing order. */
#define HS_TABLE(t) {hs_##t##_scenarios, &hs_n_##t}
static const struct {
	const struct hs_scenario *s;
	const size_t *n;
} tables[] = {
	HS_TABLE(desc), HS_TABLE(msg), HS_TABLE(vring), HS_TABLE(fd),
	HS_TABLE(budget),
	HS_TABLE(mem), HS_TABLE(hdr), HS_TABLE(packed), HS_TABLE(log),
	HS_TABLE(callfd),
};

static const struct hs_scenario *
find(const char *name)
{
	size_t t, i;

	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (i = 0; i < *tables[t].n; i++)
			if (strcmp(tables[t].s[i].name, name) == 0)
				return &tables[t].s[i];
	return NULL;
}

static void
list(void)
{
	size_t t, i;

	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (i = 0; i < *tables[t].n; i++)
			printf("%s\t%s\t%s\n", tables[t].s[i].name,
				tables[t].s[i].counters, tables[t].s[i].what);
}

int
main(int argc, char **argv)
{
	const struct hs_scenario *s;
	struct hs_ctx c;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && strcmp(argv[1], "list") == 0) {
		list();
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "traffic") == 0)
		return traffic(argv[2], argv[3]);
	if (argc != 4 || strcmp(argv[1], "run") != 0) {
		fprintf(stderr,
			"usage: %s list | run NAME SOCKET | "
			"traffic SRC_SOCKET DST_SOCKET\n",
			argv[0]);
		return 2;
	}
	s = find(argv[2]);
	if (s == NULL) {
		fprintf(stderr, "no scenario '%s'\n", argv[2]);
		return 2;
	}
	memset(&c, 0, sizeof(c));
	c.f.sock = c.f.memfd = -1;
	c.f.kick[0] = c.f.kick[1] = c.f.call[0] = c.f.call[1] = -1;
	c.path = argv[3];
	rc = s->run(&c);
	vu_close(&c.f);
	printf("%s: %s\n", s->name,
		rc == 0 ? "done" : "FRONT-END CHECK FAILED");
	return rc == 0 ? 0 : 1;
}
