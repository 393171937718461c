// SPDX-License-Identifier: GPL-2.0
/*
 * Zero-copy sends (SrcAvail, the peer's RDMA Read, RdmaRdCompl) against
 * TCP, the oracle: sizes around the threshold and the SrcAvail limit at
 * unaligned addresses, the buffer overwritten as soon as send() returns;
 * SDP_ZCOPY_THRESH; what must copy instead (non-blocking sends, a process
 * over RLIMIT_MEMLOCK); a send cut short by a signal while the peer does
 * not read; the peer closing mid-send. MSG_ZEROCOPY (SO_ZEROCOPY): the
 * error queue's notifications, complete and in order, each buffer
 * overwritten as soon as its notification came; a send the peer leaves
 * unread, copied from its pages; several out at once; the reader's reset;
 * a close right after; poll()'s room for another. The device's memory
 * regions, lent to sends of one connection after another; a buffer sent
 * again, kept pinned and mapped till it is unmapped, mapped anew, unused
 * for a while or its connection ends. Reads in place (SinkAvail): a read
 * that waits is written by the next send, at any size and alignment; a
 * signal, SO_RCVTIMEO, the peer's reset end it as TCP's; peeks and small
 * reads copy; a buffer read into again stays pinned. Over SDP the counters say which
 * bytes went zero-copy, and pinned pages (VmPin), memory regions and PDs
 * return to their start (memory regions or below: a connection of before
 * may still be closing).
 */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "sdp_proof.h"
#include "sdp_baseline.h"
#include "sdp_gen.h"
#include "../../userspace/sdp_zc_note.h"

/* net/sdp/sdp_proto.h's SDP_SRCAVAIL_MAX: one SrcAvail at most */
#define SRCAVAIL_MAX	(1 << 20)
#define BIG		(16 << 20)

/* The zero-copy counters of /proc/net/sdp_stats. */
struct zc_stats {
	long long sends, tx, rx, cancels, declined, copied, async;
	long long recvs, recv_bytes, recv_declined, direct;
};

static void zc_stats(struct zc_stats *z)
{
	z->async = sdp_stat("ZcopyAsyncSends");
	z->sends = sdp_stat("ZcopySends");
	z->tx = sdp_stat("ZcopyTxBytes");
	z->rx = sdp_stat("ZcopyRxBytes");
	z->cancels = sdp_stat("ZcopyCancels");
	z->declined = sdp_stat("ZcopyDeclined");
	z->copied = sdp_stat("ZcopyCopied");
	z->recvs = sdp_stat("ZcopyRecvs");
	z->recv_bytes = sdp_stat("ZcopyRecvBytes");
	z->recv_declined = sdp_stat("ZcopyRecvDeclined");
	z->direct = sdp_stat("ZcopyDirectBytes");
}

/* kB of this process's pinned pages. */
static long vm_pin(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/*
 * VmPin once it is @kb, or after @ds tenths of a second: a buffer kept for
 * the next send goes with its connection, when a work item drops it (after
 * munmap), or unused for 5 s. The last reading.
 */
static long vm_pin_within(long kb, int ds)
{
	long now = vm_pin();
	int i;

	for (i = 0; i < ds && now != kb; i++) {
		usleep(100000);
		now = vm_pin();
	}
	return now;
}

/* Bytes a blocking send of @size goes zero-copy with threshold @t, in *@n SrcAvails. */
static long long zc_bytes(size_t size, size_t t, long long *n)
{
	long long zc = 0;

	while (t && size >= t) {
		size_t c = size < SRCAVAIL_MAX ? size : SRCAVAIL_MAX;

		zc += c;
		size -= c;
		(*n)++;
	}
	return zc;
}

struct reader {
	int fd;
	unsigned long long key, total, done;
	long long bad;
	int err;
};

static void *read_all(void *arg)
{
	struct reader *r = arg;
	size_t max = 256 << 10;
	unsigned char *buf = malloc(max);
	unsigned int seed = 5;

	r->bad = -1;
	while (buf && r->done < r->total) {
		ssize_t n = recv(r->fd, buf, random_size(&seed, max), 0);

		if (n <= 0) {
			r->err = n ? errno : EPIPE;
			break;
		}
		if (r->bad < 0 && (r->bad = stream_check(r->key, r->done, buf, n)) >= 0)
			r->bad += r->done;
		r->done += n;
	}
	free(buf);
	return NULL;
}

/* The reader is done: it took every byte, each as it was sent. */
static void reader_done(struct __test_metadata *_metadata, pthread_t t, struct reader *r)
{
	pthread_join(t, NULL);
	EXPECT_EQ(0, r->err);
	EXPECT_EQ(r->total, r->done);
	EXPECT_EQ(-1, r->bad) TH_LOG("wrong at %lld", r->bad);
}

FIXTURE(zc) {
	int a, b;
	bool rdma;
	struct baseline base;
	struct zc_stats z0;
	struct sdp_proof pr;
};

FIXTURE_VARIANT(zc) {
	bool sdp;
};

SDP_ORACLE_VARIANT(zc, tcp) { .sdp = false };
FIXTURE_VARIANT_ADD(zc, sdp) { .sdp = true };

FIXTURE_SETUP(zc)
{
	self->rdma = variant->sdp && sdp_expected_transport() == SDP_TRANSPORT_RDMA;
	baseline_read(&self->base);
	ASSERT_EQ(0, sdp_pair(variant->sdp ? sdp_family() : AF_INET, SDP_A,
			      &self->a, &self->b));
	if (variant->sdp)
		ASSERT_EQ(0, sdp_proof_begin(&self->pr, self->a, self->b));
	/*
	 * (the reader copies: the cases count the sender's SrcAvails and
	 * pins; those of reads in place say so, reads_in_place())
	 */
	if (variant->sdp)
		ASSERT_EQ(0, sdp_setint(self->b, SOL_SDP, SDP_ZCOPY_THRESH, 0));
	zc_stats(&self->z0);
}

/* Nothing pinned, no memory region or QP left once both ends are closed. */
FIXTURE_TEARDOWN(zc)
{
	struct baseline now;

	if (self->a >= 0)
		close(self->a);
	if (self->b >= 0)
		close(self->b);
	EXPECT_EQ(0, vm_pin_within(0, 50));
	if (variant->sdp) {
		EXPECT_TRUE(baseline_back(&self->base, &now, 10))
			TH_LOG(BASELINE_FMT, BASELINE_ARGS(&self->base, &now));
	}
}

static void prove_pair(struct __test_metadata *_metadata, struct sdp_proof *pr, int a, bool sdp)
{
	if (sdp)
		SDP_PROVE(pr);
	else
		SDP_PROVE_TCP(a);
}

static void prove(struct __test_metadata *_metadata, FIXTURE_DATA(zc) *self, bool sdp)
{
	prove_pair(_metadata, &self->pr, self->a, sdp);
}

/*
 * Soft-RoCE (quirks.read_fence): each read of a buffer is followed by a
 * fence, a read of one PSN, and ZcopyReads counts both. The reader's PSNs
 * since the proof began: its messages, a PSN per MTU of what it read
 * (more where a read ends short of one), and one per fence at least.
 */
static void fences_on_the_wire(struct __test_metadata *_metadata, FIXTURE_DATA(zc) *self)
{
	const struct sdp_info *i0 = &self->pr.info[1];
	unsigned long long psns, least;
	struct sdp_qp_state qp[2];
	struct sdp_info now[2];

	/* (what is posted takes its PSNs as the device sends it) */
	ASSERT_EQ(0, sdp_proof_read_still(&self->pr, now, qp));
	psns = (qp[1].sq_psn - self->pr.qp[1].sq_psn) & SDP_PSN_MASK;
	least = now[1].tx_msgs - i0->tx_msgs +
		(now[1].zc_rx_bytes - i0->zc_rx_bytes) / now[1].path_mtu +
		(now[1].zc_reads - i0->zc_reads) / 2;
	EXPECT_LE(least, psns) TH_LOG("%s: %llu PSNs, no fence after its reads?", now[1].ibdev, psns);
}

/*
 * Each size at each misalignment, sent whole by one blocking send() and
 * overwritten as soon as it returns: the reader sees only what was sent.
 */
TEST_F_TIMEOUT(zc, sizes_and_alignments_arrive_intact, 300)
{
	static const size_t sizes[] = { 4096, 65535, 65536, 65537, SRCAVAIL_MAX - 1,
					SRCAVAIL_MAX, SRCAVAIL_MAX + 1, 3 * SRCAVAIL_MAX + 17 };
	static const size_t offs[] = { 0, 1, 4095 };
	size_t t = sdp_sysctl("zcopy_thresh");
	long long zc = 0, avails = 0;
	unsigned long long sent = 0;
	struct reader r = { .fd = self->b, .key = 21 };
	struct zc_stats z;
	struct sdp_info ia, ib;
	unsigned char *buf;
	pthread_t tr;
	unsigned int i, k;

	ASSERT_LT(0, t);
	/* room for all a SrcAvail offers: none is declined while the reader lags */
	ASSERT_EQ(0, sdp_setint(self->b, SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20));
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		r.total += sizes[i] * 3;
	ASSERT_EQ(0, posix_memalign((void **)&buf, 4096, 4 * SRCAVAIL_MAX + 8192));
	ASSERT_EQ(0, pthread_create(&tr, NULL, read_all, &r));
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (k = 0; k < 3; k++) {
			unsigned char *p = buf + offs[k];

			stream_fill(r.key, sent, p, sizes[i]);
			ASSERT_EQ(sizes[i], send(self->a, p, sizes[i], 0))
				TH_LOG("%zu at +%zu: %s", sizes[i], offs[k], strerror(errno));
			memset(p, 0xa5, sizes[i]);
			sent += sizes[i];
			zc += zc_bytes(sizes[i], t, &avails);
		}
	}
	EXPECT_EQ(sent, r.total);
	reader_done(_metadata, tr, &r);
	if (self->rdma) {
		zc_stats(&z);
		EXPECT_EQ(avails, z.sends - self->z0.sends);
		EXPECT_EQ(zc, z.tx - self->z0.tx);
		EXPECT_EQ(zc, z.rx - self->z0.rx);
		EXPECT_EQ(0, z.copied - self->z0.copied);
		ASSERT_EQ(0, sdp_info(self->a, &ia));
		ASSERT_EQ(0, sdp_info(self->b, &ib));
		EXPECT_EQ(zc, ia.zc_tx_bytes);
		EXPECT_EQ(zc, ib.zc_rx_bytes);
		EXPECT_EQ(sent, ia.tx_bytes);
		EXPECT_EQ(sent, ib.rx_bytes);
		TH_LOG("%llu B sent, %lld B in %lld SrcAvails, read in %u RDMA Reads",
		       sent, zc, avails, ib.zc_reads);
		if (!strncmp(ib.ibdev, "rxe", 3))
			fences_on_the_wire(_metadata, self);
	}
	free(buf);
	prove(_metadata, self, variant->sdp);
}

/*
 * SDP_ZCOPY_THRESH: the namespace's until set; 0 copies every send, a
 * small one makes small sends go zero-copy; nonsense is refused.
 */
TEST_F(zc, threshold_per_socket)
{
	static unsigned char buf[256 << 10];
	struct reader r = { .fd = self->b, .key = 22, .total = sizeof(buf) + 5000 };
	struct zc_stats z1, z2;
	pthread_t tr;

	if (!variant->sdp) {
		EXPECT_EQ(-EOPNOTSUPP, sdp_getint(self->a, SOL_SDP, SDP_ZCOPY_THRESH));
		SDP_PROVE_TCP(self->a);
		return;
	}
	EXPECT_EQ(sdp_sysctl("zcopy_thresh"), sdp_getint(self->a, SOL_SDP, SDP_ZCOPY_THRESH));
	EXPECT_EQ(-EINVAL, sdp_setint(self->a, SOL_SDP, SDP_ZCOPY_THRESH, -1));
	EXPECT_EQ(-EINVAL, setsockopt(self->a, SOL_SDP, SDP_ZCOPY_THRESH, buf, 2) ? -errno : 0);
	ASSERT_EQ(0, sdp_setint(self->a, SOL_SDP, SDP_ZCOPY_THRESH, 0));
	EXPECT_EQ(0, sdp_getint(self->a, SOL_SDP, SDP_ZCOPY_THRESH));
	ASSERT_EQ(0, pthread_create(&tr, NULL, read_all, &r));
	stream_fill(r.key, 0, buf, sizeof(buf));
	ASSERT_EQ(sizeof(buf), send(self->a, buf, sizeof(buf), 0));
	zc_stats(&z1);
	ASSERT_EQ(0, sdp_setint(self->a, SOL_SDP, SDP_ZCOPY_THRESH, 4096));
	stream_fill(r.key, sizeof(buf), buf, 5000);
	ASSERT_EQ(5000, send(self->a, buf, 5000, 0));
	zc_stats(&z2);
	reader_done(_metadata, tr, &r);
	if (self->rdma) {
		EXPECT_EQ(0, z1.sends - self->z0.sends);
		EXPECT_EQ(1, z2.sends - z1.sends);
		EXPECT_EQ(5000, z2.tx - z1.tx);
	}
	prove(_metadata, self, true);
}

/* A send that may not wait for the peer's read copies. */
TEST_F(zc, nonblocking_sends_copy)
{
	static unsigned char buf[256 << 10];
	struct reader r = { .fd = self->b, .key = 23 };
	struct zc_stats z;
	size_t off = 0;
	pthread_t tr;

	stream_fill(r.key, 0, buf, sizeof(buf));
	r.total = sizeof(buf);
	ASSERT_EQ(0, pthread_create(&tr, NULL, read_all, &r));
	while (off < sizeof(buf)) {
		ssize_t n = send(self->a, buf + off, sizeof(buf) - off, MSG_DONTWAIT);

		if (n < 0) {
			ASSERT_EQ(EAGAIN, errno);
			ASSERT_LT(0, sdp_poll1(self->a, POLLOUT, 10000));
			continue;
		}
		off += n;
	}
	reader_done(_metadata, tr, &r);
	if (self->rdma) {
		zc_stats(&z);
		EXPECT_EQ(0, z.sends - self->z0.sends);
	}
	prove(_metadata, self, variant->sdp);
}

/*
 * A process without CAP_IPC_LOCK over its RLIMIT_MEMLOCK cannot pin:
 * its large send is copied, and counted so.
 */
TEST_F(zc, over_memlock_copies)
{
	static unsigned char buf[256 << 10];
	struct reader r = { .fd = self->b, .key = 24, .total = sizeof(buf) };
	struct zc_stats z;
	pthread_t tr;
	int status;
	pid_t pid;

	ASSERT_EQ(0, pthread_create(&tr, NULL, read_all, &r));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
		struct __user_cap_data_struct d[2];
		struct rlimit rl = { 0, 0 };

		if (syscall(SYS_capget, &h, d))
			_exit(2);
		d[0].effective &= ~(1u << CAP_IPC_LOCK);
		if (syscall(SYS_capset, &h, d) || setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(3);
		stream_fill(r.key, 0, buf, sizeof(buf));
		_exit(send(self->a, buf, sizeof(buf), 0) == sizeof(buf) ? 0 : 4);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	reader_done(_metadata, tr, &r);
	if (self->rdma) {
		zc_stats(&z);
		EXPECT_EQ(0, z.sends - self->z0.sends);
		EXPECT_EQ(1, z.copied - self->z0.copied);
	}
	prove(_metadata, self, variant->sdp);
}

/*
 * A send the reader leaves unread, written before anything is read (as TCP
 * buffers it): the reader's side reads what SO_RCVBUF holds, declines the
 * rest after SDP_ZC_STALL, and the send completes by copies.
 */
TEST_F_TIMEOUT(zc, unread_send_completes, 60)
{
	static unsigned char out[300000], in[300000];
	struct zc_stats z;

	stream_fill(27, 0, out, sizeof(out));
	ASSERT_EQ(sizeof(out), send(self->a, out, sizeof(out), 0));
	ASSERT_EQ(sizeof(in), sdp_read_full(self->b, in, sizeof(in)));
	EXPECT_EQ(-1, stream_check(27, 0, in, sizeof(in)));
	if (self->rdma) {
		zc_stats(&z);
		EXPECT_EQ(1, z.sends - self->z0.sends);
		EXPECT_EQ(1, z.declined - self->z0.declined);
		EXPECT_GT((long long)sizeof(out), z.tx - self->z0.tx);
		TH_LOG("%lld B read of the SrcAvail, the rest copied", z.tx - self->z0.tx);
	}
	prove(_metadata, self, variant->sdp);
}

struct writer {
	int fd;
	unsigned long long key;
	ssize_t n;
	int err;
	bool started;
};

static void on_usr1(int sig)
{
}

static void *send_big(void *arg)
{
	struct writer *w = arg;
	unsigned char *buf = malloc(BIG);

	if (!buf) {
		w->n = -1;
		w->err = ENOMEM;
		return NULL;
	}
	stream_fill(w->key, 0, buf, BIG);
	__atomic_store_n(&w->started, true, __ATOMIC_RELEASE);
	w->n = send(w->fd, buf, BIG, MSG_NOSIGNAL);
	w->err = errno;
	free(buf);
	return NULL;
}

/*
 * A signal while the peer does not read: send() returns what the peer
 * took (or EINTR), as TCP's; then the stream goes on from there intact.
 */
TEST_F_TIMEOUT(zc, signal_cuts_a_send_short, 120)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct writer w = { .fd = self->a, .key = 25 };
	struct reader r = { .fd = self->b, .key = 25, .total = BIG };
	unsigned char *buf;
	struct zc_stats z;
	pthread_t tw, tr;
	size_t n;

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));	/* no SA_RESTART */
	ASSERT_EQ(0, pthread_create(&tw, NULL, send_big, &w));
	while (!__atomic_load_n(&w.started, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(500000);
	pthread_kill(tw, SIGUSR1);
	pthread_join(tw, NULL);
	if (w.n < 0) {
		EXPECT_EQ(EINTR, w.err);
		w.n = 0;
	}
	EXPECT_GT(BIG, w.n) TH_LOG("the whole send went, unread");
	n = w.n;
	TH_LOG("%zu B of %d sent before the signal", n, BIG);
	/* its SrcAvail was cancelled, or declined first by the reader's side */
	if (self->rdma) {
		zc_stats(&z);
		EXPECT_LE(1, z.cancels - self->z0.cancels + z.declined - self->z0.declined);
	}
	/* (its buffer, kept, goes with the free() that unmapped it) */
	EXPECT_EQ(0, vm_pin_within(0, 50));
	ASSERT_EQ(0, pthread_create(&tr, NULL, read_all, &r));
	buf = malloc(BIG);
	ASSERT_NE(NULL, buf);
	stream_fill(w.key, n, buf, BIG - n);
	EXPECT_EQ(BIG - n, sdp_write_full(self->a, buf, BIG - n));
	free(buf);
	reader_done(_metadata, tr, &r);
	prove(_metadata, self, variant->sdp);
}

/* The peer closes with the send under way: it ends, nothing stays pinned. */
TEST_F_TIMEOUT(zc, peer_closes_mid_send, 120)
{
	struct writer w = { .fd = self->a, .key = 26 };
	pthread_t tw;

	ASSERT_EQ(0, pthread_create(&tw, NULL, send_big, &w));
	while (!__atomic_load_n(&w.started, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(500000);
	close(self->b);
	self->b = -1;
	pthread_join(tw, NULL);
	if (w.n < 0) {
		EXPECT_TRUE(w.err == ECONNRESET || w.err == EPIPE) TH_LOG("%s", strerror(w.err));
	} else {
		EXPECT_GT(BIG, w.n);
	}
	EXPECT_EQ(0, vm_pin_within(0, 50));
	if (!variant->sdp) {
		SDP_PROVE_TCP(self->a);
	} else if (self->rdma) {
		struct zc_stats z;

		zc_stats(&z);
		ASSERT_LE(1, z.sends - self->z0.sends);
		fprintf(stderr, "# PROOF rdma %lld SrcAvails before the reset\n",
			z.sends - self->z0.sends);
	} else {
		fprintf(stderr, "# PROOF fallback\n");
	}
}

/*
 * SO_ZEROCOPY on: set directly where the core lets the family have it
 * (TCP; SDP from 6.2), else as SDP_ZEROCOPY, which the shim substitutes.
 */
static void zerocopy_on(struct __test_metadata *_metadata, int fd, bool sdp)
{
	int err = sdp_setint(fd, SOL_SOCKET, SO_ZEROCOPY, 1);

	if (sdp && !sdp_direct_reuseport()) {
		ASSERT_EQ(-EOPNOTSUPP, err);
		ASSERT_EQ(-EINVAL, sdp_setint(fd, SOL_SDP, SDP_ZEROCOPY, 2));
		ASSERT_EQ(0, sdp_setint(fd, SOL_SDP, SDP_ZEROCOPY, 1));
		EXPECT_EQ(1, sdp_getint(fd, SOL_SDP, SDP_ZEROCOPY));
	} else {
		ASSERT_EQ(0, err);
		ASSERT_EQ(-EINVAL, sdp_setint(fd, SOL_SOCKET, SO_ZEROCOPY, 2));
	}
	EXPECT_EQ(1, sdp_getint(fd, SOL_SOCKET, SO_ZEROCOPY));
}

#define ZC_IDS		256	/* notification ids a case may take */

/* What the error queue said so far: every notification below id next. */
struct zc_notes {
	unsigned int next, copied, msgs;
	int err;
	bool seen[ZC_IDS];	/* (TCP: ids past next already notified) */
};

/*
 * Takes the error queue's zero-copy notifications, as IP_RECVERR or
 * IPV6_RECVERR. Over RDMA each must start where the last ended (complete
 * and in order); TCP's may come out of order (its msg_zerocopy.rst says
 * so: a retransmitted skb is freed late), so the oracle's must only cover
 * every id once.
 */
static void zc_notes_take(int fd, struct zc_notes *n)
{
	bool in_order = sdp_transport(fd) == SDP_TRANSPORT_RDMA;

	while (!n->err) {
		struct sock_extended_err e;
		int err = sdp_zc_note(fd, &e);
		unsigned int id;

		if (err) {
			if (err != -EAGAIN)
				n->err = -err;
			return;
		}
		if (e.ee_data < e.ee_info || e.ee_data >= ZC_IDS ||
		    (in_order ? e.ee_info != n->next : e.ee_info < n->next)) {
			n->err = ERANGE;
			return;
		}
		for (id = e.ee_info; id <= e.ee_data; id++) {
			if (n->seen[id])
				n->err = ERANGE;
			n->seen[id] = true;
		}
		if (e.ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
			n->copied += e.ee_data - e.ee_info + 1;
		while (n->next < ZC_IDS && n->seen[n->next])
			n->next++;
		n->msgs++;
	}
}

/* Waits until the notifications reach id @upto - 1 (false: not in time, or wrong). */
static bool zc_notes_wait(int fd, struct zc_notes *n, unsigned int upto, int ms)
{
	for (;;) {
		zc_notes_take(fd, n);
		if (n->err || n->next >= upto)
			return !n->err;
		if (sdp_poll1(fd, POLLERR, ms) <= 0)
			return false;
	}
}

#define ZC_SLOTS	4
#define ZC_SIZE		(256 << 10)
#define ZC_SENDS	24

/*
 * MSG_ZEROCOPY: each send() returns once its bytes are offered; a buffer
 * is written again only once its notification came, so a byte the
 * kernel still took from it afterwards would reach the reader wrong. The
 * notifications cover every send, in order. Over RDMA every send went by
 * SrcAvail without its sender waiting, none was copied.
 */
TEST_F_TIMEOUT(zc, msg_zerocopy_notifies_in_order, 120)
{
	struct reader r = { .fd = self->b, .key = 28, .total = (unsigned long long)ZC_SIZE * ZC_SENDS };
	struct zc_notes n = { 0 };
	unsigned char *buf;
	struct zc_stats z;
	pthread_t tr;
	unsigned int i;

	zerocopy_on(_metadata, self->a, variant->sdp);
	ASSERT_EQ(0, sdp_setint(self->b, SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20));
	ASSERT_EQ(0, posix_memalign((void **)&buf, 4096, ZC_SLOTS * ZC_SIZE));
	ASSERT_EQ(0, pthread_create(&tr, NULL, read_all, &r));
	for (i = 0; i < ZC_SENDS; i++) {
		unsigned char *p = buf + (i % ZC_SLOTS) * ZC_SIZE;

		if (i >= ZC_SLOTS)
			ASSERT_TRUE(zc_notes_wait(self->a, &n, i - ZC_SLOTS + 1, 20000))
				TH_LOG("send %u: notified up to %u: %s", i, n.next, strerror(n.err));
		stream_fill(r.key, (unsigned long long)i * ZC_SIZE, p, ZC_SIZE);
		ASSERT_EQ(ZC_SIZE, send(self->a, p, ZC_SIZE, MSG_ZEROCOPY))
			TH_LOG("send %u: %s", i, strerror(errno));
	}
	EXPECT_TRUE(zc_notes_wait(self->a, &n, ZC_SENDS, 20000))
		TH_LOG("notified up to %u: %s", n.next, strerror(n.err));
	EXPECT_EQ(ZC_SENDS, n.next);
	reader_done(_metadata, tr, &r);
	TH_LOG("%u sends notified in %u messages, %u copied", n.next, n.msgs, n.copied);
	if (self->rdma) {
		zc_stats(&z);
		EXPECT_EQ(ZC_SENDS, z.async - self->z0.async);
		EXPECT_EQ((long long)ZC_SIZE * ZC_SENDS, z.tx - self->z0.tx);
		EXPECT_EQ(0, n.copied);
	}
	free(buf);
	prove(_metadata, self, variant->sdp);
}

/*
 * MSG_ZEROCOPY without SO_ZEROCOPY is a plain send, as TCP's: no
 * notification. With it, a send the reader leaves unread returns at once;
 * the reader's side declines what SO_RCVBUF does not hold and the rest
 * goes by copies from the sender's pages, notified as copied. The buffer,
 * overwritten once notified, still reads as sent.
 */
TEST_F_TIMEOUT(zc, msg_zerocopy_unread_is_copied, 60)
{
	static unsigned char out[300000], in[300000];
	struct zc_notes n = { 0 };
	struct zc_stats z;
	bool early;

	stream_fill(29, 0, out, 5000);
	ASSERT_EQ(5000, send(self->a, out, 5000, MSG_ZEROCOPY));
	ASSERT_EQ(5000, sdp_read_full(self->b, in, 5000));
	EXPECT_EQ(-1, stream_check(29, 0, in, 5000));
	EXPECT_EQ(0, sdp_poll1(self->a, POLLERR, 200));
	zc_notes_take(self->a, &n);
	EXPECT_EQ(0, n.err);
	EXPECT_EQ(0, n.msgs);

	zerocopy_on(_metadata, self->a, variant->sdp);
	/* room for the copies: the notification need not wait for the reader */
	ASSERT_EQ(0, sdp_setint(self->a, SOL_SOCKET, SO_SNDBUF, 1 << 20));
	zc_stats(&self->z0);
	stream_fill(29, 5000, out, sizeof(out));
	ASSERT_EQ(sizeof(out), send(self->a, out, sizeof(out), MSG_ZEROCOPY));
	early = zc_notes_wait(self->a, &n, 1, 3000);
	ASSERT_EQ(0, n.err);
	if (early)
		memset(out, 0xa5, sizeof(out));
	ASSERT_EQ(sizeof(in), sdp_read_full(self->b, in, sizeof(in)));
	EXPECT_EQ(-1, stream_check(29, 5000, in, sizeof(in)));
	ASSERT_TRUE(zc_notes_wait(self->a, &n, 1, 20000))
		TH_LOG("no notification: %s", strerror(n.err));
	TH_LOG("notified %s the reader read", early ? "before" : "after");
	/* one more, notified, left unread on the error queue at the close */
	ASSERT_EQ(5000, send(self->a, out, 5000, MSG_ZEROCOPY));
	ASSERT_EQ(5000, sdp_read_full(self->b, in, 5000));
	EXPECT_TRUE(sdp_poll1(self->a, POLLERR, 20000) & POLLERR);
	if (self->rdma) {
		EXPECT_TRUE(early);
		zc_stats(&z);
		EXPECT_EQ(1, z.async - self->z0.async);
		EXPECT_EQ(1, z.declined - self->z0.declined);
		EXPECT_EQ(1, n.copied);
		TH_LOG("%lld B read of the SrcAvail, the rest copied", z.tx - self->z0.tx);
	}
	prove(_metadata, self, variant->sdp);
}

/*
 * Several MSG_ZEROCOPY sends out at once, as TCP takes them into its send
 * buffer: four of 256 KiB, non-blocking, while the reader does not read,
 * each taken whole (over RDMA the first is offered, read as far as
 * SO_RCVBUF goes, the others queue behind it, pinned). Then all arrive,
 * in order, and all are notified.
 */
TEST_F_TIMEOUT(zc, msg_zerocopy_sends_queue, 60)
{
	static unsigned char out[4][256 << 10], in[4 * (256 << 10)];
	struct zc_notes n = { 0 };
	struct zc_stats z;
	unsigned int i;

	zerocopy_on(_metadata, self->a, variant->sdp);
	/* (past net.core.wmem_max: room for all four, as for TCP's send buffer) */
	ASSERT_EQ(0, sdp_setint(self->a, SOL_SOCKET, SO_SNDBUFFORCE, 2 << 20));
	for (i = 0; i < 4; i++) {
		stream_fill(31, i * sizeof(out[0]), out[i], sizeof(out[0]));
		ASSERT_EQ(sizeof(out[0]), send(self->a, out[i], sizeof(out[0]),
					       MSG_ZEROCOPY | MSG_DONTWAIT))
			TH_LOG("send %u: %s", i, strerror(errno));
	}
	ASSERT_EQ(sizeof(in), sdp_read_full(self->b, in, sizeof(in)));
	EXPECT_EQ(-1, stream_check(31, 0, in, sizeof(in)));
	EXPECT_TRUE(zc_notes_wait(self->a, &n, 4, 20000))
		TH_LOG("notified up to %u: %s", n.next, strerror(n.err));
	TH_LOG("%u of 4 sends notified as copied", n.copied);
	if (self->rdma) {
		zc_stats(&z);
		EXPECT_EQ(4, z.async - self->z0.async);
	}
	prove(_metadata, self, variant->sdp);
}

/*
 * An epoll sender's MSG_ZEROCOPY sends: poll() says writable while another
 * fits behind those queued (as TCP's while its send buffer has room), so
 * several are out at once without the reader reading. Over RDMA, with
 * four queued (the most a connection takes) there is no room: not
 * writable, and a non-blocking send gets EAGAIN, taking nothing. Room
 * comes back as the reader reads; every send is offered by SrcAvail and
 * notified.
 */
TEST_F_TIMEOUT(zc, msg_zerocopy_room_is_writable, 60)
{
	static unsigned char out[6][ZC_SIZE];
	struct reader r = { .fd = self->b, .key = 33, .total = sizeof(out) };
	struct zc_notes n = { 0 };
	unsigned int i, calls = 0;
	struct zc_stats z;
	pthread_t tr;

	zerocopy_on(_metadata, self->a, variant->sdp);
	/* (past net.core.wmem_max: room for all, as for TCP's send buffer) */
	ASSERT_EQ(0, sdp_setint(self->a, SOL_SOCKET, SO_SNDBUFFORCE, 2 << 20));
	for (i = 0; i < 6; i++)
		stream_fill(r.key, (unsigned long long)i * ZC_SIZE, out[i], ZC_SIZE);
	for (i = 0; i < 4; i++) {
		ASSERT_LT(0, sdp_poll1(self->a, POLLOUT, 0)) TH_LOG("not writable before send %u", i);
		ASSERT_EQ(ZC_SIZE, send(self->a, out[i], ZC_SIZE, MSG_ZEROCOPY | MSG_DONTWAIT))
			TH_LOG("send %u: %s", i, strerror(errno));
		calls++;
	}
	if (self->rdma) {
		EXPECT_EQ(0, sdp_poll1(self->a, POLLOUT, 0));
		EXPECT_EQ(-1, send(self->a, out[4], ZC_SIZE, MSG_ZEROCOPY | MSG_DONTWAIT));
		EXPECT_EQ(EAGAIN, errno);
	}
	ASSERT_EQ(0, pthread_create(&tr, NULL, read_all, &r));
	for (i = 4; i < 6; i++) {
		size_t off = 0;

		while (off < ZC_SIZE) {
			ssize_t k = send(self->a, out[i] + off, ZC_SIZE - off,
					 MSG_ZEROCOPY | MSG_DONTWAIT);

			if (k < 0) {
				ASSERT_EQ(EAGAIN, errno);
				ASSERT_LT(0, sdp_poll1(self->a, POLLOUT, 10000));
				continue;
			}
			off += k;
			calls++;
		}
	}
	reader_done(_metadata, tr, &r);
	EXPECT_TRUE(zc_notes_wait(self->a, &n, calls, 20000))
		TH_LOG("notified up to %u of %u: %s", n.next, calls, strerror(n.err));
	/* (what the reader's side declined while it lagged is copied: a matter of timing) */
	TH_LOG("%u of %u sends notified as copied", n.copied, calls);
	if (self->rdma) {
		zc_stats(&z);
		EXPECT_EQ(6, z.async - self->z0.async);
	}
	prove(_metadata, self, variant->sdp);
}

/*
 * The reader closes with MSG_ZEROCOPY's bytes unread: the connection
 * resets, and the sender, which keeps its socket, is notified all the
 * same (TCP's reset frees its queue), then gets the reset.
 */
TEST_F_TIMEOUT(zc, msg_zerocopy_peer_resets, 60)
{
	static unsigned char out[300000], in[1000];
	struct zc_notes n = { 0 };

	zerocopy_on(_metadata, self->a, variant->sdp);
	ASSERT_EQ(0, sdp_setint(self->a, SOL_SOCKET, SO_SNDBUF, 1 << 20));
	stream_fill(32, 0, out, sizeof(out));
	ASSERT_EQ(sizeof(out), send(self->a, out, sizeof(out), MSG_ZEROCOPY));
	ASSERT_EQ(sizeof(in), sdp_read_full(self->b, in, sizeof(in)));
	if (!variant->sdp)
		SDP_PROVE_TCP(self->a);
	close(self->b);
	self->b = -1;
	EXPECT_TRUE(zc_notes_wait(self->a, &n, 1, 20000))
		TH_LOG("no notification after the reset: %s", strerror(n.err));
	EXPECT_EQ(-1, send(self->a, out, 1, MSG_NOSIGNAL));
	EXPECT_TRUE(errno == ECONNRESET || errno == EPIPE) TH_LOG("%s", strerror(errno));
	if (self->rdma) {
		struct zc_stats z;

		zc_stats(&z);
		ASSERT_EQ(1, z.async - self->z0.async);
		fprintf(stderr, "# PROOF rdma 1 SrcAvail, then the reset\n");
	} else if (variant->sdp) {
		fprintf(stderr, "# PROOF fallback\n");
	}
}

/*
 * close() right after a MSG_ZEROCOPY send the peer has not read: the peer
 * still gets every byte, then the end of the stream; nothing stays pinned.
 * Over RDMA, what SO_RCVBUF does not hold is declined and copied after the
 * close, DisConn after it.
 */
TEST_F_TIMEOUT(zc, msg_zerocopy_then_close, 60)
{
	static unsigned char out[300000], in[300001];
	struct zc_stats z;
	int i;

	zerocopy_on(_metadata, self->a, variant->sdp);
	stream_fill(30, 0, out, sizeof(out));
	ASSERT_EQ(sizeof(out), send(self->a, out, sizeof(out), MSG_ZEROCOPY));
	if (!variant->sdp)
		SDP_PROVE_TCP(self->a);
	close(self->a);
	self->a = -1;
	/* over RDMA the reader's side declines the rest meanwhile: it is copied after the close */
	for (i = 0; i < 100 && self->rdma && sdp_stat("ZcopyDeclined") == self->z0.declined; i++)
		usleep(100000);
	EXPECT_EQ(sizeof(out), sdp_read_full(self->b, in, sizeof(in)));
	EXPECT_EQ(-1, stream_check(30, 0, in, sizeof(out)));
	if (self->rdma) {
		zc_stats(&z);
		ASSERT_EQ(1, z.async - self->z0.async);
		EXPECT_EQ(1, z.declined - self->z0.declined);
		fprintf(stderr, "# PROOF rdma %lld B of its SrcAvail read, the rest copied\n",
			z.tx - self->z0.tx);
	} else if (variant->sdp) {
		fprintf(stderr, "# PROOF fallback\n");
	}
}

/*
 * A connection's memory regions are its own (its protection domain's): its
 * first zero-copy send makes one, its later sends from other buffers map
 * theirs into it again (with a new key each time), and it goes with the
 * connection; the next connection makes its own.
 */
TEST_F_TIMEOUT(zc, memory_regions_are_the_connections, 60)
{
	long long reused = sdp_stat("ZcopyMrReused"), allocs = sdp_stat("ZcopyMrAllocs");
	int a = -1, b = -1, i, k, mrs = -1, now = -1;
	struct zc_stats z;

	for (i = 0; i < 2; i++) {
		struct reader r = { .key = 40 + i, .total = 3 * SRCAVAIL_MAX };
		pthread_t tr;

		ASSERT_EQ(0, sdp_pair(variant->sdp ? sdp_family() : AF_INET, SDP_A, &a, &b));
		r.fd = b;
		ASSERT_EQ(0, sdp_setint(b, SOL_SOCKET, SO_RCVBUFFORCE, 4 << 20));
		/* (the reader copies, as the fixture's: only the sends take MRs) */
		if (variant->sdp)
			ASSERT_EQ(0, sdp_setint(b, SOL_SDP, SDP_ZCOPY_THRESH, 0));
		ASSERT_EQ(0, pthread_create(&tr, NULL, read_all, &r));
		/*
		 * Three buffers, each unmapped after its send: the kept one is
		 * stale at the next send, whose buffer takes its slot and MR.
		 * (No huge page: see own_pages().)
		 */
		for (k = 0; k < 3; k++) {
			unsigned char *buf = mmap(NULL, SRCAVAIL_MAX, PROT_READ | PROT_WRITE,
						  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			ASSERT_NE(MAP_FAILED, buf);
			ASSERT_TRUE(!madvise(buf, SRCAVAIL_MAX, MADV_NOHUGEPAGE) || errno == EINVAL);
			stream_fill(r.key, k * SRCAVAIL_MAX, buf, SRCAVAIL_MAX);
			ASSERT_EQ(SRCAVAIL_MAX, send(a, buf, SRCAVAIL_MAX, 0));
			ASSERT_EQ(0, munmap(buf, SRCAVAIL_MAX));
		}
		reader_done(_metadata, tr, &r);
		if (self->rdma && !i)
			mrs = rdma_objects(RDMA_NLDEV_CMD_RES_MR_GET);
		close(a);
		close(b);
		/* the MR goes with the connection */
		ASSERT_EQ(0, vm_pin_within(0, 50));
		if (self->rdma && !i) {
			for (k = 0; k < 50 && (now = rdma_objects(RDMA_NLDEV_CMD_RES_MR_GET)) >= mrs; k++)
				usleep(100000);
			EXPECT_GT(mrs, now) TH_LOG("memory regions: %d, then %d", mrs, now);
		}
	}
	if (!self->rdma) {
		prove(_metadata, self, variant->sdp);
		return;
	}
	zc_stats(&z);
	EXPECT_EQ(6, z.sends - self->z0.sends);
	EXPECT_EQ(2, sdp_stat("ZcopyMrAllocs") - allocs);
	EXPECT_EQ(4, sdp_stat("ZcopyMrReused") - reused);
	TH_LOG("2 connections' 6 sends: %lld memory regions made, %lld used again",
	       sdp_stat("ZcopyMrAllocs") - allocs, sdp_stat("ZcopyMrReused") - reused);
	prove(_metadata, self, true);
}

/*
 * A buffer of its own pages (no huge page shared with another mapping,
 * whose split, when that one is unmapped, the kernel reports as a change
 * of the buffer's range, as a real change; a kernel without huge pages
 * refuses the advice), and the reader of @r started on a socket that
 * holds 4 MiB unread. NULL if either failed.
 */
static unsigned char *own_pages(struct __test_metadata *_metadata, FIXTURE_DATA(zc) *self,
				struct reader *r, pthread_t *tr)
{
	unsigned char *buf = mmap(NULL, SRCAVAIL_MAX, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (buf == MAP_FAILED ||
	    (madvise(buf, SRCAVAIL_MAX, MADV_NOHUGEPAGE) && errno != EINVAL) ||
	    sdp_setint(self->b, SOL_SOCKET, SO_RCVBUFFORCE, 4 << 20) ||
	    pthread_create(tr, NULL, read_all, r))
		return NULL;
	return buf;
}

/*
 * A buffer sent again is not pinned and mapped again: the first blocking
 * send keeps it (VmPin counts it while it is kept), the next three of the
 * same bytes find it, each sending what the buffer holds then. Unused for
 * 5 s, it goes, still mapped.
 */
TEST_F_TIMEOUT(zc, a_buffer_sent_again_stays_pinned, 60)
{
	long long hits = sdp_stat("ZcopyCacheHits"), misses = sdp_stat("ZcopyCacheMisses");
	struct reader r = { .fd = self->b, .key = 50, .total = 4 * SRCAVAIL_MAX };
	unsigned char *buf;
	pthread_t tr;
	int i;

	buf = own_pages(_metadata, self, &r, &tr);
	ASSERT_NE(NULL, buf);
	for (i = 0; i < 4; i++) {
		stream_fill(r.key, (unsigned long long)i * SRCAVAIL_MAX, buf, SRCAVAIL_MAX);
		ASSERT_EQ(SRCAVAIL_MAX, send(self->a, buf, SRCAVAIL_MAX, 0));
	}
	reader_done(_metadata, tr, &r);
	EXPECT_EQ(self->rdma ? SRCAVAIL_MAX >> 10 : 0, vm_pin());
	if (self->rdma) {
		EXPECT_EQ(1, sdp_stat("ZcopyCacheMisses") - misses);
		EXPECT_EQ(3, sdp_stat("ZcopyCacheHits") - hits);
	}
	EXPECT_EQ(0, vm_pin_within(0, 100));
	ASSERT_EQ(0, munmap(buf, SRCAVAIL_MAX));
	prove(_metadata, self, variant->sdp);
}

/*
 * A kept buffer's pages given back (madvise MADV_DONTNEED: the next touch
 * maps zeroed pages) or its address mapped anew (mmap MAP_FIXED over it):
 * the next send pins the new pages and sends their bytes, not the old
 * pages'. The old buffer is dropped as stale each time.
 */
TEST_F_TIMEOUT(zc, a_buffer_mapped_anew_is_pinned_anew, 60)
{
	long long hits = sdp_stat("ZcopyCacheHits"), misses = sdp_stat("ZcopyCacheMisses");
	long long stale = sdp_stat("ZcopyCacheStale");
	struct reader r = { .fd = self->b, .key = 51, .total = 3 * SRCAVAIL_MAX };
	unsigned char *buf, *again;
	pthread_t tr;

	buf = own_pages(_metadata, self, &r, &tr);
	ASSERT_NE(NULL, buf);
	stream_fill(r.key, 0, buf, SRCAVAIL_MAX);
	ASSERT_EQ(SRCAVAIL_MAX, send(self->a, buf, SRCAVAIL_MAX, 0));
	EXPECT_EQ(self->rdma ? SRCAVAIL_MAX >> 10 : 0, vm_pin());
	ASSERT_EQ(0, madvise(buf, SRCAVAIL_MAX, MADV_DONTNEED));
	stream_fill(r.key, SRCAVAIL_MAX, buf, SRCAVAIL_MAX);
	ASSERT_EQ(SRCAVAIL_MAX, send(self->a, buf, SRCAVAIL_MAX, 0));
	again = mmap(buf, SRCAVAIL_MAX, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(buf, again);
	stream_fill(r.key, 2 * SRCAVAIL_MAX, again, SRCAVAIL_MAX);
	ASSERT_EQ(SRCAVAIL_MAX, send(self->a, again, SRCAVAIL_MAX, 0));
	reader_done(_metadata, tr, &r);
	ASSERT_EQ(0, munmap(again, SRCAVAIL_MAX));
	if (self->rdma) {
		EXPECT_EQ(3, sdp_stat("ZcopyCacheMisses") - misses);
		EXPECT_EQ(0, sdp_stat("ZcopyCacheHits") - hits);
		EXPECT_LE(2, sdp_stat("ZcopyCacheStale") - stale);
	}
	prove(_metadata, self, variant->sdp);
}

/*
 * The peer resets the connection: the buffer kept for its next send goes
 * at once (well before 5 s unused), though still mapped and the socket
 * open.
 */
TEST_F_TIMEOUT(zc, a_kept_buffer_goes_with_its_connection, 60)
{
	struct reader r = { .fd = self->b, .key = 52, .total = SRCAVAIL_MAX };
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	unsigned char *buf;
	pthread_t tr;

	buf = own_pages(_metadata, self, &r, &tr);
	ASSERT_NE(NULL, buf);
	stream_fill(r.key, 0, buf, SRCAVAIL_MAX);
	ASSERT_EQ(SRCAVAIL_MAX, send(self->a, buf, SRCAVAIL_MAX, 0));
	reader_done(_metadata, tr, &r);
	EXPECT_EQ(self->rdma ? SRCAVAIL_MAX >> 10 : 0, vm_pin());
	if (!variant->sdp)
		SDP_PROVE_TCP(self->a);
	else
		prove(_metadata, self, true);
	ASSERT_EQ(0, setsockopt(self->b, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
	close(self->b);
	self->b = -1;
	EXPECT_EQ(0, vm_pin_within(0, 20));
	ASSERT_EQ(0, munmap(buf, SRCAVAIL_MAX));
}

/*
 * Zero-copy reads (SinkAvail, the peer's RDMA Write, RdmaWrCompl): the
 * reader b takes the namespace's threshold again; a only sends.
 */
static void reads_in_place(struct __test_metadata *_metadata, FIXTURE_DATA(zc) *self, bool sdp)
{
	if (sdp)
		ASSERT_EQ(0, sdp_setint(self->b, SOL_SDP, SDP_ZCOPY_THRESH,
					sdp_sysctl("zcopy_thresh")));
}

/* A read of the test's, in a thread of its own. */
/* @whole: after the read, the thread reads the rest too (into @rest), so a sender never waits on a join */
struct rd_read {
	int fd, flags;
	unsigned char *buf;
	size_t len;
	ssize_t n, rest;
	int err;
	bool whole;
};

static void *rd_recv(void *arg)
{
	struct rd_read *r = arg;

	r->n = recv(r->fd, r->buf, r->len, r->flags);
	r->err = errno;
	if (r->whole && r->n > 0)
		r->rest = sdp_read_full(r->fd, r->buf + r->n, r->len - r->n);
	return NULL;
}

/*
 * The read is waiting: over RDMA its SinkAvail went out (ZcopyRecvs past
 * @recvs, within 5 s) and the sender took in all we sent; over TCP,
 * 200 ms. False if none went.
 */
static bool rd_waits(FIXTURE_DATA(zc) *self, long long recvs)
{
	int i;

	if (!self->rdma) {
		usleep(200000);
		return true;
	}
	for (i = 0; i < 500 && sdp_stat("ZcopyRecvs") <= recvs; i++)
		usleep(10000);
	if (sdp_stat("ZcopyRecvs") <= recvs)
		return false;
	/*
	 * and the sender has it: a send before would go copied, crossing
	 * the SinkAvail, which is then declined
	 */
	for (i = 0; i < 500; i++, usleep(10000)) {
		struct sdp_info ia, ib;

		if (sdp_info(self->a, &ia) || sdp_info(self->b, &ib))
			return false;
		if (ia.rx_msgs >= ib.tx_msgs)
			return true;
	}
	return false;
}

/* What the peer wrote into our reads, as both ends and the counters say. */
static long long rd_written(struct __test_metadata *_metadata, FIXTURE_DATA(zc) *self)
{
	struct sdp_info ia, ib;

	if (sdp_info(self->a, &ia) || sdp_info(self->b, &ib))
		return -1;
	EXPECT_EQ(ia.zw_tx_bytes, ib.zw_rx_bytes);
	EXPECT_EQ(ib.zw_rx_bytes, sdp_stat("ZcopyRecvBytes") - self->z0.recv_bytes);
	return ib.zw_rx_bytes;
}

/*
 * A blocking read of at least the threshold that waits with nothing to
 * read: the sender's next send is RDMA Written into its buffer, and the
 * read returns it. Sizes around the threshold and the SinkAvail's limit
 * (1 MiB: the rest comes after), at unaligned addresses; the reader reads
 * on till it has each send, every byte checked. Each send is of the
 * sender's threshold or more: written from its own pages, neither end
 * copying (a 1 MiB+4097 send's last 4097 bytes come as Data).
 */
TEST_F_TIMEOUT(zc, a_waiting_read_is_written_in_place, 120)
{
	static const size_t sizes[] = { 65536, 65537, 300000, SRCAVAIL_MAX, SRCAVAIL_MAX + 4097 };
	static const size_t offs[] = { 0, 1, 4095 };
	unsigned long long sent = 0, inplace = 0;
	unsigned char *out, *in;
	unsigned int i, k;

	reads_in_place(_metadata, self, variant->sdp);
	ASSERT_EQ(0, posix_memalign((void **)&in, 4096, 2 * SRCAVAIL_MAX + 8192));
	out = malloc(2 * SRCAVAIL_MAX);
	ASSERT_NE(NULL, out);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (k = 0; k < 3; k++) {
			struct rd_read r = { .fd = self->b, .buf = in + offs[k], .len = sizes[i],
					     .whole = true };
			long long recvs = sdp_stat("ZcopyRecvs");
			size_t got;
			pthread_t t;

			ASSERT_EQ(0, pthread_create(&t, NULL, rd_recv, &r));
			EXPECT_TRUE(rd_waits(self, recvs)) TH_LOG("%zu at +%zu: no SinkAvail", sizes[i], offs[k]);
			stream_fill(60, sent, out, sizes[i]);
			ASSERT_EQ(sizes[i], send(self->a, out, sizes[i], 0));
			pthread_join(t, NULL);
			ASSERT_LT(0, r.n) TH_LOG("%s", strerror(r.err));
			got = r.n;
			if (got == (sizes[i] < SRCAVAIL_MAX ? sizes[i] : SRCAVAIL_MAX))
				inplace++;
			ASSERT_EQ(sizes[i] - got, r.rest);
			EXPECT_EQ(-1, stream_check(60, sent, r.buf, sizes[i]))
				TH_LOG("%zu at +%zu: wrong at %lld", sizes[i], offs[k],
				       stream_check(60, sent, r.buf, sizes[i]));
			sent += sizes[i];
		}
	}
	TH_LOG("%llu B in %zu sends, %llu of them read whole by the first read",
	       sent, 3 * sizeof(sizes) / sizeof(sizes[0]), inplace);
	if (self->rdma) {
		long long w = rd_written(_metadata, self);

		/* (a credit update of the sender's that crosses a SinkAvail has it declined) */
		EXPECT_LE((long long)sent / 2, w) TH_LOG("%lld B written in place", w);
		EXPECT_EQ(w, sdp_stat("ZcopyDirectBytes") - self->z0.direct);
		EXPECT_LE(15, sdp_stat("ZcopyRecvs") - self->z0.recvs);
		TH_LOG("%lld B written in place by %lld SinkAvails, %lld declined", w,
		       sdp_stat("ZcopyRecvs") - self->z0.recvs,
		       sdp_stat("ZcopyRecvDeclined") - self->z0.recv_declined);
	}
	free(out);
	free(in);
	prove_pair(_metadata, &self->pr, self->a, variant->sdp);
}

/*
 * A waiting read cut short, by a signal (no SA_RESTART), SO_RCVTIMEO, or
 * the peer's reset: it ends as TCP's does (EINTR, EAGAIN, ECONNRESET). Over
 * RDMA its SinkAvail was asked back (SinkAvailCancel) and answered with
 * none written, or revoked with the connection; after the first two the
 * stream goes on intact.
 */
static void rd_cut(struct __test_metadata *_metadata, FIXTURE_DATA(zc) *self, bool sdp,
		   int how)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct timeval tv = { .tv_usec = 300000 };
	static const int want[] = { EINTR, EAGAIN, ECONNRESET };
	unsigned char *buf = malloc(SRCAVAIL_MAX);
	struct rd_read r = { .fd = self->b, .buf = buf, .len = SRCAVAIL_MAX };
	long long recvs = sdp_stat("ZcopyRecvs");
	pthread_t t;

	ASSERT_NE(NULL, buf);
	reads_in_place(_metadata, self, sdp);
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	if (how == 1)
		ASSERT_EQ(0, setsockopt(self->b, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	ASSERT_EQ(0, pthread_create(&t, NULL, rd_recv, &r));
	EXPECT_TRUE(rd_waits(self, recvs));
	if (how == 0)
		pthread_kill(t, SIGUSR1);
	if (how == 2) {
		ASSERT_EQ(0, setsockopt(self->a, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)));
		close(self->a);
		self->a = -1;
	}
	pthread_join(t, NULL);
	EXPECT_EQ(-1, r.n);
	EXPECT_EQ(want[how], r.err) TH_LOG("%s", strerror(r.err));
	if (self->rdma && how < 2)
		EXPECT_EQ(1, sdp_stat("ZcopyRecvDeclined") - self->z0.recv_declined);
	/* (its buffer, kept for the next read, goes with the connection or the free()) */
	if (how == 2) {
		EXPECT_EQ(0, vm_pin_within(0, 20));
		free(buf);
		if (self->rdma)
			fprintf(stderr, "# PROOF rdma a SinkAvail, then the reset\n");
		else if (sdp)
			fprintf(stderr, "# PROOF fallback\n");
		else
			SDP_PROVE_TCP(self->b);
		return;
	}
	stream_fill(61, 0, buf, 100000);
	ASSERT_EQ(100000, send(self->a, buf, 100000, 0));
	memset(buf, 0, 100000);
	ASSERT_EQ(100000, sdp_read_full(self->b, buf, 100000));
	EXPECT_EQ(-1, stream_check(61, 0, buf, 100000));
	free(buf);
	prove_pair(_metadata, &self->pr, self->a, sdp);
}

TEST_F_TIMEOUT(zc, a_signal_ends_a_waiting_read, 60)
{
	rd_cut(_metadata, self, variant->sdp, 0);
}

TEST_F_TIMEOUT(zc, rcvtimeo_ends_a_waiting_read, 60)
{
	rd_cut(_metadata, self, variant->sdp, 1);
}

TEST_F_TIMEOUT(zc, a_reset_ends_a_waiting_read, 60)
{
	rd_cut(_metadata, self, variant->sdp, 2);
}

/*
 * A read that waits with no bytes coming gives its buffer back after
 * 200 ms (its SinkAvail asked back, answered with none) and waits on as
 * any read: nothing stays pinned while it idles, nothing is kept after.
 */
TEST_F_TIMEOUT(zc, an_idle_read_holds_nothing, 60)
{
	/* (no huge page: a split would make a kept buffer stale, and let it go) */
	unsigned char *buf = mmap(NULL, SRCAVAIL_MAX, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rd_read r = { .fd = self->b, .buf = buf, .len = SRCAVAIL_MAX };
	pthread_t t;

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_TRUE(!madvise(buf, SRCAVAIL_MAX, MADV_NOHUGEPAGE) || errno == EINVAL);
	reads_in_place(_metadata, self, variant->sdp);
	ASSERT_EQ(0, pthread_create(&t, NULL, rd_recv, &r));
	usleep(800000);
	EXPECT_EQ(0, vm_pin());
	if (self->rdma) {
		EXPECT_EQ(1, sdp_stat("ZcopyRecvs") - self->z0.recvs);
		EXPECT_EQ(1, sdp_stat("ZcopyRecvDeclined") - self->z0.recv_declined);
	}
	stream_fill(64, 0, buf + SRCAVAIL_MAX / 2, 1000);
	ASSERT_EQ(1000, send(self->a, buf + SRCAVAIL_MAX / 2, 1000, 0));
	pthread_join(t, NULL);
	ASSERT_EQ(1000, r.n) TH_LOG("%s", strerror(r.err));
	EXPECT_EQ(-1, stream_check(64, 0, buf, 1000));
	EXPECT_EQ(0, vm_pin());
	ASSERT_EQ(0, munmap(buf, SRCAVAIL_MAX));
	prove_pair(_metadata, &self->pr, self->a, variant->sdp);
}

/*
 * What offers no buffer: a peek (the bytes stay queued), a read below the
 * threshold, one with the threshold 0. Each waits for the data, which
 * comes as Data, intact.
 */
TEST_F_TIMEOUT(zc, peeks_and_small_reads_copy, 60)
{
	static const struct { size_t len; int flags, thresh; } reads[] = {
		{ SRCAVAIL_MAX, MSG_PEEK, -1 }, { 65535, 0, -1 }, { SRCAVAIL_MAX, 0, 0 },
	};
	unsigned char *buf = malloc(SRCAVAIL_MAX), out[70000];
	unsigned long long off = 0;
	unsigned int i;

	ASSERT_NE(NULL, buf);
	reads_in_place(_metadata, self, variant->sdp);
	for (i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
		struct rd_read r = { .fd = self->b, .buf = buf, .len = reads[i].len,
				     .flags = reads[i].flags };
		pthread_t t;

		if (variant->sdp && reads[i].thresh >= 0)
			ASSERT_EQ(0, sdp_setint(self->b, SOL_SDP, SDP_ZCOPY_THRESH, reads[i].thresh));
		ASSERT_EQ(0, pthread_create(&t, NULL, rd_recv, &r));
		usleep(200000);
		stream_fill(62, off, out, sizeof(out));
		ASSERT_EQ(sizeof(out), send(self->a, out, sizeof(out), 0));
		pthread_join(t, NULL);
		ASSERT_LT(0, r.n) TH_LOG("%s", strerror(r.err));
		EXPECT_EQ(-1, stream_check(62, off, buf, r.n));
		/* the rest; after the peek, all of it */
		if (reads[i].flags & MSG_PEEK)
			r.n = 0;
		ASSERT_EQ(sizeof(out) - r.n, sdp_read_full(self->b, buf + r.n, sizeof(out) - r.n));
		EXPECT_EQ(-1, stream_check(62, off, buf, sizeof(out)));
		off += sizeof(out);
	}
	if (self->rdma)
		EXPECT_EQ(0, sdp_stat("ZcopyRecvs") - self->z0.recvs);
	free(buf);
	prove_pair(_metadata, &self->pr, self->a, variant->sdp);
}

/*
 * A peek waiting beside a read in place (MSG_PEEK racing a SinkAvail)
 * shows the stream where reading stands when it looks, never bytes out of
 * order: the first send's, taken before the read (TCP's peek may), or the
 * next send's, the read having taken the first. Over RDMA the first went
 * into the read's buffer in place, so the peek shows the second.
 */
TEST_F_TIMEOUT(zc, a_peek_beside_a_read_in_place, 60)
{
	unsigned char *in = malloc(SRCAVAIL_MAX), *pk = malloc(SRCAVAIL_MAX), out[70000];
	struct rd_read p = { .fd = self->b, .buf = pk, .len = SRCAVAIL_MAX, .flags = MSG_PEEK };
	struct rd_read r = { .fd = self->b, .buf = in, .len = SRCAVAIL_MAX };
	long long recvs = sdp_stat("ZcopyRecvs");
	const size_t total = sizeof(out) + 1000;
	pthread_t tp, tr;
	size_t at;

	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, pk);
	reads_in_place(_metadata, self, variant->sdp);
	ASSERT_EQ(0, pthread_create(&tp, NULL, rd_recv, &p));
	usleep(100000);
	ASSERT_EQ(0, pthread_create(&tr, NULL, rd_recv, &r));
	EXPECT_TRUE(rd_waits(self, recvs));
	stream_fill(65, 0, out, sizeof(out));
	ASSERT_EQ(sizeof(out), send(self->a, out, sizeof(out), 0));
	pthread_join(tr, NULL);
	ASSERT_LT(0, r.n) TH_LOG("%s", strerror(r.err));
	EXPECT_EQ(-1, stream_check(65, 0, in, r.n));
	/* the next send, for a peek still waiting */
	stream_fill(65, sizeof(out), out, 1000);
	ASSERT_EQ(1000, send(self->a, out, 1000, 0));
	pthread_join(tp, NULL);
	ASSERT_LT(0, p.n) TH_LOG("%s", strerror(p.err));
	at = stream_check(65, r.n, pk, p.n) == -1 ? r.n : 0;
	EXPECT_EQ(-1, stream_check(65, at, pk, p.n)) TH_LOG("the peek's bytes are at neither end of the read");
	ASSERT_EQ(total - r.n, sdp_read_full(self->b, in + r.n, total - r.n));
	EXPECT_EQ(-1, stream_check(65, 0, in, total));
	if (self->rdma) {
		EXPECT_EQ(r.n, at);
		EXPECT_EQ((long long)r.n, rd_written(_metadata, self));
	}
	free(in);
	free(pk);
	prove_pair(_metadata, &self->pr, self->a, variant->sdp);
}

/*
 * A buffer read into again is not pinned again (the registration cache):
 * four reads into one buffer, 1 miss and 3 hits; VmPin counts it kept.
 */
TEST_F_TIMEOUT(zc, a_buffer_read_into_again_stays_pinned, 60)
{
	long long hits = sdp_stat("ZcopyCacheHits"), misses = sdp_stat("ZcopyCacheMisses");
	unsigned char *in = mmap(NULL, SRCAVAIL_MAX, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *out = malloc(SRCAVAIL_MAX);
	int i;

	ASSERT_NE(MAP_FAILED, in);
	ASSERT_NE(NULL, out);
	ASSERT_TRUE(!madvise(in, SRCAVAIL_MAX, MADV_NOHUGEPAGE) || errno == EINVAL);
	reads_in_place(_metadata, self, variant->sdp);
	/* (the sender copies, so that only the reads pin) */
	if (variant->sdp)
		ASSERT_EQ(0, sdp_setint(self->a, SOL_SDP, SDP_ZCOPY_THRESH, 0));
	for (i = 0; i < 4; i++) {
		struct rd_read r = { .fd = self->b, .buf = in, .len = SRCAVAIL_MAX };
		long long recvs = sdp_stat("ZcopyRecvs");
		pthread_t t;

		ASSERT_EQ(0, pthread_create(&t, NULL, rd_recv, &r));
		EXPECT_TRUE(rd_waits(self, recvs));
		stream_fill(63, (unsigned long long)i * 200000, out, 200000);
		ASSERT_EQ(200000, send(self->a, out, 200000, 0));
		pthread_join(t, NULL);
		ASSERT_LT(0, r.n);
		ASSERT_EQ(200000 - r.n, sdp_read_full(self->b, in + r.n, 200000 - r.n));
		EXPECT_EQ(-1, stream_check(63, (unsigned long long)i * 200000, in, 200000));
	}
	if (self->rdma) {
		EXPECT_EQ(SRCAVAIL_MAX >> 10, vm_pin());
		EXPECT_EQ(1, sdp_stat("ZcopyCacheMisses") - misses);
		EXPECT_EQ(3, sdp_stat("ZcopyCacheHits") - hits);
		EXPECT_LT(0, rd_written(_metadata, self));
		/* (written from the sender's send buffers) */
		EXPECT_EQ(0, sdp_stat("ZcopyDirectBytes") - self->z0.direct);
	}
	/* (unmapped, it goes: stale) */
	ASSERT_EQ(0, munmap(in, SRCAVAIL_MAX));
	free(out);
	prove_pair(_metadata, &self->pr, self->a, variant->sdp);
}

TEST_HARNESS_MAIN
