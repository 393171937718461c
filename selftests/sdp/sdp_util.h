/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the sdp selftests. */
#ifndef SDP_UTIL_H
#define SDP_UTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/sdp.h>

#include "../../userspace/sdp_family.h"

/* The topology of lib.sh. */
#define SDP_A	"198.18.0.1"
#define SDP_B	"198.18.0.2"
#define SDP_A6	"2001:db8::1"
#define SDP_TCPONLY	"198.19.0.2"

/*
 * How much slower than a stock kernel this one runs the suite: the bound
 * a case gives the machine (not what it measures) scales with it.
 * scripts/debug-kernel's (KASAN, lockdep, ...) took about 10x as long for
 * sdp_proto_test and sdp_soak (run_kselftest.sh detects it the same way).
 */
static inline int sdp_slow(void)
{
	struct utsname u;

	return !uname(&u) && strstr(u.release, "-sdp-debug") ? 10 : 1;
}

/*
 * Whether this kernel's core gives an SDP socket its own SOL_SOCKET
 * options, so that SO_REUSEPORT and SO_ZEROCOPY set directly work: from 6.2
 * (SOCK_CUSTOM_SOCKOPT, net/sdp/sdp_compat.h); 6.1 refuses it (EOPNOTSUPP).
 */
static inline bool sdp_direct_reuseport(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 2);
}

/*
 * The transport SDP sockets should end up on: RDMA, or TCP when the suite
 * runs with net.sdp.enabled=0 (SDP_EXPECT_TRANSPORT=tcp) to check the same
 * semantics on fallen-back sockets.
 */
static inline int sdp_expected_transport(void)
{
	const char *e = getenv("SDP_EXPECT_TRANSPORT");

	return e && !strcmp(e, "tcp") ? SDP_TRANSPORT_TCP : SDP_TRANSPORT_RDMA;
}

/* Fill @ss with ip:port (IPv4 or IPv6 text); returns its length. */
static inline socklen_t sdp_addr(struct sockaddr_storage *ss, const char *ip, int port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (strchr(ip, ':')) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		inet_pton(AF_INET6, ip, &sin6->sin6_addr);
		return sizeof(*sin6);
	}
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	inet_pton(AF_INET, ip, &sin->sin_addr);
	return sizeof(*sin);
}

static inline int sdp_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

/* A listener of @family on ip:0; its address (with the port) in @ss. */
static inline int sdp_listener(int family, const char *ip, int backlog,
			       struct sockaddr_storage *ss, socklen_t *len)
{
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	*len = sdp_addr(ss, ip, 0);
	if (bind(fd, (struct sockaddr *)ss, *len) || listen(fd, backlog) ||
	    getsockname(fd, (struct sockaddr *)ss, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

static inline int sdp_connect(int family, const struct sockaddr_storage *ss,
			      socklen_t len)
{
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)ss, len)) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* A connected pair over a fresh listener on ip:0. */
static inline int sdp_pair(int family, const char *ip, int *a, int *b)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int l = sdp_listener(family, ip, 64, &ss, &len);

	if (l < 0)
		return -1;
	*a = sdp_connect(family, &ss, len);
	*b = *a < 0 ? -1 : accept(l, NULL, NULL);
	close(l);
	return *a < 0 || *b < 0 ? -1 : 0;
}

/* An int socket option, or -errno. */
static inline int sdp_getint(int fd, int level, int name)
{
	socklen_t len = sizeof(int);
	int v = -1;

	if (getsockopt(fd, level, name, &v, &len))
		return -errno;
	return v;
}

static inline int sdp_setint(int fd, int level, int name, int v)
{
	return setsockopt(fd, level, name, &v, sizeof(v)) ? -errno : 0;
}

/*
 * The number after @key in a file of "key number ..." lines (memory.stat,
 * /proc/meminfo), or -1.
 */
static inline long sdp_read_key(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	char line[256], k[64];
	long v, found = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %ld", k, &v) == 2 && !strcmp(k, key))
			found = v;
	if (f)
		fclose(f);
	return found;
}

/* The number in file @dir/@name, or -1. */
static inline int sdp_read_int(const char *dir, const char *name)
{
	char path[128];
	FILE *f;
	int v = -1;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Write @v to file @dir/@name (a sysctl), if it can be opened. */
static inline void sdp_write_int(const char *dir, const char *name, int v)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%d\n", v);
		fclose(f);
	}
}

/* net.sdp.@name: its value (or -1), and setting it. */
static inline int sdp_sysctl(const char *name)
{
	return sdp_read_int("/proc/sys/net/sdp", name);
}

static inline void sdp_sysctl_set(const char *name, int v)
{
	sdp_write_int("/proc/sys/net/sdp", name, v);
}

/* net.sdp.mem's three limits, in pages (-1 each if unreadable). */
static inline void sdp_mem_get(long v[3])
{
	FILE *f = fopen("/proc/sys/net/sdp/mem", "r");

	if (!f || fscanf(f, "%ld %ld %ld", &v[0], &v[1], &v[2]) != 3)
		v[0] = v[1] = v[2] = -1;
	if (f)
		fclose(f);
}

static inline int sdp_mem_set(long lo, long press, long hi)
{
	FILE *f = fopen("/proc/sys/net/sdp/mem", "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%ld %ld %ld\n", lo, press, hi) > 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* A counter of /proc/net/sdp_stats, or -1. */
static inline long long sdp_stat(const char *name)
{
	return sdp_read_key("/proc/net/sdp_stats", name);
}

static inline int sdp_info(int fd, struct sdp_info *info)
{
	socklen_t len = sizeof(*info);

	return getsockopt(fd, SOL_SDP, SDP_INFO, info, &len);
}

/* SDP_TRANSPORT_* of @fd, or -errno. */
static inline int sdp_transport(int fd)
{
	struct sdp_info info;

	if (sdp_info(fd, &info))
		return -errno;
	return info.transport;
}

/*
 * A counter summed over every RDMA link, from sysfs (what rdma statistic
 * shows): cheap enough to poll while a test's flows run.
 */
static inline long long sdp_rxe_counter(const char *name)
{
	char pat[256];
	long long sum = 0, v;
	glob_t g;
	size_t i;
	FILE *f;

	snprintf(pat, sizeof(pat), "/sys/class/infiniband/*/ports/*/hw_counters/%s", name);
	if (glob(pat, 0, NULL, &g))
		return 0;	/* no link */
	for (i = 0; i < g.gl_pathc; i++) {
		f = fopen(g.gl_pathv[i], "r");
		if (f && fscanf(f, "%lld", &v) == 1)
			sum += v;
		if (f)
			fclose(f);
	}
	globfree(&g);
	return sum;
}

/* Which of @fds (accepted sockets) is the other end of @c; -1 if none. */
static inline int sdp_peer_of(int c, const int *fds, int n)
{
	struct sockaddr_storage me, peer;
	socklen_t len = sizeof(me);
	int i;

	if (getsockname(c, (struct sockaddr *)&me, &len))
		return -1;
	for (i = 0; i < n; i++) {
		len = sizeof(peer);
		if (!getpeername(fds[i], (struct sockaddr *)&peer, &len) &&
		    sdp_port(&peer) == sdp_port(&me))
			return i;
	}
	return -1;
}

static inline double sdp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Read exactly @len bytes (or until EOF/error); returns bytes read. */
static inline ssize_t sdp_read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n <= 0)
			return got ? (ssize_t)got : n;
		got += n;
	}
	return got;
}

static inline ssize_t sdp_write_full(int fd, const void *buf, size_t len)
{
	size_t put = 0;

	while (put < len) {
		ssize_t n = send(fd, (const char *)buf + put, len - put, MSG_NOSIGNAL);

		if (n <= 0)
			return put ? (ssize_t)put : n;
		put += n;
	}
	return put;
}

/* Write @s to a file (sysfs, tracefs, cgroupfs); 0 or -1. */
static inline int sdp_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -1;
}

/* Wait until @fd reports @events; returns revents (0 on timeout). */
static inline int sdp_poll1(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	double end = sdp_now() + ms / 1000.0;
	int n;

	/* a signal the test catches (SIGURG) must not end the wait */
	while ((n = poll(&p, 1, ms)) < 0 && errno == EINTR && ms > 0) {
		ms = (int)((end - sdp_now()) * 1000);
		if (ms < 0)
			ms = 0;
	}
	return n > 0 ? p.revents : 0;
}

#endif
