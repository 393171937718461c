/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol: the transport's own types. A connection's QP,
 * CQ and buffer rings, the devices, and the functions that pass them
 * around. Only the transport files include this (and <rdma/...>).
 */
#ifndef _NET_SDP_RDMA_H
#define _NET_SDP_RDMA_H

#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "sdp_sock.h"
#include "sdp_conn.h"
#include "sdp_proto.h"

#define SDP_CTRL_SLOTS		4
/*
 * Receive buffers posted when a connection starts; the ring grows (doubling)
 * to its full size once the peer has used up its credits. Send buffers are
 * taken when a message is filled and given back when it completes, except
 * for a few kept for the next messages.
 */
#define SDP_RX_START_BUFS	4
#define SDP_TX_KEEP_BUFS	2
#define SDP_CTRL_MSG_MAX	64	/* bytes per control ring slot */
#define SDP_RESOLVE_TIMEOUT_MS	2000
/* Ports tried when rdma_cm already holds the one TCP gave us. */
#define SDP_BIND_TRIES		8
/* rnr_retry_count 7 would retry forever; a peer overrunning us is a bug. */
#define SDP_RNR_RETRY		6
/*
 * A silent peer fails a send after SDP_RETRY retries SDP_ACK_TIMEOUT apart
 * (4.096 us << 20: 4.3 s), some 30 s in all: a link down for seconds is
 * survived, a dead host is noticed. Soft-RoCE reads a retry count of 7
 * as "forever".
 */
#define SDP_RETRY		6
#define SDP_ACK_TIMEOUT		20
/*
 * A send the device neither completes nor fails within twice those retries
 * ends the connection (ETIMEDOUT) when TCP_USER_TIMEOUT is not set: a
 * provider that stalls must not hang its sender.
 */
#define SDP_TX_STALL_MS		60000
/* TCP_CORK and MSG_MORE hold a partial message at most this long (as TCP). */
#define SDP_CORK_TIMEOUT	(HZ / 5)
/* A lone free buffer waits this long to be announced (TCP_DELACK_MIN). */
#define SDP_CREDIT_DELAY	(HZ / 25)

struct sdp_dev {
	struct list_head	list;		/* on sdp_devices */
	struct ib_device	*ibdev;
	struct ib_pd		*pd;
	struct kref		ref;		/* one per connection, one for the list */
	struct completion	released;
	struct mutex		lock;		/* conns, dead */
	struct list_head	conns;
	bool			dead;
};

struct sdp_sock;

struct sdp_rx_slot {
	struct ib_cqe		cqe;
	struct list_head	node;		/* on rx_posted or rx_ready */
	void			*buf;
	u64			dma;
	u32			len;		/* bytes received, header included */
	u32			off;		/* next unread byte */
	u8			status;		/* enum ib_wc_status */
	bool			imm;		/* it came with immediate data */
	bool			done;
};

struct sdp_tx_slot {
	struct ib_cqe		cqe;
	void			*buf;
	u64			dma;
	u32			len;		/* bytes filled, header included */
	u8			status;
	u8			oob;		/* SDP_OOB_PRES: ends in the urgent byte */
	bool			done;
	bool			ctrl;		/* from the control ring */
	bool			kmem;		/* forced: kernel memory, not the socket's */
	u64			stamp;		/* ns: posted at; once done, it took */
};

/* A send buffer kept between messages. */
struct sdp_buf {
	void	*buf;
	u64	dma;
};

/* RDMA state of one connection; exists from QP creation to teardown. */
struct sdp_conn {
	struct sdp_sock		*ssk;
	struct rdma_cm_id	*id;		/* the id the QP belongs to */
	struct sdp_dev		*sdev;
	struct list_head	dev_item;	/* on sdev->conns */
	struct ib_cq		*cq;
	struct ib_qp		*qp;
	bool			cm_qp;		/* rdma_cm moves it (iWARP), not we */
	u32			lkey;
	u32			max_inline;
	u32			path_mtu;	/* bytes, as rdma_cm set the QP */
	u32			port_num;	/* the device's port, and the peer's QP */
	u32			dest_qpn;
	bool			started;	/* the peer's Hello/HelloAck is in */
	bool			failed;		/* the QP went to error by itself */

	/* receive ring: buffers of rcv_size bytes */
	struct sdp_rx_slot	*rx;
	u32			rx_count;	/* slots */
	u32			rx_alloc;	/* of them, with a buffer (the first) */
	bool			rx_starved;	/* the peer ran out of credits */
	u32			rcv_size;
	struct list_head	rx_posted;	/* in posting order */
	struct list_head	rx_ready;	/* data not yet read */
	u32			rx_posted_nr;
	u32			rx_ready_bytes;

	/* send ring: data messages of at most snd_size bytes */
	struct sdp_tx_slot	*tx;
	u32			tx_count;	/* slots */
	u32			tx_kept;	/* slots tx_tail..tx_head hold the others */
	bool			tx_nomem;	/* no buffer to be had till one comes back */
	struct sdp_buf		tx_keep[SDP_TX_KEEP_BUFS];
	u32			snd_size;
	u32			tx_head;	/* next slot to fill */
	u32			tx_post;	/* next slot to post */
	u32			tx_tail;	/* oldest posted, not completed */
	u32			tx_queued_bytes;	/* payload filled, not completed */
	u32			tx_unposted_bytes;	/* payload filled, not posted */
	u32			tx_urg;		/* tx_post once the urgent byte is posted */
	bool			tx_urg_pend;	/* ... and it has not been announced */

	/* control ring */
	struct sdp_tx_slot	ctrl[SDP_CTRL_SLOTS];
	void			*ctrl_buf;
	u64			ctrl_dma;
	u32			ctrl_head;
	u32			ctrl_tail;

	struct sdp_seq		seq;		/* sequence numbers and credits */
};

/* Where reading stands in the stream: bytes received less those unread. */
static inline u32 sdp_copied_seq(const struct sdp_sock *ssk)
{
	return ssk->rcv_nxt - ssk->conn->rx_ready_bytes;
}

/* The next unread byte is the urgent one (so it has arrived, unpassed). */
static inline bool sdp_urg_next(const struct sdp_sock *ssk)
{
	return ssk->conn->rx_ready_bytes && sdp_urg_at(ssk, sdp_copied_seq(ssk));
}

/* Credits the peer has given us now. */
static inline int sdp_tx_credits(const struct sdp_conn *c)
{
	return sdp_seq_tx_credits(&c->seq);
}

/* sdp_cma.c */
int sdp_conn_param(struct rdma_cm_id *id, struct rdma_conn_param *p,
		   const void *data, u8 len);
void sdp_established(struct sdp_sock *ssk, struct rdma_cm_id *id);

/* sdp_listen.c */
int sdp_cm_req(struct sdp_sock *lssk, struct rdma_cm_id *id,
	       const struct rdma_cm_event *ev);
void sdp_passive_established(struct sdp_sock *child);
void sdp_defer_data(struct sdp_sock *child);

/* sdp_conn.c */
int sdp_conn_create(struct sdp_sock *ssk, struct rdma_cm_id *id, u32 rcv_max);
int sdp_conn_start(struct sdp_conn *c, u32 snd_size, u16 peer_bufs);
void sdp_conn_expand_sndbuf(struct sdp_conn *c);
int sdp_rx_grow(struct sdp_conn *c, u32 n, gfp_t gfp);
int sdp_tx_buf_get(struct sdp_conn *c, struct sdp_tx_slot *s, gfp_t gfp, bool force);
void sdp_tx_buf_put(struct sdp_conn *c, struct sdp_tx_slot *s);
u16 sdp_conn_hello_bufs(struct sdp_conn *c);
int sdp_conn_rts(struct sdp_conn *c);
void sdp_conn_qp_err(struct sdp_conn *c);

/* sdp_dev.c */
extern const struct sdp_upcalls *sdp_up;
struct sdp_dev *sdp_dev_get(struct ib_device *ibdev);
void sdp_dev_put(struct sdp_dev *sdev);
int sdp_dev_add_conn(struct sdp_dev *sdev, struct sdp_conn *c);
void sdp_dev_del_conn(struct sdp_conn *c);

/* sdp_rx.c */
void sdp_rx_done(struct ib_cq *cq, struct ib_wc *wc);
int sdp_post_recv(struct sdp_conn *c, struct sdp_rx_slot *slot);
void sdp_rx_reap(struct sdp_sock *ssk);

/* sdp_tx.c */
void sdp_tx_done(struct ib_cq *cq, struct ib_wc *wc);
void sdp_tx_reap(struct sdp_sock *ssk);

#endif /* _NET_SDP_RDMA_H */
