/* SPDX-License-Identifier: GPL-2.0 */
/* Plain TCP servers for the selftests, in a child process, in any netns. */
#ifndef SDP_SERVER_H
#define SDP_SERVER_H

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include "sdp_util.h"

/* Move this process to network namespace /run/netns/@ns: 0 or -1. */
static inline int sdp_setns(const char *ns)
{
	char path[64];
	int nsfd, err;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	nsfd = open(path, O_RDONLY);
	if (nsfd < 0)
		return -1;
	err = setns(nsfd, CLONE_NEWNET);
	close(nsfd);
	return err;
}

static inline void sdp_echo_loop(int fd)
{
	char buf[4096];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0)
		if (sdp_write_full(fd, buf, n) != n)
			break;
	close(fd);
}

/*
 * A TCP server on @ip:0 in network namespace @ns (NULL: ours), in a child
 * process; returns its pid and fills @ss with its address. It echoes, or
 * with @backlog 0 never accepts: once one client waits in its queue, TCP
 * drops the SYNs of the next.
 */
static inline pid_t tcp_server(const char *ns, const char *ip, int backlog,
				struct sockaddr_storage *ss, socklen_t *len)
{
	int pfd[2], l, c;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid) {
		close(pfd[1]);
		if (read(pfd[0], ss, sizeof(*ss)) != sizeof(*ss))
			pid = -1;
		close(pfd[0]);
		*len = ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						   sizeof(struct sockaddr_in);
		return pid;
	}
	if (ns && sdp_setns(ns))
		_exit(1);
	l = sdp_listener(strchr(ip, ':') ? AF_INET6 : AF_INET, ip, backlog, ss, len);
	if (l < 0 || write(pfd[1], ss, sizeof(*ss)) != sizeof(*ss))
		_exit(1);
	while (!backlog)
		pause();
	signal(SIGCHLD, SIG_IGN);
	while ((c = accept(l, NULL, NULL)) >= 0) {
		if (!fork()) {
			sdp_echo_loop(c);
			_exit(0);
		}
		close(c);
	}
	_exit(0);
}

static inline pid_t echo_server(const char *ns, const char *ip,
				 struct sockaddr_storage *ss, socklen_t *len)
{
	return tcp_server(ns, ip, 16, ss, len);
}

static inline void stop_server(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

#endif
