/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * vswctl: sends one command to vswd's control socket and prints the reply.
 *
 *   vswctl [--run-dir DIR | -s SOCKET] [-t SECONDS] COMMAND [ARG...] [--json]
 *
 * Exit status: 0 when the command succeeded, 1 when vswd answered with an
 * error, 2 when vswd could not be reached or the reply was malformed.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <vsw/ctl.h>
#include <vsw/vswd.h>

static int timeout_ms = 30000;

static void
usage(FILE *f)
{
	fprintf(f, "usage: vswctl [OPTIONS] COMMAND [ARG...] [--json]\n"
		"  -r, --run-dir DIR   vswd's run directory (default %s)\n"
		"  -s, --socket PATH   the control socket (default "
		"DIR/%s)\n"
		"  -t, --timeout SEC   give up waiting for a reply (default "
		"30)\n"
		"  -h, --help\n"
		"'vswctl help' lists vswd's commands; --json after any of "
		"them\nasks for a JSON reply.\n",
		VSWD_RUN_DIR_DEFAULT, VSWD_CTL_SOCKET_NAME);
}

/* Append word to line, single-quoted when it needs to be. */
static int
append_word(char *line, size_t cap, size_t *len, const char *w)
{
	bool plain = *w != '\0' && strpbrk(w, " \t'\"\\#") == NULL;
	size_t need = strlen(w) * 4 + 4;

	if (*len + need >= cap)
		return -1;
	if (*len > 0)
		line[(*len)++] = ' ';
	if (plain) {
		*len += (size_t)sprintf(line + *len, "%s", w);
		return 0;
	}
	line[(*len)++] = '\'';
	for (; *w != '\0'; w++) {
		if (*w == '\'') {
			/* close, escaped quote, reopen */
			memcpy(line + *len, "'\\''", 4);
			*len += 4;
		} else {
			line[(*len)++] = *w;
		}
	}
	line[(*len)++] = '\'';
	line[*len] = '\0';
	return 0;
}

static int
connect_unix(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Read exactly len bytes, or until EOF; bounded by the timeout. */
static ssize_t
read_full(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, timeout_ms) <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -1 : (ssize_t)got;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/* Read the "<status> <len>\n" header one byte at a time. */
static int
read_header(int fd, int *status, size_t *len)
{
	char hdr[32];
	size_t i = 0;

	while (i < sizeof(hdr) - 1) {
		if (read_full(fd, &hdr[i], 1) != 1)
			return -1;
		if (hdr[i] == '\n')
			break;
		i++;
	}
	hdr[i] = '\0';
	if (sscanf(hdr, "%d %zu", status, len) != 2 || *len > (64u << 20))
		return -1;
	return 0;
}

static int
run(const char *sock, char *line)
{
	int fd, status;
	size_t len;
	char *body;

	fd = connect_unix(sock);
	if (fd < 0) {
		fprintf(stderr, "vswctl: cannot connect to %s: %s (is vswd "
			"running? see --run-dir)\n", sock, strerror(errno));
		return 2;
	}
	if (send(fd, line, strlen(line), MSG_NOSIGNAL) < 0 ||
			read_header(fd, &status, &len) < 0) {
		fprintf(stderr, "vswctl: no valid reply from %s: %s\n", sock,
			strerror(errno));
		close(fd);
		return 2;
	}
	body = malloc(len + 1);
	if (body == NULL || read_full(fd, body, len) != (ssize_t)len) {
		fprintf(stderr, "vswctl: truncated reply from %s\n", sock);
		free(body);
		close(fd);
		return 2;
	}
	close(fd);
	fwrite(body, 1, len, status == 0 ? stdout : stderr);
	free(body);
	return status == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"run-dir", required_argument, NULL, 'r'},
		{"socket", required_argument, NULL, 's'},
		{"timeout", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char sock[256] = "";
	const char *run_dir = VSWD_RUN_DIR_DEFAULT;
	char line[VSW_CTL_LINE_MAX];
	size_t len = 0;
	int c;

	/* '+': stop at the command, so its own options (--json) pass. */
	while ((c = getopt_long(argc, argv, "+r:s:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			run_dir = optarg;
			break;
		case 's':
			snprintf(sock, sizeof(sock), "%s", optarg);
			break;
		case 't':
			timeout_ms = atoi(optarg) * 1000;
			if (timeout_ms <= 0)
				timeout_ms = 30000;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (sock[0] == '\0')
		snprintf(sock, sizeof(sock), "%s/%s", run_dir,
			VSWD_CTL_SOCKET_NAME);
	line[0] = '\0';
	for (int i = optind; i < argc; i++) {
		if (append_word(line, sizeof(line) - 1, &len, argv[i]) < 0) {
			fprintf(stderr, "vswctl: command too long\n");
			return 2;
		}
	}
	line[len++] = '\n';
	line[len] = '\0';
	return run(sock, line);
}
