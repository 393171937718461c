// SPDX-License-Identifier: GPL-2.0
/*
 * Checked transfers between two hosts, for the two-VM tests
 * (sdp_two_hosts.sh): a server on one host, a client on the other.
 *
 *   sdp_xfer server [-t] [-n CONNS] PORT
 *   sdp_xfer client [-t] [-n CONNS] [-b BYTES] [-K] [-Q TOS] HOST PORT
 *
 * Each connection carries BYTES of a keyed stream each way at once, with
 * random write and read sizes; each side then shuts down its sending half
 * and reads to EOF, and checks every byte it got. -t uses AF_INET TCP (the
 * oracle) instead of SDP; -K sets a short keepalive (1 s idle, 1 s apart,
 * 3 probes) and TCP_USER_TIMEOUT 8 s, for the dead-peer test; -Q sets IP_TOS
 * before connecting.
 *
 * One line per connection: "conn I ok|FAIL <what> transport T reason R
 * tx N rx N" (SDP_INFO of this end); exit 0 only if every connection
 * moved every byte intact.
 */
#include <netdb.h>
#include <netinet/tcp.h>
#include <pthread.h>

#include "sdp_util.h"
#include "sdp_gen.h"

#define MAX_CONNS	64
#define IO_MAX		(256 << 10)

struct conn {
	int fd, idx;
	unsigned long long bytes, tx_key, rx_key;
	unsigned long long sent, got;
	long long bad;
	int tx_err, rx_err;
};

static void *writer(void *arg)
{
	struct conn *c = arg;
	unsigned char *buf = malloc(IO_MAX);
	unsigned int seed = c->idx * 7 + 1;

	while (buf && c->sent < c->bytes) {
		size_t len = random_size(&seed, IO_MAX);

		if (len > c->bytes - c->sent)
			len = c->bytes - c->sent;
		stream_fill(c->tx_key, c->sent, buf, len);
		if (sdp_write_full(c->fd, buf, len) != (ssize_t)len) {
			c->tx_err = errno ? errno : EPIPE;
			break;
		}
		c->sent += len;
	}
	if (!c->tx_err && shutdown(c->fd, SHUT_WR))
		c->tx_err = errno;
	free(buf);
	return NULL;
}

/* Reads to EOF; checks every byte. */
static void reader(struct conn *c)
{
	unsigned char *buf = malloc(IO_MAX);
	unsigned int seed = c->idx * 13 + 5;
	ssize_t n;

	c->bad = -1;
	while (buf) {
		n = recv(c->fd, buf, random_size(&seed, IO_MAX), 0);
		if (n <= 0) {
			if (n < 0)
				c->rx_err = errno;
			break;
		}
		if (c->bad < 0)
			c->bad = stream_check(c->rx_key, c->got, buf, n);
		c->got += n;
	}
	free(buf);
}

static void *run_conn(void *arg)
{
	struct conn *c = arg;
	pthread_t w;

	if (pthread_create(&w, NULL, writer, c)) {
		c->tx_err = EAGAIN;
		return NULL;
	}
	reader(c);
	pthread_join(w, NULL);
	return NULL;
}

static bool report(struct conn *c)
{
	struct sdp_info info = {};
	bool ok = !c->tx_err && !c->rx_err && c->bad < 0 &&
		  c->sent == c->bytes && c->got == c->bytes;

	sdp_info(c->fd, &info);
	printf("conn %d %s", c->idx, ok ? "ok" : "FAIL");
	if (!ok)
		printf(" sent %llu/%llu (%s) got %llu (%s) bad-at %lld", c->sent, c->bytes,
		       c->tx_err ? strerror(c->tx_err) : "-", c->got,
		       c->rx_err ? strerror(c->rx_err) : "-", c->bad);
	printf(" transport %u reason %u tx %llu rx %llu\n", info.transport,
	       info.fallback_reason, (unsigned long long)info.tx_bytes,
	       (unsigned long long)info.rx_bytes);
	return ok;
}

/* The header a client sends first: bytes each way, and its key. */
struct hdr {
	unsigned long long bytes, key;
};

static void keepalive(int fd)
{
	sdp_setint(fd, SOL_SOCKET, SO_KEEPALIVE, 1);
	sdp_setint(fd, SOL_TCP, TCP_KEEPIDLE, 1);
	sdp_setint(fd, SOL_TCP, TCP_KEEPINTVL, 1);
	sdp_setint(fd, SOL_TCP, TCP_KEEPCNT, 3);
	sdp_setint(fd, SOL_TCP, TCP_USER_TIMEOUT, 8000);
}

static int usage(void)
{
	fprintf(stderr, "usage: sdp_xfer server [-t] [-n CONNS] PORT\n"
			"       sdp_xfer client [-t] [-n CONNS] [-b BYTES] [-K] [-Q TOS] HOST PORT\n");
	return 2;
}

int main(int argc, char **argv)
{
	static struct conn conns[MAX_CONNS];
	pthread_t th[MAX_CONNS];
	unsigned long long bytes = 1 << 20;
	bool server, tcp = false, ka = false, all = true;
	int n = 1, i, opt, family, tos = -1;
	struct sockaddr_storage ss;
	socklen_t len;

	if (argc < 2)
		return usage();
	server = !strcmp(argv[1], "server");
	optind = 2;
	while ((opt = getopt(argc, argv, "tn:b:KQ:")) != -1) {
		switch (opt) {
		case 't': tcp = true; break;
		case 'n': n = atoi(optarg); break;
		case 'b': bytes = strtoull(optarg, NULL, 0); break;
		case 'K': ka = true; break;
		case 'Q': tos = strtol(optarg, NULL, 0); break;
		default: return usage();
		}
	}
	if (n < 1 || n > MAX_CONNS || argc - optind != (server ? 1 : 2))
		return usage();
	family = tcp ? AF_INET : sdp_family();
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (server) {
		int l = socket(family, SOCK_STREAM, 0);

		len = sdp_addr(&ss, "0.0.0.0", atoi(argv[optind]));
		sdp_setint(l, SOL_SOCKET, SO_REUSEADDR, 1);
		if (bind(l, (struct sockaddr *)&ss, len) || listen(l, MAX_CONNS))
			l = -1;
		if (l < 0) {
			perror("listen");
			return 1;
		}
		printf("listening\n");
		for (i = 0; i < n; i++) {
			struct hdr h;

			conns[i].idx = i;
			conns[i].fd = accept(l, NULL, NULL);
			if (conns[i].fd < 0 ||
			    sdp_read_full(conns[i].fd, &h, sizeof(h)) != sizeof(h)) {
				perror("accept");
				return 1;
			}
			conns[i].bytes = h.bytes;
			conns[i].rx_key = h.key;
			conns[i].tx_key = h.key + 1;
			if (pthread_create(&th[i], NULL, run_conn, &conns[i]))
				return 1;
		}
		close(l);
	} else {
		len = sdp_addr(&ss, argv[optind], atoi(argv[optind + 1]));
		for (i = 0; i < n; i++) {
			struct hdr h = { .bytes = bytes, .key = 1000 + 2 * i };

			conns[i] = (struct conn){ .idx = i, .bytes = bytes,
						  .tx_key = h.key, .rx_key = h.key + 1 };
			conns[i].fd = socket(family, SOCK_STREAM, 0);
			if (ka)
				keepalive(conns[i].fd);
			if (tos >= 0 && setsockopt(conns[i].fd, SOL_IP, IP_TOS, &tos, sizeof(tos))) {
				printf("conn %d FAIL IP_TOS: %s\n", i, strerror(errno));
				return 1;
			}
			if (connect(conns[i].fd, (struct sockaddr *)&ss, len) ||
			    sdp_write_full(conns[i].fd, &h, sizeof(h)) != sizeof(h)) {
				printf("conn %d FAIL connect: %s\n", i, strerror(errno));
				return 1;
			}
			if (pthread_create(&th[i], NULL, run_conn, &conns[i]))
				return 1;
		}
	}
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		all &= report(&conns[i]);
		close(conns[i].fd);
	}
	return all ? 0 : 1;
}
