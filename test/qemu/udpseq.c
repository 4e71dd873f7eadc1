/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * udpseq: a sequence-numbered UDP stream, for the test guests (built
 * static on the host by test/qemu/build_image.py, /bin/udpseq in the
 * image). It sees what TCP hides: a datagram delivered twice, out of
 * order, from an older stream, or with a payload that is not its own
 * (a stale or half-stale RX buffer after a live migration). One path
 * never reorders or duplicates; loss is allowed and counted.
 *
 *   udpseq send ADDR PORT PPS SECONDS SIZE NONCE
 *   udpseq recv PORT SECONDS NONCE
 *
 * A datagram is SIZE bytes (a multiple of 8, >= 24): NONCE, its sequence
 * number, then words derived from both; the sender ends with a few
 * datagrams of sequence END. The receiver prints one line per anomaly
 * (the first 20) and a summary, and exits 1 when it saw any.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define END UINT64_MAX
#define MAX_SIZE 9000
#define SHOW 20

static uint64_t
word(uint64_t nonce, uint64_t seq, uint64_t i)
{
	return (seq * 0x9e3779b97f4a7c15ull) ^
	       (nonce + i * 0xff51afd7ed558ccdull);
}

static void
fill(uint64_t *w, size_t n, uint64_t nonce, uint64_t seq)
{
	size_t i;

	w[0] = nonce;
	w[1] = seq;
	for (i = 2; i < n; i++)
		w[i] = word(nonce, seq, i);
}

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static int
do_send(const char *addr, int port, double pps, double secs, size_t size,
	uint64_t nonce)
{
	static uint64_t w[MAX_SIZE / 8];
	struct sockaddr_in to = {.sin_family = AF_INET};
	struct timespec next;
	uint64_t seq = 0, errs = 0;
	long period = (long)(1e9 / pps);
	double end = now() + secs;
	int fd, i;

	to.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || inet_pton(AF_INET, addr, &to.sin_addr) != 1 ||
		connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0) {
		perror("udpseq send");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (now() < end) {
		fill(w, size / 8, nonce, seq);
		if (send(fd, w, size, 0) != (ssize_t)size)
			errs++; /* a full socket or ring: loss, counted */
		seq++;
		next.tv_nsec += period;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	for (i = 0; i < 5; i++) {
		fill(w, 3, nonce, END);
		send(fd, w, 24, 0);
		usleep(20000);
	}
	printf("udpseq: sent %llu send errors %llu\n", (unsigned long long)seq,
		(unsigned long long)errs);
	return 0;
}

/* Why a datagram is not the next of its stream, or NULL. */
static const char *
judge(const uint64_t *w, ssize_t len, uint64_t nonce, int have_last,
	uint64_t last)
{
	ssize_t i;

	if (len < 24 || len % 8 != 0)
		return "bad length";
	if (w[0] != nonce)
		return "another stream's datagram";
	if (have_last && w[1] <= last)
		return "sequence not after the last";
	for (i = 2; i < len / 8; i++)
		if (w[i] != word(nonce, w[1], i))
			return "payload not its sequence's";
	return NULL;
}

static int
do_recv(int port, double secs, uint64_t nonce)
{
	static uint64_t w[MAX_SIZE / 8 + 1];
	struct sockaddr_in me = {.sin_family = AF_INET};
	uint64_t got = 0, bad = 0, last = 0;
	int fd, buf = 4 << 20, have_last = 0, ended = 0;
	double end = now() + secs;

	me.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 ||
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf)) != 0 ||
		bind(fd, (struct sockaddr *)&me, sizeof(me)) != 0) {
		perror("udpseq recv");
		return 2;
	}
	printf("udpseq: listening\n");
	fflush(stdout);
	while (!ended && now() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		const char *why;
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(fd, w, sizeof(w), 0);
		if (n < 0)
			continue;
		if (n == 24 && w[0] == nonce && w[1] == END &&
			w[2] == word(nonce, END, 2)) {
			ended = 1;
			continue;
		}
		why = judge(w, n, nonce, have_last, last);
		if (why != NULL) {
			if (bad++ < SHOW)
				printf("udpseq: BAD %s: len %zd nonce %#llx "
				       "seq "
				       "%llu after %llu\n",
					why, n, (unsigned long long)w[0],
					(unsigned long long)w[1],
					(unsigned long long)last);
			continue;
		}
		got++;
		last = w[1];
		have_last = 1;
	}
	printf("udpseq: received %llu lost %llu bad %llu last %llu%s\n",
		(unsigned long long)got,
		(unsigned long long)(have_last ? last + 1 - got : 0),
		(unsigned long long)bad, (unsigned long long)last,
		ended ? "" : " (no end mark)");
	return bad != 0;
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 8 && strcmp(argv[1], "send") == 0) {
		size_t size = strtoul(argv[6], NULL, 0);

		if (size < 24 || size % 8 != 0 || size > MAX_SIZE) {
			fprintf(stderr,
				"udpseq: SIZE: a multiple of 8 in "
				"[24, %d]\n",
				MAX_SIZE);
			return 2;
		}
		return do_send(argv[2], atoi(argv[3]), atof(argv[4]),
			atof(argv[5]), size, strtoull(argv[7], NULL, 0));
	}
	if (argc == 5 && strcmp(argv[1], "recv") == 0)
		return do_recv(atoi(argv[2]), atof(argv[3]),
			strtoull(argv[4], NULL, 0));
	fprintf(stderr, "usage: udpseq send ADDR PORT PPS SECONDS SIZE NONCE\n"
			"       udpseq recv PORT SECONDS NONCE\n");
	return 2;
}
