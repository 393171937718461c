// SPDX-License-Identifier: GPL-2.0
/*
 * sock_diag for SDP (what sdpstat lists): each socket the test made, found
 * by its inode, must read back as the test knows it: state, transport,
 * fallback reason, both addresses, queues, shutdown, uid, and the RDMA
 * connection (device, port, QP numbers: each end's peer QP is the other's
 * QP) to CAP_NET_ADMIN only; filters applied by the kernel; a dump larger
 * than one netlink message resumes without losing or repeating a socket;
 * each network namespace sees only its own sockets.
 */
#include <sys/stat.h>
#include <netinet/tcp.h>

#include "kselftest_harness.h"
#include "sdp_proof.h"
#include "sdp_server.h"
#include "../../userspace/sdp_diag.h"

#define MAX_ROWS	1024

/* A dump with these filters: rows, or -errno. */
static int dump(const struct sdp_diag_req *filter, struct sdp_diag_row *rows, int max)
{
	static char buf[8192];	/* small: a big dump takes several rounds */
	int fd = sdp_diag_open(filter), n = 0;

	if (fd < 0)
		return fd;
	for (;;) {
		int len = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (len < 0)
			return -errno;
		for (h = (void *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				close(fd);
				return n;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				close(fd);
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			}
			if (n == max)
				return -E2BIG;
			if (sdp_diag_parse(h, &rows[n++]))
				return -EBADMSG;
		}
	}
}

static unsigned int ino(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : st.st_ino;
}

/* The row of socket @fd, or NULL; fails the test if it is there twice. */
static struct sdp_diag_row *find(struct __test_metadata *_metadata, struct sdp_diag_row *rows, int n, int fd)
{
	unsigned int inode = ino(fd);
	struct sdp_diag_row *r = NULL;
	int i;

	for (i = 0; i < n; i++) {
		if (rows[i].m.sdiag_inode != inode)
			continue;
		EXPECT_EQ(NULL, r) TH_LOG("inode %u listed twice", inode);
		r = &rows[i];
	}
	return r;
}

/* The row's two ends must be what getsockname/getpeername say. */
static void same_ends(struct __test_metadata *_metadata, const struct sdp_diag_row *r, int fd)
{
	struct sockaddr_in l = {}, p = {};
	socklen_t len = sizeof(l);

	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&l, &len));
	len = sizeof(p);
	if (getpeername(fd, (struct sockaddr *)&p, &len))
		memset(&p, 0, sizeof(p));
	EXPECT_EQ(AF_INET, r->m.sdiag_family);
	EXPECT_EQ(l.sin_addr.s_addr, r->m.id.idiag_src[0]);
	EXPECT_EQ(l.sin_port, r->m.id.idiag_sport);
	EXPECT_EQ(p.sin_addr.s_addr, r->m.id.idiag_dst[0]);
	EXPECT_EQ(p.sin_port, r->m.id.idiag_dport);
	EXPECT_EQ(getuid(), r->m.sdiag_uid);
}

/* A listener over RDMA on SDP_A with @backlog, and a pair through it. */
static void rdma_pair(struct __test_metadata *_metadata, int backlog, int *l, int *a, int *b,
		      struct sockaddr_storage *ss)
{
	socklen_t len;

	*l = sdp_listener(sdp_family(), SDP_A, backlog, ss, &len);
	ASSERT_LE(0, *l);
	*a = sdp_connect(sdp_family(), ss, len);
	ASSERT_LE(0, *a);
	*b = accept(*l, NULL, NULL);
	ASSERT_LE(0, *b);
	ASSERT_EQ(SDP_TRANSPORT_RDMA, sdp_transport(*a));
}

/*
 * A listener over RDMA, a connection over RDMA half closed one way, and a
 * connect that fell back (no RDMA device toward the TCP-only host).
 */
TEST(lists_what_the_sockets_are)
{
	static struct sdp_diag_row rows[MAX_ROWS];
	struct sockaddr_storage ss, fs;
	struct sdp_info ia, ib;
	struct sdp_proof p;
	socklen_t flen;
	int l, a, b, f, n;
	struct sdp_diag_row *rl, *ra, *rb, *rf;
	char buf[300] = "x";
	pid_t srv;

	rdma_pair(_metadata, 7, &l, &a, &b, &ss);
	srv = echo_server("tcponly", SDP_TCPONLY, &fs, &flen);
	ASSERT_LT(0, srv);
	f = sdp_connect(sdp_family(), &fs, flen);
	ASSERT_LE(0, f);
	ASSERT_EQ(0, sdp_proof_begin(&p, a, b));

	/* a: 1000 B sent, its sending side shut; b: 300 B sent, unread by a */
	ASSERT_EQ(1000, sdp_write_full(a, memset(malloc(1000), 'a', 1000), 1000));
	ASSERT_EQ(0, shutdown(a, SHUT_WR));
	ASSERT_EQ(300, sdp_write_full(b, buf, sizeof(buf)));
	ASSERT_EQ(1000, sdp_read_full(b, memset(malloc(1001), 0, 1001), 1001));
	ASSERT_NE(0, sdp_poll1(a, POLLIN, 5000) & POLLIN);
	usleep(100 * 1000);	/* all 300 in: poll woke at the first */

	n = dump(NULL, rows, MAX_ROWS);
	ASSERT_LT(0, n) TH_LOG("dump: %s", strerror(-n));
	rl = find(_metadata, rows, n, l);
	ra = find(_metadata, rows, n, a);
	rb = find(_metadata, rows, n, b);
	rf = find(_metadata, rows, n, f);
	ASSERT_NE(NULL, rl);
	ASSERT_NE(NULL, ra);
	ASSERT_NE(NULL, rb);
	ASSERT_NE(NULL, rf);

	EXPECT_EQ(TCP_LISTEN, rl->m.sdiag_state);
	EXPECT_EQ(SDP_TRANSPORT_RDMA, rl->info.transport);
	EXPECT_EQ(7, rl->m.sdiag_wqueue);	/* its backlog */
	EXPECT_EQ(0, rl->m.sdiag_rqueue);
	same_ends(_metadata, rl, l);

	ASSERT_EQ(0, sdp_info(a, &ia));
	ASSERT_EQ(0, sdp_info(b, &ib));
	EXPECT_EQ(TCP_FIN_WAIT2, ra->m.sdiag_state);
	EXPECT_EQ(TCP_CLOSE_WAIT, rb->m.sdiag_state);
	EXPECT_EQ(2, ra->shutdown);	/* SEND_SHUTDOWN */
	EXPECT_EQ(1, rb->shutdown);	/* RCV_SHUTDOWN */
	EXPECT_EQ(300, ra->m.sdiag_rqueue);
	EXPECT_EQ(0, rb->m.sdiag_rqueue);
	same_ends(_metadata, ra, a);
	same_ends(_metadata, rb, b);
	EXPECT_EQ(SDP_TRANSPORT_RDMA, ra->m.sdiag_transport);
	EXPECT_EQ(SDP_TRANSPORT_RDMA, rb->m.sdiag_transport);
	EXPECT_EQ(sizeof(struct sdp_info), ra->info_len);
	EXPECT_EQ(1000, ra->info.tx_bytes);
	EXPECT_EQ(300, ra->info.rx_bytes);
	EXPECT_EQ(300, rb->info.tx_bytes);
	/* the connection, as root sees it */
	EXPECT_STREQ(ia.ibdev, ra->info.ibdev);
	EXPECT_NE(0, ra->info.ibdev[0]);
	EXPECT_EQ(ia.qp_num, ra->info.qp_num);
	EXPECT_EQ(ib.qp_num, ra->info.dest_qp_num);
	EXPECT_EQ(ia.qp_num, rb->info.dest_qp_num);
	EXPECT_EQ(1, ra->info.port_num);
	EXPECT_LT(0, ra->info.rx_credits);
	EXPECT_LT(0, ra->info.tx_credits);

	EXPECT_EQ(TCP_ESTABLISHED, rf->m.sdiag_state);
	EXPECT_EQ(SDP_TRANSPORT_TCP, rf->m.sdiag_transport);
	EXPECT_EQ(SDP_FB_NO_DEVICE, rf->m.sdiag_fallback);
	same_ends(_metadata, rf, f);
	EXPECT_EQ(0, rf->info.qp_num);

	SDP_PROVE(&p);
	close(f);
	close(a);
	close(b);
	close(l);
	stop_server(srv);
}

/* States, ports and addresses are filtered in the kernel. */
TEST(filters)
{
	static struct sdp_diag_row rows[MAX_ROWS];
	struct sdp_diag_req req = {};
	struct sockaddr_storage ss;
	struct sdp_proof p;
	int l, a, b, n, i;

	rdma_pair(_metadata, 4, &l, &a, &b, &ss);
	ASSERT_EQ(0, sdp_proof_begin(&p, a, b));

	req.sdiag_states = 1 << TCP_LISTEN;
	n = dump(&req, rows, MAX_ROWS);
	ASSERT_LT(0, n);
	EXPECT_NE(NULL, find(_metadata, rows, n, l));
	EXPECT_EQ(NULL, find(_metadata, rows, n, a));
	for (i = 0; i < n; i++)
		EXPECT_EQ(TCP_LISTEN, rows[i].m.sdiag_state);

	memset(&req, 0, sizeof(req));
	req.id.idiag_dport = htons(sdp_port(&ss));
	n = dump(&req, rows, MAX_ROWS);
	ASSERT_EQ(1, n);
	EXPECT_EQ(ino(a), rows[0].m.sdiag_inode);

	memset(&req, 0, sizeof(req));
	req.id.idiag_sport = htons(sdp_port(&ss));
	req.sdiag_states = 1 << TCP_ESTABLISHED;
	n = dump(&req, rows, MAX_ROWS);
	ASSERT_EQ(1, n);
	EXPECT_EQ(ino(b), rows[0].m.sdiag_inode);

	memset(&req, 0, sizeof(req));
	inet_pton(AF_INET, SDP_B, &req.id.idiag_dst[0]);
	n = dump(&req, rows, MAX_ROWS);
	EXPECT_EQ(0, n) TH_LOG("nothing here talks to " SDP_B);
	SDP_PROVE(&p);
	close(a);
	close(b);
	close(l);
}

/*
 * More sockets than one read takes (about 30 in 8 KiB) and than a batch
 * (32): several rounds of the dump, each socket once.
 */
#define MANY	200
TEST(large_dump_resumes)
{
	static struct sdp_diag_row rows[MAX_ROWS];
	unsigned int inodes[MANY];
	int fds[MANY], i, n, j, seen;

	for (i = 0; i < MANY; i++) {
		fds[i] = socket(sdp_family(), SOCK_STREAM, 0);
		ASSERT_LE(0, fds[i]);
		/* once: 40,000 fstat()s took 55 s on the debug kernel */
		inodes[i] = ino(fds[i]);
	}
	n = dump(NULL, rows, MAX_ROWS);
	ASSERT_LE(MANY, n) TH_LOG("dump: %d", n);
	for (i = 0; i < MANY; i++) {
		for (seen = 0, j = 0; j < n; j++)
			seen += rows[j].m.sdiag_inode == inodes[i];
		EXPECT_EQ(1, seen) TH_LOG("socket %d listed %d times", i, seen);
		if (seen != 1)
			break;
	}
	for (i = 0; i < MANY; i++)
		close(fds[i]);
	SDP_PROVE_LOCAL();
}

/* Each network namespace lists its own sockets and no other's. */
TEST(each_netns_sees_its_own)
{
	static struct sdp_diag_row rows[MAX_ROWS];
	struct sockaddr_storage ss;
	int here, up[2], down[2], st, n;
	unsigned int there, here_ino;
	socklen_t len;
	pid_t pid;

	here = sdp_listener(sdp_family(), SDP_A, 4, &ss, &len);
	ASSERT_LE(0, here);
	here_ino = ino(here);
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct sdp_diag_row *r;
		int l, ok, i;
		char c;

		close(up[0]);
		close(down[1]);
		/* a listener there (over TCP: no RDMA device in that namespace) */
		if (sdp_setns("tcponly"))
			_exit(10);
		l = sdp_listener(sdp_family(), SDP_TCPONLY, 4, &ss, &len);
		there = ino(l);
		if (l < 0 || write(up[1], &there, sizeof(there)) != sizeof(there))
			_exit(11);
		n = dump(NULL, rows, MAX_ROWS);
		r = n > 0 ? find(_metadata, rows, n, l) : NULL;
		ok = r && r->m.sdiag_state == TCP_LISTEN &&
		     r->m.sdiag_transport == SDP_TRANSPORT_TCP &&
		     r->m.sdiag_fallback == SDP_FB_NO_RDMA_LISTEN;
		for (i = 0; i < n; i++)
			ok &= rows[i].m.sdiag_inode != here_ino;
		if (!ok)
			fprintf(stderr, "# in tcponly: %d rows, ours %s: state %u transport %u reason %u\n",
				n, r ? "found" : "missing", r ? r->m.sdiag_state : 0,
				r ? r->m.sdiag_transport : 0, r ? r->m.sdiag_fallback : 0);
		/* the listener lives until the parent has looked (EOF) */
		if (read(down[0], &c, 1) < 0)
			_exit(12);
		_exit(ok ? 0 : 13);
	}
	close(up[1]);
	close(down[0]);
	ASSERT_EQ(sizeof(there), read(up[0], &there, sizeof(there)));
	n = dump(NULL, rows, MAX_ROWS);
	ASSERT_LT(0, n);
	EXPECT_NE(NULL, find(_metadata, rows, n, here));
	for (int i = 0; i < n; i++)
		EXPECT_NE(there, rows[i].m.sdiag_inode) TH_LOG("tcponly's listener seen here");
	close(up[0]);
	close(down[1]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("child status %#x", st);
	close(here);
	SDP_PROVE_LOCAL();
}

/* Without CAP_NET_ADMIN: the socket and its counters, not which QP it is. */
TEST(unprivileged_sees_no_rdma_identity)
{
	static struct sdp_diag_row rows[MAX_ROWS];
	struct sockaddr_storage ss;
	struct sdp_proof p;
	int l, a, b, st;
	pid_t pid;

	rdma_pair(_metadata, 4, &l, &a, &b, &ss);
	ASSERT_EQ(0, sdp_proof_begin(&p, a, b));
	ASSERT_EQ(5, write(a, "hello", 5));
	ASSERT_EQ(5, sdp_read_full(b, (char[8]){}, 5));
	pid = fork();
	if (!pid) {
		struct sdp_diag_row *r;
		int n;

		if (setgid(65534) || setuid(65534))
			_exit(10);
		n = dump(NULL, rows, MAX_ROWS);
		r = n > 0 ? find(_metadata, rows, n, a) : NULL;
		if (!r)
			_exit(11);
		/* counters yes, device, port and QPs no */
		_exit(r->info.tx_bytes == 5 && r->m.sdiag_transport == SDP_TRANSPORT_RDMA &&
		      !r->info.ibdev[0] && !r->info.qp_num && !r->info.dest_qp_num &&
		      !r->info.port_num && r->info.rcv_size ? 0 : 12);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("child status %#x", st);
	SDP_PROVE(&p);
	close(a);
	close(b);
	close(l);
}

TEST_HARNESS_MAIN
