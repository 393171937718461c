// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel user of SDP for the selftests (sdp_kernel.sh), doing what a
 * replication or storage driver does with a socket of family 27: created
 * with sock_create_kern(), options set with the tcp_sock_set_*() and
 * sock_set_*() helpers on sock->sk, data through kernel_sendmsg() and
 * kernel_recvmsg(). It runs once, at load: the load fails, and the log
 * says why, when anything is off.
 *
 *   insmod sdp_ktest.ko test=NAME [addr=A] [family=27] [mib=N]
 *
 * stream     N MiB each way at once, every byte checked
 * pages      the same, one way sent as pages (kernel_sendpage() before
 *            6.5, MSG_SPLICE_PAGES since), partial ones included
 * shutdown   kernel_sock_shutdown() of both ends while both send: the
 *            senders return with an error, nothing hangs
 * cork       tcp_sock_set_cork() holds a small write; uncorking sends it
 * keepalive  keepalive set with the helpers probes an idle connection
 *            (sdp_kernel.sh counts the probes)
 * accept     a listener's sk_state_change and sk_user_data, set as DRBD
 *            does, are its children's: the child's establishment rings
 *            the driver's bell before accept()
 * driven     N MiB one way, the reader driven by sk_data_ready, the writer
 *            by sk_write_space, both never blocking (MSG_DONTWAIT)
 */
#define pr_fmt(fmt) "sdp_ktest: " fmt

#include <linux/delay.h>
#include <linux/highmem.h>
#include <linux/inet.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <linux/version.h>
#include <linux/vmalloc.h>
#include <net/sock.h>
#include <net/tcp.h>

static char *test = "stream";
module_param(test, charp, 0444);
static char *addr = "198.18.0.1";
module_param(addr, charp, 0444);
static int family = 27;
module_param(family, int, 0444);
static unsigned int mib = 64;
module_param(mib, uint, 0444);

#define CHUNK	(64 * 1024)

struct pair {
	struct socket *l, *c, *s;
};

/* The byte at @off of the stream sent by side @who. */
static u8 pattern(u64 off, int who)
{
	return (u8)(off * 31 + (off >> 12) + who * 101);
}

/* @n bytes received at stream offset @off of side @who: 0, or -EILSEQ. */
static int check_bytes(const u8 *buf, int n, u64 off, int who)
{
	int i;

	for (i = 0; i < n; i++) {
		if (buf[i] != pattern(off + i, who)) {
			pr_err("stream %d: byte %llu is %#x, not %#x\n", who,
			       off + i, buf[i], pattern(off + i, who));
			return -EILSEQ;
		}
	}
	return 0;
}

/*
 * Every helper a driver may call, on our socket: each writes into it as a
 * struct tcp_sock or a struct sock. @idle: keepalive after that many
 * seconds, every second. Keepalive on first: on a connected socket,
 * tcp_sock_set_keepidle() then re-arms the keepalive timer (TCP's).
 */
static int set_options(struct sock *sk, int idle)
{
	int err;

	sock_set_keepalive(sk);
	tcp_sock_set_quickack(sk, 1);
	tcp_sock_set_cork(sk, true);
	tcp_sock_set_cork(sk, false);
	tcp_sock_set_nodelay(sk);
	tcp_sock_set_user_timeout(sk, 60 * 1000);
	err = tcp_sock_set_syncnt(sk, 3) ?:
	      tcp_sock_set_keepidle(sk, idle) ?:
	      tcp_sock_set_keepintvl(sk, 1) ?:
	      tcp_sock_set_keepcnt(sk, 5);
	if (err)
		return err;
	sock_set_reuseaddr(sk);
	sock_set_priority(sk, 0);
	sock_set_sndtimeo(sk, 30);
	sock_set_mark(sk, 0);
	sk->sk_rcvtimeo = 30 * HZ;
	sk->sk_allocation = GFP_NOIO;
	return 0;
}

/* A listener on addr, port chosen; @sin gets its address. */
static int make_listener(struct pair *p, struct sockaddr_in *sin)
{
	int err;

	sin->sin_family = AF_INET;
	if (!in4_pton(addr, -1, (u8 *)&sin->sin_addr, -1, NULL))
		return -EINVAL;
	err = sock_create_kern(&init_net, family, SOCK_STREAM, IPPROTO_TCP, &p->l);
	if (err)
		return err;
	/* (a listener's close sends nothing: only the field matters) */
	sock_no_linger(p->l->sk);
	p->l->sk->sk_rcvtimeo = 30 * HZ;	/* kernel_accept() gives up */
	err = kernel_bind(p->l, (struct sockaddr *)sin, sizeof(*sin)) ?:
	      kernel_listen(p->l, 4) ?:
	      kernel_getsockname(p->l, (struct sockaddr *)sin);
	return err < 0 ? err : 0;
}

static int make_pair(struct pair *p, int idle)
{
	struct sockaddr_in sin;
	int err, len = sizeof(sin);

	err = make_listener(p, &sin) ?:
	      sock_create_kern(&init_net, family, SOCK_STREAM, IPPROTO_TCP, &p->c);
	if (err)
		return err;
	/* before connect, as a driver may; again once connected, as others do */
	err = set_options(p->c->sk, 7200) ?:
	      kernel_connect(p->c, (struct sockaddr *)&sin, len, 0) ?:
	      kernel_accept(p->l, &p->s, 0) ?:
	      set_options(p->c->sk, idle);
	if (err)
		return err;
	return set_options(p->s->sk, idle);
}

static void free_pair(struct pair *p)
{
	if (p->s)
		sock_release(p->s);
	if (p->c)
		sock_release(p->c);
	if (p->l)
		sock_release(p->l);
}

struct sender {
	struct socket *sock;
	int who;
	bool pages;
	int err;
	struct completion done;
};

/* @len bytes of @page from @off, as a driver sends pages on this kernel. */
static int send_page(struct socket *sock, struct page *page, int off, size_t len)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
	return kernel_sendpage(sock, page, off, len, 0);
#else
	struct msghdr msg = { .msg_flags = MSG_SPLICE_PAGES };
	struct bio_vec bv;

	bvec_set_page(&bv, page, len, off);
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, &bv, 1, len);
	return sock_sendmsg(sock, &msg);
#endif
}

/*
 * Side @who's stream in pages, parts of them at offsets 0, 100, 200. A
 * page per send, let go after it: TCP (a fallback) keeps its own
 * reference until the peer has the bytes.
 */
static int send_pages(struct sender *s)
{
	u64 off = 0, total = (u64)mib << 20;
	int n, i, err = 0;

	while (!err && off < total) {
		int poff = (off / PAGE_SIZE % 3) * 100;
		size_t len = min_t(u64, PAGE_SIZE - poff, total - off);
		struct page *page = alloc_page(GFP_KERNEL);
		u8 *p;

		if (!page)
			return -ENOMEM;
		p = kmap_local_page(page);
		for (i = 0; i < len; i++)
			p[poff + i] = pattern(off + i, s->who);
		kunmap_local(p);
		n = send_page(s->sock, page, poff, len);
		put_page(page);
		if (n <= 0)
			err = n ?: -EPIPE;
		else
			off += n;
	}
	return err;
}

static int send_stream(void *arg)
{
	struct sender *s = arg;
	u64 off = 0, total = (u64)mib << 20;
	u8 *buf = NULL;
	int i, n;

	if (s->pages) {
		s->err = send_pages(s);
		kthread_complete_and_exit(&s->done, 0);
	}
	buf = vmalloc(CHUNK);
	s->err = buf ? 0 : -ENOMEM;
	while (!s->err && off < total) {
		struct kvec iov = { .iov_base = buf, .iov_len = min_t(u64, CHUNK, total - off) };
		struct msghdr msg = {};

		for (i = 0; i < iov.iov_len; i++)
			buf[i] = pattern(off + i, s->who);
		n = kernel_sendmsg(s->sock, &msg, &iov, 1, iov.iov_len);
		if (n <= 0)
			s->err = n ?: -EPIPE;
		else
			off += n;
	}
	vfree(buf);
	/* never back into this module's text: it may be gone by then */
	kthread_complete_and_exit(&s->done, 0);
}

/* Reads side @who's whole stream from @sock, checking every byte. */
static int recv_stream(struct socket *sock, int who)
{
	u64 off = 0, total = (u64)mib << 20;
	u8 *buf = vmalloc(CHUNK);
	int n, err = 0;

	if (!buf)
		return -ENOMEM;
	while (off < total) {
		struct kvec iov = { .iov_base = buf, .iov_len = CHUNK };
		struct msghdr msg = {};

		n = kernel_recvmsg(sock, &msg, &iov, 1, CHUNK, 0);
		if (n <= 0) {
			pr_err("stream %d: recv at %llu: %d\n", who, off, n);
			err = n ?: -EPIPE;
			break;
		}
		err = check_bytes(buf, n, off, who);
		if (err)
			break;
		off += n;
	}
	vfree(buf);
	return err;
}

struct receiver {
	struct socket *sock;
	int err;
	struct completion done;
};

static int recv_thread(void *arg)
{
	struct receiver *r = arg;

	r->err = recv_stream(r->sock, 1);
	kthread_complete_and_exit(&r->done, 0);
}

/*
 * Both ways at once: a thread sends from each end, and both ends read at
 * once (a thread reads the client's), so that neither direction waits
 * for credits longer than the transfer takes (TCP_USER_TIMEOUT is set).
 */
static int test_stream(struct pair *p, bool pages)
{
	struct sender tx[2] = { { .sock = p->c, .who = 0, .pages = pages },
				{ .sock = p->s, .who = 1 } };
	struct receiver rx = { .sock = p->c };
	int i, err;

	for (i = 0; i < 2; i++) {
		init_completion(&tx[i].done);
		if (IS_ERR(kthread_run(send_stream, &tx[i], "sdp_ktest%d", i))) {
			tx[i].err = -ENOMEM;
			complete(&tx[i].done);
		}
	}
	init_completion(&rx.done);
	if (IS_ERR(kthread_run(recv_thread, &rx, "sdp_ktest_rx"))) {
		rx.err = -ENOMEM;
		complete(&rx.done);
	}
	err = recv_stream(p->s, 0);
	/* a failed reader leaves the other blocked: shutting down frees it */
	if (err)
		kernel_sock_shutdown(p->c, SHUT_RDWR);
	wait_for_completion(&rx.done);
	if (!err)
		err = rx.err;
	for (i = 0; i < 2; i++) {
		/* a failed reader leaves a sender blocked: shutting down frees it */
		if (err)
			kernel_sock_shutdown(tx[i].sock, SHUT_RDWR);
		wait_for_completion(&tx[i].done);
		if (!err)
			err = tx[i].err;
	}
	if (!err)
		pr_info("%s: %u MiB each way, every byte as sent\n", test, mib);
	return err;
}

/*
 * Both ends send without end; once a few MiB came each way, both are shut
 * down under the senders, which must come back (with an error) in time.
 */
static int test_shutdown(struct pair *p)
{
	struct sender tx[2] = { { .sock = p->c, .who = 0 }, { .sock = p->s, .who = 1 } };
	struct socket *rx[2] = { p->s, p->c };
	struct kvec iov;
	int i, n, err = 0;
	u8 *buf;

	buf = vmalloc(CHUNK);
	if (!buf)
		return -ENOMEM;
	mib = 1 << 20;	/* more than will ever go */
	for (i = 0; i < 2; i++) {
		init_completion(&tx[i].done);
		if (IS_ERR(kthread_run(send_stream, &tx[i], "sdp_ktest%d", i))) {
			tx[i].err = -ENOMEM;
			complete(&tx[i].done);
		}
	}
	for (i = 0; i < 2 && !err; i++) {
		u64 got = 0;

		while (got < (4 << 20)) {
			struct msghdr msg = {};

			iov.iov_base = buf;
			iov.iov_len = CHUNK;
			n = kernel_recvmsg(rx[i], &msg, &iov, 1, CHUNK, 0);
			if (n <= 0) {
				err = n ?: -EPIPE;
				break;
			}
			got += n;
		}
	}
	kernel_sock_shutdown(p->c, SHUT_RDWR);
	kernel_sock_shutdown(p->s, SHUT_RDWR);
	for (i = 0; i < 2; i++) {
		if (!wait_for_completion_timeout(&tx[i].done, 60 * HZ)) {
			pr_err("shutdown: sender %d still blocked after 60 s\n", i);
			err = -ETIMEDOUT;
			/* it holds tx[] and buf: never return under it */
			wait_for_completion(&tx[i].done);
		} else if (!tx[i].err || tx[i].err == -EAGAIN) {
			/* -EAGAIN: its 30 s send timeout ended it, not the shutdown */
			pr_err("shutdown: sender %d ended with %d\n", i, tx[i].err);
			err = -EINVAL;
		}
	}
	vfree(buf);
	if (!err)
		pr_info("shutdown: both senders stopped (%d, %d)\n", tx[0].err, tx[1].err);
	return err;
}

/* Bytes readable on @sock now (not waiting), or a negative errno. */
static int peek_now(struct socket *sock)
{
	char b[16];
	struct kvec iov = { .iov_base = b, .iov_len = sizeof(b) };
	struct msghdr msg = {};

	return kernel_recvmsg(sock, &msg, &iov, 1, sizeof(b), MSG_DONTWAIT | MSG_PEEK);
}

/*
 * TCP_CORK through the helper holds a small write (its send arms SDP's
 * 200 ms cork timer, as TCP's); clearing it sends the write at once: it
 * arrives before that timer could have sent it. A host that slows a try
 * past those bounds proves nothing either way: up to three tries.
 */
static int test_cork(struct pair *p)
{
	char got[6];
	struct kvec iov = { .iov_base = "corked", .iov_len = 6 };
	struct kvec in = { .iov_base = got, .iov_len = sizeof(got) };
	struct msghdr msg = {};
	s64 held_ms, arrived_ms = 0;
	int n, i, try;

	for (try = 0; try < 3; try++) {
		ktime_t t0 = ktime_get();

		tcp_sock_set_cork(p->c->sk, true);
		n = kernel_sendmsg(p->c, &msg, &iov, 1, iov.iov_len);
		if (n != 6)
			return n < 0 ? n : -EIO;
		msleep(20);
		n = peek_now(p->s);
		held_ms = ktime_ms_delta(ktime_get(), t0);
		tcp_sock_set_cork(p->c->sk, false);
		for (i = 0; i < 1000 && peek_now(p->s) == -EAGAIN; i++)
			usleep_range(500, 1000);
		arrived_ms = ktime_ms_delta(ktime_get(), t0);
		if (n != -EAGAIN && held_ms < 150) {
			pr_err("cork: a corked write was sent within %lld ms (%d)\n", held_ms, n);
			return -EINVAL;
		}
		n = kernel_recvmsg(p->s, &msg, &in, 1, sizeof(got), MSG_WAITALL);
		if (n != sizeof(got))
			return n < 0 ? n : -EIO;
		if (held_ms < 150 && arrived_ms < 180) {
			pr_info("cork: held %lld ms, arrived %lld ms after the send\n",
				held_ms, arrived_ms);
			return 0;
		}
	}
	pr_err("cork: 3 tries, the last held %lld ms, arrived at %lld ms (the cork timer's 200?)\n",
	       held_ms, arrived_ms);
	return -ETIMEDOUT;
}

/* Idle for 3.5 s with keepalive after 1 s: the probes are counted outside. */
static int test_keepalive(struct pair *p)
{
	msleep(3500);
	pr_info("keepalive: idle 3500 ms\n");
	return 0;
}

struct door {
	struct completion bell;
	struct sock *listener;
	atomic_t queued;
	wait_queue_head_t wait;
	void (*state_change)(struct sock *sk);
	void (*data_ready)(struct sock *sk);
};

/* DRBD's way to learn of a connection: the listener's state change hook. */
static void door_state_change(struct sock *sk)
{
	struct door *d = sk->sk_user_data;

	if (sk != d->listener && sk->sk_state == TCP_ESTABLISHED)
		complete(&d->bell);
	d->state_change(sk);
}

/* nvmet-tcp's: the listener's sk_data_ready, a child is queued. */
static void door_data_ready(struct sock *sk)
{
	struct door *d = sk->sk_user_data;

	if (sk == d->listener) {
		atomic_inc(&d->queued);
		wake_up(&d->wait);
	}
	d->data_ready(sk);
}

static void door_off(struct sock *sk, struct door *d)
{
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_state_change = d->state_change;
	sk->sk_data_ready = d->data_ready;
	sk->sk_user_data = NULL;
	write_unlock_bh(&sk->sk_callback_lock);
}

static int test_accept(void)
{
	struct door d = {};
	struct sockaddr_in sin;
	struct pair p = {};
	struct sock *sk;
	int err;

	init_completion(&d.bell);
	init_waitqueue_head(&d.wait);
	err = make_listener(&p, &sin);
	if (err)
		goto out;
	sk = p.l->sk;
	d.listener = sk;
	/* after listen(), as nvmet-tcp does (DRBD hooks before) */
	write_lock_bh(&sk->sk_callback_lock);
	d.state_change = sk->sk_state_change;
	d.data_ready = sk->sk_data_ready;
	sk->sk_user_data = &d;
	sk->sk_state_change = door_state_change;
	sk->sk_data_ready = door_data_ready;
	write_unlock_bh(&sk->sk_callback_lock);
	err = sock_create_kern(&init_net, family, SOCK_STREAM, IPPROTO_TCP, &p.c) ?:
	      kernel_connect(p.c, (struct sockaddr *)&sin, sizeof(sin), 0);
	if (err)
		goto off;
	if (!wait_for_completion_timeout(&d.bell, 10 * HZ)) {
		pr_err("accept: no established child rang the listener's hook\n");
		err = -ETIMEDOUT;
		goto off;
	}
	if (!wait_event_timeout(d.wait, atomic_read(&d.queued), 10 * HZ)) {
		pr_err("accept: the listener's sk_data_ready was not called\n");
		err = -ETIMEDOUT;
		goto off;
	}
	err = kernel_accept(p.l, &p.s, 0);
	if (err)
		goto off;
	if (p.s->sk->sk_user_data != &d || p.s->sk->sk_state_change != door_state_change ||
	    p.s->sk->sk_data_ready != door_data_ready) {
		pr_err("accept: the child lacks the listener's hooks or user data\n");
		err = -EINVAL;
	}
	door_off(p.s->sk, &d);
	if (!err)
		pr_info("accept: the child inherited the hooks; established, it rang, and the listener's data_ready ran\n");
off:
	door_off(sk, &d);
out:
	free_pair(&p);
	return err;
}

/*
 * The way a storage driver moves data: the receiver never blocks, its
 * sk_data_ready (which may run in softirq context) queues work that reads
 * with MSG_DONTWAIT until -EAGAIN; the sender sends with MSG_DONTWAIT and
 * on -EAGAIN waits for its sk_write_space. The reader starts only once the
 * sender has filled the buffers, so that the sender meets -EAGAIN. The
 * receiver's sk_state_change sees the sender's shutdown. Each counts its
 * calls.
 */
struct driven {
	struct socket *rx, *tx;
	struct work_struct work;
	wait_queue_head_t wait;
	atomic_t ready, space, states;
	int state;		/* the receiver's, at its last state change */
	u64 got;
	int err;		/* the reader's: 1 while it runs */
	bool go;		/* the reader starts once the sender met -EAGAIN */
	u8 *buf;
	void (*data_ready)(struct sock *sk);
	void (*write_space)(struct sock *sk);
	void (*state_change)(struct sock *sk);
};

static void driven_data_ready(struct sock *sk)
{
	struct driven *d;

	read_lock_bh(&sk->sk_callback_lock);
	d = sk->sk_user_data;
	if (d) {
		atomic_inc(&d->ready);
		queue_work(system_wq, &d->work);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static void driven_write_space(struct sock *sk)
{
	struct driven *d;

	read_lock_bh(&sk->sk_callback_lock);
	d = sk->sk_user_data;
	if (d) {
		atomic_inc(&d->space);
		wake_up(&d->wait);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static void driven_state_change(struct sock *sk)
{
	struct driven *d;

	read_lock_bh(&sk->sk_callback_lock);
	d = sk->sk_user_data;
	if (d) {
		WRITE_ONCE(d->state, sk->sk_state);
		atomic_inc(&d->states);
		queue_work(system_wq, &d->work);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/* Reads what is there, checking each byte; at the end of the stream, done. */
static void driven_read(struct work_struct *w)
{
	struct driven *d = container_of(w, struct driven, work);
	u64 total = (u64)mib << 20;
	int n;

	while (READ_ONCE(d->go) && d->err == 1) {
		struct kvec iov = { .iov_base = d->buf, .iov_len = CHUNK };
		struct msghdr msg = {};

		n = kernel_recvmsg(d->rx, &msg, &iov, 1, CHUNK, MSG_DONTWAIT);
		if (n == -EAGAIN)
			return;
		if (n <= 0) {
			if (n < 0 || d->got != total)
				pr_err("driven: recv at %llu of %llu: %d\n", d->got, total, n);
			d->err = n ?: (d->got == total ? 0 : -EPIPE);
			break;
		}
		d->err = check_bytes(d->buf, n, d->got, 0) ?: 1;
		d->got += n;
	}
	wake_up(&d->wait);
}

static void driven_hook(struct sock *sk, struct driven *d, bool on)
{
	write_lock_bh(&sk->sk_callback_lock);
	if (on && sk == d->rx->sk) {
		d->data_ready = sk->sk_data_ready;
		d->state_change = sk->sk_state_change;
		sk->sk_data_ready = driven_data_ready;
		sk->sk_state_change = driven_state_change;
	} else if (on) {
		d->write_space = sk->sk_write_space;
		sk->sk_write_space = driven_write_space;
	} else if (sk == d->rx->sk) {
		sk->sk_data_ready = d->data_ready;
		sk->sk_state_change = d->state_change;
	} else {
		sk->sk_write_space = d->write_space;
	}
	sk->sk_user_data = on ? d : NULL;
	write_unlock_bh(&sk->sk_callback_lock);
}

/* Sends the stream without blocking: -EAGAIN waits for sk_write_space. */
static int driven_send(struct driven *d, int *eagain)
{
	u64 base = 0, off = 0, filled = U64_MAX, total = (u64)mib << 20;
	u8 *buf = vmalloc(CHUNK);
	int i, n, seen, err = 0;

	if (!buf)
		return -ENOMEM;
	while (!err && off < total) {
		/* buf holds the stream from base, CHUNK bytes */
		struct kvec iov = { .iov_base = buf + (off - base),
				    .iov_len = min_t(u64, base + CHUNK, total) - off };
		struct msghdr msg = { .msg_flags = MSG_DONTWAIT };

		if (filled != base) {
			for (i = 0; i < CHUNK; i++)
				buf[i] = pattern(base + i, 0);
			filled = base;
		}
		seen = atomic_read(&d->space);
		n = kernel_sendmsg(d->tx, &msg, &iov, 1, iov.iov_len);
		if (n > 0) {
			off += n;
			if (off == base + CHUNK)
				base = off;
		} else if (n == -EAGAIN) {
			(*eagain)++;
			/* the reader waited for this: the buffers are full */
			if (!READ_ONCE(d->go)) {
				WRITE_ONCE(d->go, true);
				queue_work(system_wq, &d->work);
			}
			if (!wait_event_timeout(d->wait, atomic_read(&d->space) != seen, 30 * HZ)) {
				pr_err("driven: no sk_write_space in 30 s at %llu\n", off);
				err = -ETIMEDOUT;
			}
		} else {
			err = n ?: -EPIPE;
		}
	}
	vfree(buf);
	return err;
}

static int test_driven(struct pair *p)
{
	struct driven d = { .rx = p->s, .tx = p->c, .err = 1 };
	int eagain = 0, err;

	d.buf = vmalloc(CHUNK);
	if (!d.buf)
		return -ENOMEM;
	INIT_WORK_ONSTACK(&d.work, driven_read);
	init_waitqueue_head(&d.wait);
	driven_hook(d.rx->sk, &d, true);
	driven_hook(d.tx->sk, &d, true);
	err = driven_send(&d, &eagain) ?: kernel_sock_shutdown(d.tx, SHUT_WR);
	/* (a sender that never met -EAGAIN fails below) */
	WRITE_ONCE(d.go, true);
	queue_work(system_wq, &d.work);
	if (!err && !wait_event_timeout(d.wait, d.err != 1, 60 * HZ)) {
		pr_err("driven: the reader is at %llu after 60 s\n", d.got);
		err = -ETIMEDOUT;
	}
	driven_hook(d.tx->sk, &d, false);
	driven_hook(d.rx->sk, &d, false);
	cancel_work_sync(&d.work);
	destroy_work_on_stack(&d.work);
	vfree(d.buf);
	err = err ?: d.err;
	pr_info("driven: %u MiB, %d data_ready, %d write_space after %d EAGAIN, %d state changes (last %d)\n",
		mib, atomic_read(&d.ready), atomic_read(&d.space), eagain,
		atomic_read(&d.states), d.state);
	if (!err && (!eagain || !atomic_read(&d.space) || d.state != TCP_CLOSE_WAIT)) {
		pr_err("driven: want an EAGAIN, a write_space, and a state change (to CLOSE_WAIT)\n");
		err = -EINVAL;
	}
	return err;
}

static int __init sdp_ktest_init(void)
{
	struct pair p = {};
	int err;

	if (!strcmp(test, "accept")) {
		err = test_accept();
		goto done;
	}
	if (strcmp(test, "stream") && strcmp(test, "pages") && strcmp(test, "cork") &&
	    strcmp(test, "keepalive") && strcmp(test, "shutdown") && strcmp(test, "driven"))
		return -EINVAL;
	err = make_pair(&p, !strcmp(test, "keepalive") ? 1 : 7200);
	if (err) {
		pr_err("%s: setting up the pair: %d\n", test, err);
		goto out;
	}
	if (!strcmp(test, "stream") || !strcmp(test, "pages"))
		err = test_stream(&p, !strcmp(test, "pages"));
	else if (!strcmp(test, "shutdown"))
		err = test_shutdown(&p);
	else if (!strcmp(test, "cork"))
		err = test_cork(&p);
	else if (!strcmp(test, "driven"))
		err = test_driven(&p);
	else
		err = test_keepalive(&p);
	if (!err && strcmp(test, "shutdown") && strcmp(test, "driven"))
		err = kernel_sock_shutdown(p.c, SHUT_WR);
out:
	free_pair(&p);
done:
	pr_info("%s: %s (%d)\n", test, err ? "FAIL" : "PASS", err);
	return err;
}

/* Nothing stays behind: the test ran at load. */
static void __exit sdp_ktest_exit(void)
{
}

module_init(sdp_ktest_init);
module_exit(sdp_ktest_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("SDP selftest: a kernel user of AF_INET_SDP sockets");
