// SPDX-License-Identifier: GPL-2.0
/*
 * libsdp.so: LD_PRELOAD shim that turns a program's TCP sockets into SDP
 * sockets. It interposes socket(): AF_INET/AF_INET6 SOCK_STREAM with
 * protocol 0 or IPPROTO_TCP becomes AF_INET_SDP when /etc/sdp.conf (or
 * $SDP_CONFIG) lets this program use SDP; the address and port rules go to
 * the socket (SOL_SDP, SDP_POLICY) for the kernel to apply at connect() and
 * listen(). And setsockopt() for SO_REUSEPORT and SO_ZEROCOPY, which the
 * sockets core refuses for our family on 6.1: on an SDP socket they become
 * SOL_SDP SDP_REUSEPORT and SDP_ZEROCOPY (from 6.2 the module takes them
 * itself).
 * Everything else goes to libc untouched, and so does everything when the
 * module is absent. The kernel does the fallback to TCP.
 *
 * Environment: SDP_CONFIG (rules file), SDP_DEBUG (1: say what was decided
 * and why, on stderr), SDP_SNDBUF / SDP_RCVBUF (bytes, set on each SDP
 * socket). Messages go to stderr only, never to a file.
 */
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sdp_config.h"
#include "sdp_family.h"

static struct {
	int (*socket)(int, int, int);
	int (*setsockopt)(int, int, int, const void *, socklen_t);
	int family;
	int debug;
	int sndbuf, rcvbuf;
	int use_sdp;			/* the rules let this program use SDP */
	char prog[256];			/* the name rules match, as exec'ed */
	struct sdp_conf conf;
	struct sdp_conf_policy policy;
} shim;

static pthread_once_t shim_once = PTHREAD_ONCE_INIT;

/* argv[0] may be rewritten later (setproctitle): take the name now. */
__attribute__((constructor))
static void shim_name(void)
{
	snprintf(shim.prog, sizeof(shim.prog), "%s", program_invocation_short_name);
}

/*
 * To stderr, if there is one: a daemon may have closed it and reused
 * descriptor 2 for a socket, which must not get our words.
 */
static void shim_log(const char *fmt, ...)
{
	struct stat st;
	va_list ap;

	if (fstat(STDERR_FILENO, &st) || S_ISSOCK(st.st_mode))
		return;
	va_start(ap, fmt);
	fprintf(stderr, "libsdp[%d]: ", (int)getpid());
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int env_int(const char *name)
{
	const char *s = getenv(name);

	return s ? atoi(s) : 0;
}

static void shim_load_rules(void)
{
	const char *path = getenv("SDP_CONFIG") ? : SDP_CONF_DEFAULT;
	const char *prog = shim.prog[0] ? shim.prog : program_invocation_short_name;
	char err[512];
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		/* No rules file: every TCP socket is an SDP socket. */
		if (errno != ENOENT || getenv("SDP_CONFIG"))
			shim_log("cannot read %s: %s; SDP for all TCP sockets",
				 path, strerror(errno));
	} else {
		if (sdp_conf_parse(f, path, &shim.conf, err, sizeof(err))) {
			shim_log("%s; ignoring the file: SDP for all TCP sockets", err);
			shim.conf.count = 0;
		}
		fclose(f);
	}
	shim.use_sdp = sdp_conf_select(&shim.conf, prog, &shim.policy);
	if (shim.debug)
		shim_log("%s: %u rule(s) apply, TCP sockets become %s", prog,
			 shim.policy.hdr.count, shim.use_sdp ? "SDP sockets" : "TCP sockets");
}

static void shim_init(void)
{
	int saved = errno;

	shim.socket = dlsym(RTLD_NEXT, "socket");
	shim.setsockopt = dlsym(RTLD_NEXT, "setsockopt");
	shim.debug = env_int("SDP_DEBUG");
	shim.sndbuf = env_int("SDP_SNDBUF");
	shim.rcvbuf = env_int("SDP_RCVBUF");
	shim.family = sdp_family();
	shim_load_rules();
	errno = saved;
}

static int is_tcp(int domain, int type, int protocol)
{
	return (domain == AF_INET || domain == AF_INET6) &&
	       (type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) == SOCK_STREAM &&
	       (protocol == 0 || protocol == IPPROTO_TCP);
}

/* Make @fd what the program asked for; 0, or -1 if it cannot be. */
static int shim_setup(int fd, int domain)
{
	/* The family the program asked for, for good, as TCP's. */
	if (setsockopt(fd, SOL_SDP, SDP_FAMILY, &domain, sizeof(domain)))
		return -1;
	if (shim.policy.hdr.count &&
	    setsockopt(fd, SOL_SDP, SDP_POLICY, &shim.policy,
		       sdp_conf_policy_size(&shim.policy)))
		return -1;
	if (shim.sndbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &shim.sndbuf, sizeof(int));
	if (shim.rcvbuf > 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &shim.rcvbuf, sizeof(int));
	return 0;
}

__attribute__((visibility("default")))
int socket(int domain, int type, int protocol)
{
	static int told_absent;
	int saved, fd;

	pthread_once(&shim_once, shim_init);
	if (!shim.socket)	/* no libc symbol to call: the system call itself */
		return syscall(SYS_socket, domain, type, protocol);
	if (!shim.use_sdp || !is_tcp(domain, type, protocol))
		return shim.socket(domain, type, protocol);

	saved = errno;
	fd = shim.socket(shim.family, type, protocol);
	if (fd >= 0 && shim_setup(fd, domain)) {
		if (shim.debug)
			shim_log("cannot set up an SDP socket (%s): TCP", strerror(errno));
		close(fd);
		fd = -1;
	} else if (fd < 0 && shim.debug &&
		   !__atomic_exchange_n(&told_absent, 1, __ATOMIC_RELAXED)) {
		shim_log("family %d: %s (is the sdp module loaded?): TCP", shim.family,
			 strerror(errno));
	}
	if (fd < 0) {
		errno = saved;
		return shim.socket(domain, type, protocol);
	}
	if (shim.debug > 1)
		shim_log("socket(%s) -> SDP fd %d", domain == AF_INET6 ? "AF_INET6" : "AF_INET", fd);
	errno = saved;
	return fd;
}

__attribute__((visibility("default")))
int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	int saved = errno, domain = 0, ret;
	socklen_t dlen = sizeof(domain);

	pthread_once(&shim_once, shim_init);
	if (!shim.setsockopt)
		return syscall(SYS_setsockopt, fd, level, name, val, len);
	ret = shim.setsockopt(fd, level, name, val, len);
	if (ret && errno == EOPNOTSUPP && level == SOL_SOCKET &&
	    (name == SO_REUSEPORT || name == SO_ZEROCOPY) &&
	    !getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &dlen) &&
	    domain == shim.family) {
		errno = saved;
		ret = shim.setsockopt(fd, SOL_SDP, name == SO_REUSEPORT ?
				      SDP_REUSEPORT : SDP_ZEROCOPY, val, len);
	}
	return ret;
}
