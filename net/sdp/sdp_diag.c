// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: sock_diag, the way ss lists TCP sockets. Every
 * SDP socket is on one list from allocation to destruction; a dump walks
 * the caller's namespace's part of it in batches, holding a reference on
 * each socket of a batch so that it can sleep in lock_sock() to read the
 * socket and its connection consistently, and on the last one it passed
 * between calls, to go on from there: each socket that lives through a dump
 * is reported once.
 */
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <net/netlink.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "sdp_sock.h"

/* In creation order, so that a dump resumes after the last socket it passed. */
static LIST_HEAD(sdp_diag_socks);
/* Taken in softirq too: RCU-freed sockets are destructed there. */
static DEFINE_SPINLOCK(sdp_diag_lock);

void sdp_diag_add(struct sdp_sock *ssk)
{
	spin_lock_bh(&sdp_diag_lock);
	list_add_tail(&ssk->diag_node, &sdp_diag_socks);
	spin_unlock_bh(&sdp_diag_lock);
}

void sdp_diag_del(struct sdp_sock *ssk)
{
	spin_lock_bh(&sdp_diag_lock);
	list_del(&ssk->diag_node);
	spin_unlock_bh(&sdp_diag_lock);
}

#define SDP_DIAG_BATCH	32

/*
 * References on the next sockets of @net after @from (NULL: the start), up
 * to SDP_DIAG_BATCH; @from is referenced, so still on the list. A socket
 * whose last reference is gone is passed over: its destructor is waiting
 * for the lock to take it off. Returns how many; *@end when the list ended.
 */
static int sdp_diag_collect(struct net *net, struct sock *from, struct sock **batch, bool *end)
{
	struct sdp_sock *ssk;
	int n = 0;

	spin_lock_bh(&sdp_diag_lock);
	ssk = from ? sdp_sk(from) : list_entry(&sdp_diag_socks, struct sdp_sock, diag_node);
	list_for_each_entry_continue(ssk, &sdp_diag_socks, diag_node) {
		if (n == SDP_DIAG_BATCH)
			break;
		if (net_eq(sock_net(&ssk->sk), net) && refcount_inc_not_zero(&ssk->sk.sk_refcnt))
			batch[n++] = &ssk->sk;
	}
	*end = list_entry_is_head(ssk, &sdp_diag_socks, diag_node);
	spin_unlock_bh(&sdp_diag_lock);
	return n;
}

/* An address as inet_diag_sockid holds it: IPv4 in the first word. */
static int sdp_diag_addr(const struct sockaddr_storage *ss, __be32 *addr, __be16 *port)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

	if (ss->ss_family == AF_INET) {
		addr[0] = sin->sin_addr.s_addr;
		*port = sin->sin_port;
	} else if (ss->ss_family == AF_INET6) {
		memcpy(addr, &sin6->sin6_addr, sizeof(sin6->sin6_addr));
		*port = sin6->sin6_port;
	}
	return ss->ss_family;
}

/* What a TCP socket says of its own addresses (the native one, or bound only). */
static int sdp_diag_tcp_addrs(const struct sock *tsk, struct inet_diag_sockid *id)
{
	const struct inet_sock *inet = inet_sk(tsk);

	id->idiag_sport = inet->inet_sport;
	id->idiag_dport = inet->inet_dport;
	if (tsk->sk_family == AF_INET6) {
		memcpy(id->idiag_src, &tsk->sk_v6_rcv_saddr, sizeof(tsk->sk_v6_rcv_saddr));
		memcpy(id->idiag_dst, &tsk->sk_v6_daddr, sizeof(tsk->sk_v6_daddr));
	} else {
		id->idiag_src[0] = inet->inet_rcv_saddr;
		id->idiag_dst[0] = inet->inet_daddr;
	}
	return tsk->sk_family;
}

/*
 * Under lock_sock(). The native socket is ours to read until close takes it
 * (SOCK_DEAD is set first, under the lock); a closed socket still lingering
 * over RDMA has the addresses rdma_cm gave it.
 */
static void sdp_diag_fill_msg(const struct sdp_sock *ssk, struct sdp_diag_msg *r)
{
	const struct sockaddr_storage *saddr = sdp_conn_addr(ssk->conn, false);
	const struct sock *sk = &ssk->sk;
	const struct sock *tsk = NULL;

	if (!sock_flag(sk, SOCK_DEAD) && !test_bit(SDP_F_DESTROYED, &ssk->flags) && ssk->tcp)
		tsk = ssk->tcp->sk;
	r->sdiag_state = sk->sk_state;
	r->sdiag_fallback = ssk->fb.reason;
	if (sdp_fb(ssk) && tsk) {
		const struct tcp_sock *tp = tcp_sk(tsk);

		r->sdiag_state = READ_ONCE(tsk->sk_state);
		r->sdiag_family = sdp_diag_tcp_addrs(tsk, &r->id);
		if (r->sdiag_state == TCP_LISTEN) {
			r->sdiag_rqueue = READ_ONCE(tsk->sk_ack_backlog);
			r->sdiag_wqueue = READ_ONCE(tsk->sk_max_ack_backlog);
		} else {
			r->sdiag_rqueue = max_t(int, READ_ONCE(tp->rcv_nxt) -
						READ_ONCE(tp->copied_seq), 0);
			r->sdiag_wqueue = READ_ONCE(tp->write_seq) - READ_ONCE(tp->snd_una);
		}
		return;
	}
	if (saddr->ss_family) {
		r->sdiag_family = sdp_diag_addr(saddr, r->id.idiag_src, &r->id.idiag_sport);
		sdp_diag_addr(sdp_conn_addr(ssk->conn, true), r->id.idiag_dst,
			      &r->id.idiag_dport);
	} else if (tsk) {
		r->sdiag_family = sdp_diag_tcp_addrs(tsk, &r->id);
		/* connecting over RDMA: the destination connect() was given */
		if (sk->sk_state == TCP_SYN_SENT)
			sdp_diag_addr(&ssk->fb.addr, r->id.idiag_dst, &r->id.idiag_dport);
	}
	if (sk->sk_state == TCP_LISTEN) {
		r->sdiag_rqueue = READ_ONCE(sk->sk_ack_backlog);
		r->sdiag_wqueue = READ_ONCE(sk->sk_max_ack_backlog);
	} else {
		r->sdiag_rqueue = READ_ONCE(sdp_view(ssk)->rx_avail);
		r->sdiag_wqueue = READ_ONCE(sdp_view(ssk)->tx_unacked);
	}
}

/* SDP_INFO, and sock_diag's SDP_DIAG_INFO. */
void sdp_fill_info(const struct sdp_sock *ssk, struct sdp_info *info)
{
	memset(info, 0, sizeof(*info));
	info->transport = ssk->fb.transport;
	/* A listener: whether it listens over RDMA now, or serves TCP only. */
	if (ssk->sk.sk_state == TCP_LISTEN && info->transport == SDP_TRANSPORT_NONE)
		info->transport = sdp_cm_has_id(ssk->conn) ? SDP_TRANSPORT_RDMA :
							     SDP_TRANSPORT_TCP;
	info->fallback_reason = ssk->fb.reason;
	info->state = ssk->sk.sk_state;
	info->syn_queue = ssk->lsn.syn_count;
	sdp_conn_info(ssk->conn, info);
}

/* The request's filters: states, then ports and addresses (0: any). */
static bool sdp_diag_match(const struct sdp_diag_req *req, const struct sdp_diag_msg *r)
{
	const struct inet_diag_sockid *want = &req->id, *id = &r->id;
	static const __be32 any[4];

	if (req->sdiag_states && !(req->sdiag_states & (1U << r->sdiag_state)))
		return false;
	if (want->idiag_sport && want->idiag_sport != id->idiag_sport)
		return false;
	if (want->idiag_dport && want->idiag_dport != id->idiag_dport)
		return false;
	if (memcmp(want->idiag_src, any, sizeof(any)) &&
	    memcmp(want->idiag_src, id->idiag_src, sizeof(any)))
		return false;
	return !memcmp(want->idiag_dst, any, sizeof(any)) ||
	       !memcmp(want->idiag_dst, id->idiag_dst, sizeof(any));
}

/* 0 when filled or filtered out, -EMSGSIZE when @skb is full. */
static int sdp_diag_fill(struct sock *sk, struct sk_buff *skb, struct netlink_callback *cb,
			 const struct sdp_diag_req *req, bool net_admin)
{
	struct user_namespace *user_ns = sk_user_ns(NETLINK_CB(cb->skb).sk);
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_diag_msg *r;
	struct nlmsghdr *nlh;
	struct sdp_info info;
	struct sdp_diag_msg m = {};

	lock_sock(sk);
	sdp_diag_fill_msg(ssk, &m);
	sdp_fill_info(ssk, &info);
	release_sock(sk);
	/* a listener's: whether it listens over RDMA now */
	m.sdiag_transport = info.transport;
	if (!sdp_diag_match(req, &m))
		return 0;

	nlh = nlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			cb->nlh->nlmsg_type, sizeof(*r), NLM_F_MULTI);
	if (!nlh)
		return -EMSGSIZE;
	r = nlmsg_data(nlh);
	*r = m;
	sock_diag_save_cookie(sk, r->id.idiag_cookie);
	r->sdiag_uid = from_kuid_munged(user_ns, sock_i_uid(sk));
	r->sdiag_inode = sock_i_ino(sk);
	if (req->sdiag_ext & (1 << (SDP_DIAG_INFO - 1))) {
		/* which RDMA connection it is: the administrator's to know */
		if (!net_admin) {
			memset(info.ibdev, 0, sizeof(info.ibdev));
			info.qp_num = 0;
			info.dest_qp_num = 0;
			info.port_num = 0;
		}
		if (nla_put(skb, SDP_DIAG_INFO, sizeof(info), &info))
			goto cancel;
	}
	if ((req->sdiag_ext & (1 << (SDP_DIAG_SHUTDOWN - 1))) &&
	    nla_put_u8(skb, SDP_DIAG_SHUTDOWN, READ_ONCE(sk->sk_shutdown)))
		goto cancel;
	nlmsg_end(skb, nlh);
	return 0;
cancel:
	nlmsg_cancel(skb, nlh);
	return -EMSGSIZE;
}

/*
 * cb->args[0]: the last socket passed (reported or filtered out), held, so
 * that the next call goes on after it; cb->args[1]: the list was done.
 */
static int sdp_diag_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct sdp_diag_req *req = nlmsg_data(cb->nlh);
	bool net_admin = netlink_net_capable(cb->skb, CAP_NET_ADMIN);
	struct sock *cursor = (struct sock *)cb->args[0];
	struct sock *batch[SDP_DIAG_BATCH];
	struct net *net = sock_net(skb->sk);
	bool end = false;
	int err = 0;
	int i, n;

	if (cb->args[1])
		return 0;
	while (!err && !end) {
		n = sdp_diag_collect(net, cursor, batch, &end);
		for (i = 0; i < n; i++) {
			if (!err)
				err = sdp_diag_fill(batch[i], skb, cb, req, net_admin);
			if (err) {
				/* not sent: the next call starts with it */
				sock_put(batch[i]);
				continue;
			}
			if (cursor)
				sock_put(cursor);
			cursor = batch[i];
		}
		cond_resched();
	}
	if (!err) {
		if (cursor)
			sock_put(cursor);
		cursor = NULL;
		cb->args[1] = 1;
	}
	cb->args[0] = (long)cursor;
	return skb->len;
}

static int sdp_diag_done(struct netlink_callback *cb)
{
	if (cb->args[0])
		sock_put((struct sock *)cb->args[0]);
	return 0;
}

static int sdp_diag_handler_dump(struct sk_buff *skb, struct nlmsghdr *nlh)
{
	struct netlink_dump_control c = {
		.dump = sdp_diag_dump,
		.done = sdp_diag_done,
	};

	if (nlmsg_len(nlh) < sizeof(struct sdp_diag_req))
		return -EINVAL;
	/* one socket by its cookie, as inet_diag does, is not offered */
	if (!(nlh->nlmsg_flags & NLM_F_DUMP))
		return -EOPNOTSUPP;
	return netlink_dump_start(sock_net(skb->sk)->diag_nlsk, skb, nlh, &c);
}

static struct sock_diag_handler sdp_diag_handler = {
	.owner	= THIS_MODULE,
	.dump	= sdp_diag_handler_dump,
};

int sdp_diag_init(void)
{
	sdp_diag_handler.family = sdp_family;
	return sock_diag_register(&sdp_diag_handler);
}

void sdp_diag_exit(void)
{
	sock_diag_unregister(&sdp_diag_handler);
}
