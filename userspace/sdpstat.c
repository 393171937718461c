// SPDX-License-Identifier: GPL-2.0
/*
 * sdpstat: SDP sockets listed as ss lists TCP's (sock_diag), the module's
 * counters, its RDMA devices, and a one-line check of a peer. See sdpstat(8).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sdp_diag.h"

static const char *const state_names[] = {
	[TCP_ESTABLISHED] = "ESTAB", [TCP_SYN_SENT] = "SYN-SENT",
	[TCP_SYN_RECV] = "SYN-RECV", [TCP_FIN_WAIT1] = "FIN-WAIT-1",
	[TCP_FIN_WAIT2] = "FIN-WAIT-2", [TCP_TIME_WAIT] = "TIME-WAIT",
	[TCP_CLOSE] = "UNCONN", [TCP_CLOSE_WAIT] = "CLOSE-WAIT",
	[TCP_LAST_ACK] = "LAST-ACK", [TCP_LISTEN] = "LISTEN",
	[TCP_CLOSING] = "CLOSING",
};
#define NSTATES	((int)(sizeof(state_names) / sizeof(state_names[0])))

/* enum sdp_fallback_reason: the counter's name, and what it means. */
static const struct {
	const char *name, *why;
} reasons[SDP_FB_MAX] = {
	[SDP_FB_NONE] = { "", "" },
	[SDP_FB_POLICY] = { "FallbackPolicy", "policy said TCP (net.sdp.enabled is 0)" },
	[SDP_FB_LOOPBACK] = { "FallbackLoopback", "a loopback destination: SDP takes TCP there" },
	[SDP_FB_NO_DEVICE] = { "FallbackNoDevice", "no RDMA device routes to %s" },
	[SDP_FB_NO_ROUTE] = { "FallbackNoRoute", "address or route resolution to %s failed over RDMA" },
	[SDP_FB_REJECTED] = { "FallbackRejected",
			      "the peer refused RDMA: nothing listens over SDP on %s (no sdp there, or a plain TCP server)" },
	[SDP_FB_TIMEOUT] = { "FallbackTimeout",
			     "no RDMA answer from %s within net.sdp.connect_timeout_ms (resolution or the peer timed out)" },
	[SDP_FB_VERSION] = { "FallbackVersion", "the peer at %s speaks an incompatible SDP" },
	[SDP_FB_CACHED] = { "FallbackCached",
			    "a recent RDMA attempt to %s failed: negative cache (net.sdp.negative_cache_ttl)" },
	[SDP_FB_PEER_TCP] = { "FallbackPeerTcp", "accepted from a plain TCP client" },
	[SDP_FB_NO_RDMA_LISTEN] = { "FallbackNoRdmaListen", "could not listen over RDMA" },
	[SDP_FB_RESOURCES] = { "FallbackResources", "local RDMA resources failed (QP, CQ, memory)" },
	[SDP_FB_PORT] = { "FallbackPort",
			  "rdma_cm's other users held every port tried (ss -n, rdma resource show cm_id)" },
};

static const char *const transports[] = { "pending", "rdma", "tcp" };

static struct {
	bool all, listening, extended, numeric, json;
	__u32 states;
	struct inet_diag_sockid id;
	int interval, count;
} opt = { .count = -1 };

static const char *fb_name(unsigned int r)
{
	return r < SDP_FB_MAX ? reasons[r].name : "?";
}

static const char *tr_name(unsigned int t)
{
	return t < 3 ? transports[t] : "?";
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "sdpstat: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* "ADDR:PORT" of one end, IPv6 in brackets; "*" for the unspecified. */
static void fmt_end(char *buf, size_t len, int family, const __be32 *addr, __be16 port)
{
	char a[INET6_ADDRSTRLEN] = "*", p[32];
	static const __be32 zero[4];
	struct servent *se;

	if (memcmp(addr, zero, family == AF_INET6 ? 16 : 4))
		inet_ntop(family, addr, a, sizeof(a));
	se = port && !opt.numeric ? getservbyport(port, "tcp") : NULL;
	if (se)
		snprintf(p, sizeof(p), "%s", se->s_name);
	else if (port)
		snprintf(p, sizeof(p), "%u", ntohs(port));
	else
		snprintf(p, sizeof(p), "*");
	snprintf(buf, len, family == AF_INET6 && strcmp(a, "*") ? "[%s]:%s" : "%s:%s", a, p);
}

/* Every SDP socket the kernel reports for the filters, into *rows. */
static int diag_dump(struct sdp_diag_row **rows)
{
	static char buf[32768] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct sdp_diag_req req = { .sdiag_states = opt.states, .id = opt.id };
	int fd = sdp_diag_open(&req), n = 0, cap = 0;

	if (fd < 0)
		die("netlink: %s", strerror(-fd));
	*rows = NULL;
	for (;;) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (len < 0)
			die("netlink: %s", strerror(errno));
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				close(fd);
				return n;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				int err = -((struct nlmsgerr *)NLMSG_DATA(h))->error;

				die("sock_diag: %s%s", strerror(err),
				    err == ENOENT ? " (is the sdp module loaded?)" : "");
			}
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				*rows = realloc(*rows, cap * sizeof(**rows));
				if (!*rows)
					die("out of memory");
			}
			if (sdp_diag_parse(h, &(*rows)[n++]))
				die("sock_diag: a malformed message (%u bytes)", h->nlmsg_len);
		}
	}
}

static const char *state_name(int s)
{
	return s < NSTATES && state_names[s] ? state_names[s] : "?";
}

static void json_str(const char *key, const char *val, bool comma)
{
	printf("\"%s\":\"", key);
	for (; *val; val++) {
		unsigned char c = *val;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	printf("\"%s", comma ? "," : "");
}

static void print_socks(void)
{
	struct sdp_diag_row *rows;
	int i, n = diag_dump(&rows);
	bool first = true;

	if (opt.json)
		printf("[");
	else
		printf("%-10s %6s %6s %-26s %-26s %s\n", "State", "Recv-Q", "Send-Q",
		       "Local Address:Port", "Peer Address:Port", "Transport");
	for (i = 0; i < n; i++) {
		struct sdp_diag_row *r = &rows[i];
		const struct sdp_info *in = &r->info;
		char l[80], p[80];

		fmt_end(l, sizeof(l), r->m.sdiag_family, r->m.id.idiag_src, r->m.id.idiag_sport);
		fmt_end(p, sizeof(p), r->m.sdiag_family, r->m.id.idiag_dst, r->m.id.idiag_dport);
		if (opt.json) {
			printf("%s{", first ? "" : ",");
			first = false;
			json_str("state", state_name(r->m.sdiag_state), true);
			json_str("local", l, true);
			json_str("peer", p, true);
			json_str("transport", tr_name(r->m.sdiag_transport), true);
			json_str("fallback", fb_name(r->m.sdiag_fallback), true);
			printf("\"recv_q\":%u,\"send_q\":%u,\"uid\":%u,\"inode\":%u,\"shutdown\":%d",
			       r->m.sdiag_rqueue, r->m.sdiag_wqueue, r->m.sdiag_uid,
			       r->m.sdiag_inode, r->shutdown);
			if (r->info_len) {
				printf(",");
				json_str("device", in->ibdev, true);
				printf("\"port\":%u,\"qp\":%u,\"peer_qp\":%u,\"path_mtu\":%u,"
				       "\"rcv_size\":%u,\"snd_size\":%u,\"rx_bufs\":%u,\"tx_bufs\":%u,"
				       "\"rx_bufs_held\":%u,\"tx_bufs_held\":%u,\"tx_credits\":%u,"
				       "\"rx_credits\":%u,\"syn_queue\":%u,\"bytes_sent\":%llu,"
				       "\"bytes_received\":%llu,\"msgs_sent\":%llu,\"msgs_received\":%llu,"
				       "\"zcopy_bytes_sent\":%llu,\"zcopy_bytes_received\":%llu,"
				       "\"zwrite_bytes_sent\":%llu,\"zwrite_bytes_received\":%llu",
				       in->port_num, in->qp_num, in->dest_qp_num, in->path_mtu,
				       in->rcv_size, in->snd_size, in->rx_bufs, in->tx_bufs,
				       in->rx_bufs_held, in->tx_bufs_held, in->tx_credits,
				       in->rx_credits, in->syn_queue,
				       (unsigned long long)in->tx_bytes,
				       (unsigned long long)in->rx_bytes,
				       (unsigned long long)in->tx_msgs,
				       (unsigned long long)in->rx_msgs,
				       (unsigned long long)in->zc_tx_bytes,
				       (unsigned long long)in->zc_rx_bytes,
				       (unsigned long long)in->zw_tx_bytes,
				       (unsigned long long)in->zw_rx_bytes);
			}
			printf("}");
			continue;
		}
		printf("%-10s %6u %6u %-26s %-26s %s", state_name(r->m.sdiag_state),
		       r->m.sdiag_rqueue, r->m.sdiag_wqueue, l, p, tr_name(r->m.sdiag_transport));
		if (r->m.sdiag_fallback)
			printf(" (%s)", fb_name(r->m.sdiag_fallback));
		printf("\n");
		if (!opt.extended)
			continue;
		printf("\t uid:%u ino:%u", r->m.sdiag_uid, r->m.sdiag_inode);
		if (r->shutdown > 0)
			printf(" shutdown:%s%s", r->shutdown & 1 ? "<" : "",
			       r->shutdown & 2 ? ">" : "");
		if (in->ibdev[0])
			printf(" dev:%s port:%u qp:%u peer_qp:%u", in->ibdev, in->port_num,
			       in->qp_num, in->dest_qp_num);
		if (in->rcv_size)
			printf(" mtu:%u rcv:%ux%u(%u held) snd:%ux%u(%u held) credits:tx%u/rx%u"
			       " bytes_sent:%llu bytes_received:%llu msgs:%llu/%llu",
			       in->path_mtu, in->rcv_size, in->rx_bufs, in->rx_bufs_held,
			       in->snd_size, in->tx_bufs, in->tx_bufs_held, in->tx_credits,
			       in->rx_credits, (unsigned long long)in->tx_bytes,
			       (unsigned long long)in->rx_bytes, (unsigned long long)in->tx_msgs,
			       (unsigned long long)in->rx_msgs);
		if (in->zc_tx_bytes || in->zc_rx_bytes)
			printf(" zcopy:%llu/%llu", (unsigned long long)in->zc_tx_bytes,
			       (unsigned long long)in->zc_rx_bytes);
		if (in->zw_tx_bytes || in->zw_rx_bytes)
			printf(" zwrite:%llu/%llu", (unsigned long long)in->zw_tx_bytes,
			       (unsigned long long)in->zw_rx_bytes);
		if (r->m.sdiag_state == TCP_LISTEN && r->m.sdiag_transport != SDP_TRANSPORT_TCP)
			printf(" syn_queue:%u", in->syn_queue);
		printf("\n");
	}
	if (opt.json)
		printf("]\n");
	free(rows);
}

/* The module's counters (/proc/net/sdp_stats): totals, then deltas. */
#define MAX_CTRS	128
struct ctr {
	char name[48];
	unsigned long long v;
};

static int read_ctrs(struct ctr *c)
{
	FILE *f = fopen("/proc/net/sdp_stats", "re");
	int n = 0;

	if (!f)
		die("/proc/net/sdp_stats: %s (is the sdp module loaded?)", strerror(errno));
	while (n < MAX_CTRS && fscanf(f, "%47s %llu", c[n].name, &c[n].v) == 2)
		n++;
	fclose(f);
	return n;
}

static void print_ctrs(const struct ctr *c, const struct ctr *prev, int n, bool json)
{
	bool first = true;
	int i;

	if (json)
		printf("{");
	for (i = 0; i < n; i++) {
		unsigned long long v = c[i].v - (prev ? prev[i].v : 0);

		if (prev && !v)
			continue;
		if (json)
			printf("%s\"%s\":%llu", first ? "" : ",", c[i].name, v);
		else
			printf("%-24s %llu\n", c[i].name, v);
		first = false;
	}
	if (json)
		printf("}\n");
	fflush(stdout);
}

static void stats(void)
{
	static struct ctr a[MAX_CTRS], b[MAX_CTRS];
	int n = read_ctrs(a), k;

	print_ctrs(a, NULL, n, opt.json);
	for (k = 0; opt.interval && k != opt.count; k++) {
		sleep(opt.interval);
		memcpy(b, a, sizeof(a));
		if (read_ctrs(a) != n)
			die("/proc/net/sdp_stats changed shape");
		if (!opt.json)
			printf("-- %d s\n", opt.interval);
		print_ctrs(a, b, n, opt.json);
	}
}

static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (f) {
		if (!fgets(buf, len, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
}

/* Each RDMA port, its state and link layer, and the SDP traffic on it. */
static void devices(void)
{
	struct sdp_diag_row *rows;
	int n = diag_dump(&rows), i, k, ndev;
	struct dirent **devs, *e;
	bool first = true, hidden = false;

	/* without CAP_NET_ADMIN the kernel names no socket's device */
	for (i = 0; i < n; i++)
		hidden |= rows[i].m.sdiag_transport == SDP_TRANSPORT_RDMA && !rows[i].info.ibdev[0];

	ndev = scandir("/sys/class/infiniband", &devs, NULL, alphasort);
	if (ndev < 0)
		die("/sys/class/infiniband: %s (no RDMA device)", strerror(errno));
	if (opt.json)
		printf("[");
	else
		printf("%-12s %4s %-14s %-10s %7s %14s %14s\n", "Device", "Port", "State",
		       "Link", "Sockets", "Bytes-sent", "Bytes-recv");
	for (k = 0; k < ndev; k++) {
		char path[512], state[64], link[64];
		unsigned int port;

		e = devs[k];
		if (e->d_name[0] == '.')
			continue;
		for (port = 1; port < 256; port++) {
			unsigned long long tx = 0, rx = 0;
			int socks = 0;

			snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%u/state",
				 e->d_name, port);
			if (access(path, R_OK))
				break;
			read_line(path, state, sizeof(state));
			snprintf(path, sizeof(path),
				 "/sys/class/infiniband/%s/ports/%u/link_layer", e->d_name, port);
			read_line(path, link, sizeof(link));
			for (i = 0; i < n; i++) {
				if (strcmp(rows[i].info.ibdev, e->d_name) ||
				    rows[i].info.port_num != port)
					continue;
				socks++;
				tx += rows[i].info.tx_bytes;
				rx += rows[i].info.rx_bytes;
			}
			if (opt.json) {
				printf("%s{", first ? "" : ",");
				json_str("device", e->d_name, true);
				printf("\"port\":%u,", port);
				json_str("state", state, true);
				json_str("link_layer", link, true);
				if (hidden)
					printf("\"sockets\":null,\"bytes_sent\":null,"
					       "\"bytes_received\":null}");
				else
					printf("\"sockets\":%d,\"bytes_sent\":%llu,"
					       "\"bytes_received\":%llu}", socks, tx, rx);
			} else
				printf("%-12s %4u %-14s %-10s %7d %14llu %14llu\n", e->d_name, port,
				       state, link, socks, tx, rx);
			first = false;
		}
	}
	for (k = 0; k < ndev; k++)
		free(devs[k]);
	free(devs);
	if (opt.json)
		printf("]\n");
	if (!opt.json && hidden)
		printf("(the sockets on each device are shown to CAP_NET_ADMIN only)\n");
	free(rows);
}

/* HOST:PORT, [V6]:PORT: an SDP connect, and why it went the way it did. */
static int check(const char *dest, int timeout)
{
	char host[256], *port, where[300], why[512];
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	struct timeval tv = { .tv_sec = timeout };
	struct sdp_info info;
	socklen_t len = sizeof(info);
	int fd, err, reason = 0, cerr = 0;

	snprintf(host, sizeof(host), "%s", dest);
	port = strrchr(host, ':');
	if (!port || port == host)
		die("--check wants HOST:PORT");
	*port++ = 0;
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = 0;
	}
	err = getaddrinfo(host, port, &hints, &ai);
	if (err)
		die("%s: %s", dest, gai_strerror(err));
	fd = socket(sdp_family(), SOCK_STREAM, 0);
	if (fd < 0)
		die("socket(%d): %s%s", sdp_family(), strerror(errno),
		    errno == EAFNOSUPPORT ? " (is the sdp module loaded?)" : "");
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, ai->ai_addr, ai->ai_addrlen))
		cerr = errno;
	snprintf(where, sizeof(where), "%s", dest);
	memset(&info, 0, sizeof(info));
	if (getsockopt(fd, SOL_SDP, SDP_INFO, &info, &len))
		die("getsockopt(SDP_INFO): %s", strerror(errno));
	reason = info.fallback_reason;
	why[0] = 0;
	if (reason > 0 && reason < SDP_FB_MAX) {
		/* the texts take the destination at most once */
		snprintf(why, sizeof(why), reasons[reason].why, where);
	}
	if (opt.json) {
		printf("{");
		json_str("destination", dest, true);
		json_str("result", cerr ? "failed" : tr_name(info.transport), true);
		printf("\"errno\":%d,", cerr);
		json_str("fallback", fb_name(reason), true);
		json_str("why", why, true);
		json_str("device", info.ibdev, true);
		printf("\"port\":%u,\"qp\":%u,\"peer_qp\":%u,\"path_mtu\":%u}\n", info.port_num,
		       info.qp_num, info.dest_qp_num, info.path_mtu);
	} else if (cerr) {
		printf("%s: no connection: %s%s%s\n", dest, strerror(cerr),
		       why[0] ? "; before that, RDMA was not used: " : "", why);
	} else if (info.transport == SDP_TRANSPORT_RDMA) {
		printf("%s: RDMA via %s port %u (path MTU %u, QP %u -> %u)\n", dest, info.ibdev,
		       info.port_num, info.path_mtu, info.qp_num, info.dest_qp_num);
	} else {
		printf("%s: TCP (%s): %s\n", dest, fb_name(reason), why);
	}
	freeaddrinfo(ai);
	close(fd);
	return cerr ? 2 : info.transport == SDP_TRANSPORT_RDMA ? 0 : 1;
}

static void set_addr(const char *s, __be32 *addr)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%s", s);
	if (buf[0] == '[') {
		memmove(buf, buf + 1, strlen(buf));
		buf[strcspn(buf, "]")] = 0;
	}
	if (inet_pton(AF_INET, buf, addr) != 1 && inet_pton(AF_INET6, buf, addr) != 1)
		die("not an address: %s", s);
}

static int state_bit(const char *s)
{
	int i;

	for (i = 0; i < NSTATES; i++)
		if (state_names[i] && !strcasecmp(s, state_names[i]))
			return i;
	die("unknown state %s", s);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sdpstat [-a|-l] [-e] [-n] [-j] [--state S]... [--sport P] [--dport P]\n"
		"               [--src ADDR] [--dst ADDR]\n"
		"       sdpstat -s [-j] [-i SECS [-c COUNT]]\n"
		"       sdpstat -d [-j]\n"
		"       sdpstat --check HOST:PORT [-w SECS] [-j]\n");
	exit(64);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "all", no_argument, NULL, 'a' }, { "listening", no_argument, NULL, 'l' },
		{ "extended", no_argument, NULL, 'e' }, { "numeric", no_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' }, { "stats", no_argument, NULL, 's' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "devices", no_argument, NULL, 'd' },
		{ "check", required_argument, NULL, 'C' }, { "wait", required_argument, NULL, 'w' },
		{ "state", required_argument, NULL, 'S' }, { "sport", required_argument, NULL, 'P' },
		{ "dport", required_argument, NULL, 'D' }, { "src", required_argument, NULL, 'A' },
		{ "dst", required_argument, NULL, 'B' }, { "help", no_argument, NULL, 'h' },
		{}
	};
	const char *dest = NULL;
	int c, mode = 0, timeout = 10;

	while ((c = getopt_long(argc, argv, "alenjsi:c:dw:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'a': opt.all = true; break;
		case 'l': opt.listening = true; break;
		case 'e': opt.extended = true; break;
		case 'n': opt.numeric = true; break;
		case 'j': opt.json = true; break;
		case 's': case 'd': mode = c; break;
		case 'i': opt.interval = atoi(optarg); break;
		case 'c': opt.count = atoi(optarg); break;
		case 'C': dest = optarg; mode = c; break;
		case 'w': timeout = atoi(optarg); break;
		case 'S': opt.states |= 1U << state_bit(optarg); break;
		case 'P': opt.id.idiag_sport = htons(atoi(optarg)); break;
		case 'D': opt.id.idiag_dport = htons(atoi(optarg)); break;
		case 'A': set_addr(optarg, opt.id.idiag_src); break;
		case 'B': set_addr(optarg, opt.id.idiag_dst); break;
		default: usage();
		}
	}
	if (optind != argc || opt.interval < 0 || timeout <= 0)
		usage();
	if (mode == 's')
		stats();
	else if (mode == 'd')
		devices();
	else if (mode == 'C')
		return check(dest, timeout);
	else {
		/* as ss: connections by default, -l listeners, -a both */
		if (!opt.states)
			opt.states = opt.all ? 0 : opt.listening ? 1U << TCP_LISTEN :
				     ~(1U << TCP_LISTEN | 1U << TCP_CLOSE);
		print_socks();
	}
	return 0;
}
