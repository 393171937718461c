/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol: the transport's own types. struct sdp_conn
 * whole, its QP, CQ and buffer rings, the devices, and the functions that
 * pass them around. Only the transport files include this (and <rdma/...>);
 * none of them knows the socket layer's struct sdp_sock (scripts/layers).
 */
#ifndef _NET_SDP_RDMA_H
#define _NET_SDP_RDMA_H

#include <linux/list.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/netdevice.h>
#include <linux/stddef.h>
#include <linux/timer.h>
#include <net/sock.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "sdp_compat.h"
#include "sdp_conn.h"
#include "sdp_debug.h"
#include "sdp_netns.h"
#include "sdp_proto.h"
#include "sdp_stats.h"

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
/* Nothing sent or completed for this long: the kept send buffers go (sdp_tx_watch()). */
#define SDP_TX_IDLE		(HZ / 5)
/* TCP_CORK and MSG_MORE hold a partial message at most this long (as TCP). */
#define SDP_CORK_TIMEOUT	(HZ / 5)
/* A lone free buffer waits this long to be announced (TCP_DELACK_MIN). */
#define SDP_CREDIT_DELAY	(HZ / 25)

/*
 * How a device's transport differs from InfiniBand's, chosen when the
 * device is added (sdp_dev.c); the rest of the transport asks this, never
 * the device.
 */
struct sdp_quirks {
	/*
	 * rdma_cm creates the QP and moves it through its states (iWARP: its
	 * CM must hold the QP, and it has no retry counts for us to bound).
	 * Otherwise the QP is ours (sdp_conn.c).
	 */
	bool	cm_qp;
	/*
	 * Zero-copy (sdp_zc.c): fast registration to offer our pages, and a
	 * read target the local DMA key covers (iWARP's must be registered
	 * for remote write: not yet done, so iWARP copies).
	 */
	bool	zcopy;
	/*
	 * Soft-RoCE retransmits from its oldest uncompleted send and runs
	 * again every work request after it, a registration too, which it
	 * then refuses (the MR is no longer free: "not free") and takes the
	 * QP to error: a registration waits for an empty send queue there.
	 */
	bool	reg_alone;
	/*
	 * Soft-RoCE can complete an RDMA Read as successful with its bytes
	 * never written: a read response it failed to send (its link down,
	 * the GID gone) stays half-served, it answers the read's retry from
	 * there with a response that does not start a message, and its
	 * completer ends the read as a protocol error with the status still
	 * IB_WC_SUCCESS (rxe_comp.c: check_ack(), then the WARN on that status
	 * in COMPST_ERROR), then puts the QP in error. Only the work request
	 * it is on completes so: there a buffer's read is unsignalled, and a
	 * read of its last byte again after it is the one signalled, which the
	 * error flushes.
	 */
	bool	read_fence;
	u8	rd_depth;	/* RDMA Reads in and out at once, as the device allows */
	/*
	 * A shared receive queue may be offered (sdp_srq.c): not on iWARP,
	 * which has no RNR NAK to hold a sender while it is empty.
	 */
	bool	srq;
};

struct sdp_srq;

struct sdp_dev {
	struct list_head	list;		/* on sdp_devices */
	struct ib_device	*ibdev;
	struct sdp_quirks	quirks;
	struct kref		ref;		/* one per connection, one for the list */
	struct completion	released;
	struct mutex		lock;		/* conns, dead, cqs */
	struct list_head	conns;
	struct list_head	cqs;		/* shared by its connections (sdp_cq.c) */
	struct delayed_work	cq_reap;	/* the unused ones go */
	struct net_device	*napi_dev;	/* holds the CQs' NAPI contexts */
	struct list_head	srqs;		/* one per buffer size in use (sdev->lock) */
	struct delayed_work	srq_reap;	/* QPs their connections left go */
	bool			dead;
};

/* Completions reaped per ib_poll_cq() (NAPI's weight bounds a call of the poller). */
#define SDP_CQ_BATCH		16

/* SRQ buffer sizes: powers of two from SDP_MIN_BUF_SIZE to SDP_MAX_BUF_SIZE */
#define SDP_SRQ_CLASSES		8

/* A CQ shared by connections of its device (sdp_cq.c), and its poller. */
struct sdp_cq {
	struct ib_cq		*cq;
	struct sdp_dev		*sdev;
	struct list_head	node;		/* on sdev->cqs */
	u32			entries;
	u32			used;		/* reserved by QPs (sdev->lock) */
	u32			srq_qps[SDP_SRQ_CLASSES];	/* of them, on each SRQ */
	unsigned long		idle_since;	/* jiffies: used fell to 0 */
	int			vector;
	struct napi_struct	napi;		/* its poller; busy polling finds it by id */
	struct sdp_conn		*todo;		/* marked in this batch */
	struct ib_wc		wc[SDP_CQ_BATCH];
};

/*
 * What every work request carries (its wr_cqe): how its completion finds
 * the slot that posted it and that slot's connection. Completion handlers
 * need nothing of the CQ, which may serve many connections.
 */
struct sdp_wr {
	struct ib_cqe		cqe;
	struct sdp_conn		*conn;
};

static inline struct sdp_wr *sdp_wr_of(const struct ib_wc *wc)
{
	return container_of(wc->wr_cqe, struct sdp_wr, cqe);
}

struct sdp_rx_slot {
	struct sdp_wr		wr;
	struct list_head	node;		/* on rx_posted or rx_ready */
	void			*buf;
	u64			dma;
	u32			len;		/* bytes received, header included */
	u32			off;		/* next unread byte */
	u8			status;		/* enum ib_wc_status */
	bool			imm;		/* it came with immediate data */
	bool			done;		/* completed: the fields above are set */
	bool			rd;		/* an RDMA Read's target (sdp_zc.c), not the ring's */
	bool			kmem;		/* ... charged to the cgroup, not the socket */
};

struct sdp_tx_slot {
	struct sdp_wr		wr;
	void			*buf;
	u64			dma;
	u32			len;		/* bytes filled, header included */
	u8			status;
	u8			oob;		/* SDP_OOB_PRES: ends in the urgent byte */
	bool			done;
	bool			ctrl;		/* from the control ring */
	bool			kmem;		/* forced: kernel memory, not the socket's */
	bool			write;		/* RDMA Written into the peer's SinkAvail, at raddr */
	u32			rkey;
	u64			stamp;		/* ns: posted at; once done, it took */
	u64			raddr;
};

/* A ring of 16 fits a 1 KiB slab object (72 bytes took a 2 KiB one). */
static_assert(sizeof(struct sdp_tx_slot) == 64);

/*
 * A shared receive queue (sdp_srq.c): this many buffers posted, each
 * refilled as its message is taken; they are also all the receive
 * completions of its QPs that can be unreaped at once.
 */
#define SDP_SRQ_BUFS		64

/*
 * A QP on an SRQ (its qp_context), which outlives its connection: a
 * receive the QP took can still complete after the QP's drain (a message
 * half in when it went to error is flushed by the responder), and its
 * completion names the QP. So the QP stays SDP_SRQ_RETIRE after its
 * connection let go of it (standing in for the Last WQE Reached event,
 * which rxe and siw do not raise), then a marker is sent on it, and it is
 * destroyed once the marker's completion was polled: every completion it
 * made was polled before (the IPoIB CM's drain, with a grace for the event).
 */
struct sdp_srq_qp {
	struct sdp_conn		*c;		/* NULL once retired (srq->lock) */
	struct sdp_srq		*srq;
	struct ib_qp		*qp;
	struct ib_cq		*cq;		/* and the room it holds there */
	u32			cq_room;
	unsigned long		since;		/* jiffies: retired */
	struct list_head	node;		/* on srq->retired */
	struct sdp_wr		fence;		/* the marker */
	bool			fenced;		/* posted (sdev->lock) */
	bool			drained;	/* its completion polled: the QP may go */
};

/* A message the SRQ took for a connection, handed to its engine. */
struct sdp_land {
	void			*buf;		/* NULL: the end marker (its QP is down) */
	u64			dma;
	u32			len;
	u8			status;
	bool			imm;
};

/* A receive buffer posted on the SRQ. */
struct sdp_srq_wr {
	struct sdp_wr		wr;		/* (no connection: the completion's QP names it) */
	struct sdp_srq		*srq;
	void			*buf;
	u64			dma;
};

struct sdp_srq {
	struct ib_srq		*srq;
	struct ib_pd		*pd;		/* its QPs' too */
	struct sdp_dev		*sdev;
	struct list_head	node;		/* on sdev->srqs */
	u32			size;		/* bytes per buffer: its connections' rcv_size */
	int			class;		/* of its size: ilog2(size / SDP_MIN_BUF_SIZE) */
	u32			users;		/* connections and retired QPs (sdev->lock) */
	struct list_head	retired;	/* (sdev->lock) */
	spinlock_t		lock;		/* empty; the QPs' c */
	u32			nempty;
	struct sdp_srq_wr	*empty[SDP_SRQ_BUFS];	/* no buffer: the refill's */
	atomic_t		loose;		/* buffers taken, refused by their sockets' limits */
	struct delayed_work	refill;
	struct sdp_srq_wr	wrs[SDP_SRQ_BUFS];
};

/* A send buffer kept between messages. */
struct sdp_buf {
	void	*buf;
	u64	dma;
};

/* sdp_conn.flags */
enum {
	SDP_C_DEFERRED,		/* completions or timer work wait for release_cb */
	SDP_C_PUSH,		/* send partial data now (cork timer fired) */
	SDP_C_MORE,		/* the last sendmsg() said MSG_MORE */
	SDP_C_SEND_DISCONN,	/* DisConn once the data before it is posted */
	SDP_C_RCVD_DISCONN,	/* the peer's DisConn arrived */
	SDP_C_TX_TIMEOUT,	/* the send progress timer fired */
	SDP_C_CM_GONE,		/* the QP was disconnected (by us or the peer) */
	SDP_C_PEER_UP,		/* a child's peer disconnected: it had connected */
	SDP_C_CREDIT_DUE,	/* the credit timer fired: announce what is free */
	SDP_C_CQ_MARKED,	/* on its CQ's list of connections to run (sdp_cq.c) */
	SDP_C_ZC_STALL,		/* the peer's SrcAvail waited for our reader too long */
	SDP_C_SRQ_END,		/* the end marker is posted (sdp_srq.c) */
};

/*
 * Zero-copy (sdp_zc.c). RDMA Reads of a peer's SrcAvail in flight at once
 * (they take send queue entries), and the buffers its bytes may wait in
 * for our reader, a receive buffer's size each (SO_RCVBUF bounds them too).
 */
#define SDP_ZC_READS		8
#define SDP_ZC_SLOTS		64
/*
 * The peer's SrcAvail is read as far as SO_RCVBUF allows; if our reader
 * leaves it there this long, the rest is declined (SendSM) and comes by
 * copies, which the peer's send ring holds as TCP's send buffer would.
 */
#define SDP_ZC_STALL		(HZ / 25)
/* RDMA Reads a QP takes in, or has out, at once (at most SDP_ZC_READS) */
#define SDP_ZC_RD_DEPTH		4
/*
 * MSG_ZEROCOPY sends out at once on a connection (within SO_SNDBUF's bytes):
 * one offered, the rest pinned, mapped and queued behind it.
 */
#define SDP_ZC_QUEUE		4
/* A connection's zero-copy buffers: its sends', and a reader's (sdp_zr.c). */
#define SDP_ZBUFS		(SDP_ZC_QUEUE + 1)
/* The pages of a SrcAvail at its largest, unaligned at both ends. */
#define SDP_ZC_PAGES		(SDP_SRCAVAIL_MAX / PAGE_SIZE + 1)

/* Our SrcAvail's life. */
enum sdp_zc_state {
	SDP_ZC_IDLE,
	SDP_ZC_QUEUED,		/* mapped; registration and SrcAvail wait for the data before */
	SDP_ZC_OUT,		/* the peer may read */
	SDP_ZC_INV,		/* read or refused: the registration is being invalidated */
	SDP_ZC_DONE,		/* no one can read: the sender takes its pages back */
	SDP_ZC_COPY,		/* MSG_ZEROCOPY's, declined in part: the rest is copied from its pages */
};

struct sdp_zc_bufs;

/*
 * A buffer's registration for the peer (its MR under a new key) and the
 * invalidation that ends it, as work requests: a SrcAvail's, a SinkAvail's.
 */
struct sdp_zc_reg {
	bool			registered;	/* the registration is posted */
	bool			inv_done;
	u8			reg_status;	/* a failed registration's */
	u8			inv_status;
	struct sdp_wr		reg_wr;
	struct sdp_wr		inv_wr;
};

/*
 * A zero-copy send's user buffer, pinned, mapped for the device and mapped
 * into an MR (sdp_zbuf.c); a blocking send's is kept for the next send of
 * the same bytes, MSG_ZEROCOPY's goes with its send.
 */
struct sdp_zc_buf {
	struct mmu_interval_notifier	mni;	/* while kept: the address maps other pages now */
	struct sdp_zc_bufs	*set;		/* its connection's */
	struct mm_struct	*mm;		/* whose pinned_vm counts the pages (grabbed), or NULL */
	unsigned long		addr;
	unsigned long		used;		/* jiffies: its last send ended */
	u32			len;
	u32			off;		/* of the first byte in its page */
	u32			npages;		/* pinned */
	u32			pinned_vm;	/* pages counted in mm's pinned_vm */
	bool			busy;		/* a send's */
	bool			kept;		/* stays for the next send (mni inserted) */
	bool			stale;		/* its pages are not the address's any more */
	bool			mapped;		/* the pages are mapped for the device */
	bool			write;		/* the device writes them: a reader's */
	struct page		**pages;
	struct sg_table		sgt;
	struct ib_device	*ibdev;		/* the mapping's */
	struct ib_mr		*mr;		/* the slot's, in the connection's PD: the pages mapped in,
						 * registered only during a send */
};

/*
 * The source side: a send's buffer, from sdp_conn_zc_send() to
 * sdp_conn_zc_end() (the sender's own call, which may come after the
 * connection's resources are gone: so kept outside them), or, for
 * MSG_ZEROCOPY's (@uarg), to sdp_zc_async_end(). Offered by SrcAvail, or
 * (@write) RDMA Written into the peer's SinkAvail we hold.
 */
struct sdp_zc_src {
	u8			state;		/* enum sdp_zc_state */
	bool			cancel;		/* a SrcAvailCancel is to be sent */
	bool			ended;		/* the connection ended under it */
	bool			write;		/* written to @raddr, @rkey (SDP_ZC_OUT: posted) */
	bool			wr_done;	/* the write completed, with wr_status */
	u8			wr_status;
	u32			len;		/* bytes offered */
	u32			acked;		/* of them, read by the peer (or written) */
	u32			copied;		/* of the rest, copied (SDP_ZC_COPY) */
	u32			rkey;
	u64			raddr;
	struct sdp_wr		wr;		/* the write's */
	struct ubuf_info	*uarg;		/* MSG_ZEROCOPY's notification, or NULL */
	struct sdp_zc_buf	*buf;		/* its pages and MR (registered once it is the oldest) */
	struct sdp_zc_reg	reg;
};

/* The sink side: a peer's SrcAvail being read. */
struct sdp_zc_sink {
	bool			reading;	/* the stream waits for its bytes */
	bool			cancel;		/* the peer asked to have it back */
	bool			compl_due;	/* RdmaRdCompl to send, of compl_len */
	bool			sendsm_due;	/* then SendSM: the rest is not read */
	u32			len;
	u32			posted;		/* bytes asked for */
	u32			got;		/* bytes in */
	u32			compl_len;
	u32			rkey;
	u64			vaddr;
	u32			rd_head;	/* next read slot */
	u32			rd_tail;	/* oldest in flight */
	struct sdp_rx_slot	*rd;		/* SDP_ZC_SLOTS, from the first SrcAvail */
};

/* Our SinkAvail's life (sdp_zr.c). */
enum sdp_zr_state {
	SDP_ZR_IDLE,
	SDP_ZR_QUEUED,		/* mapped; registration and SinkAvail to go */
	SDP_ZR_OUT,		/* the peer may write */
	SDP_ZR_INV,		/* answered or withdrawn: the registration is being invalidated */
	SDP_ZR_DONE,		/* no one can write: the reader takes its pages back */
};

/*
 * A reader's buffer offered by SinkAvail, from sdp_conn_zr_recv() to
 * sdp_conn_zr_end() (the reader's own call: kept outside the resources).
 */
struct sdp_zr_adv {
	u8			state;		/* enum sdp_zr_state */
	bool			cancel;		/* a SinkAvailCancel is to be sent */
	bool			crossed;	/* stream bytes crossed it: the answer is of none */
	bool			ended;		/* the connection ended under it */
	u32			len;		/* bytes offered */
	u32			got;		/* of them, written, as the answer says */
	u32			mseq;		/* our SinkAvail's */
	struct sdp_zc_buf	*buf;
	struct sdp_zc_reg	reg;
};

/*
 * The peer's SinkAvail: taken (held), the stream's next bytes are RDMA
 * Written into it from send slots (write), then one RdmaWrCompl says how
 * many; declined, that answer says none at once.
 */
struct sdp_zr_peer {
	bool			held;		/* our bytes go into it */
	bool			answer_due;	/* RdmaWrCompl once the writes before are posted */
	u32			len;
	u32			rkey;
	u64			vaddr;
	u32			filled;		/* bytes put in send slots for it */
};

/*
 * One connection. Locking: the socket's (sdp_sock.h): process context
 * under lock_sock(), completions and timers under its spinlock, work
 * deferred to the owner's release_sock() (SDP_C_DEFERRED).
 */
struct sdp_conn {
	struct sdp_conn_view	v;		/* first: sdp_conn_view() */
	struct sock		*sk;		/* the socket it serves */
	unsigned long		flags;		/* SDP_C_* */

	/* rdma_cm: one owner for the id, whoever takes it with xchg() */
	struct rdma_cm_id	*id;
	struct rdma_cm_id	*arming;	/* a listener's id until it listens */
	bool			passive;	/* a listener's child */
	struct sdp_hh		peer_hh;	/* the Hello a child came with */
	u8			peer_rd_in;	/* ... its REQ's RDMA Reads of ours, */
	u8			peer_rd_out;	/* ... and of its it serves */
	unsigned long		req_sent;	/* jiffies: our request left */
	struct sockaddr_storage	saddr;		/* as rdma_cm saw them */
	struct sockaddr_storage	daddr;
	char			ibdev[IB_DEVICE_NAME_MAX];

	/*
	 * The byte stream. Positions count payload bytes since the
	 * connection started. Urgent data (TCP's urg_data, urg_seq): the last
	 * byte of a message flagged SDP_OOB_PRES; the byte read stays in the
	 * stream.
	 */
	u32			rcv_nxt;	/* bytes received */
	u32			urg_seq;	/* where the urgent byte is */
	unsigned long		rx_stamp;	/* jiffies of the last message in */
	unsigned long		tx_stamp;	/* since when a send waits, or progressed */
	bool			tx_waiting;
	bool			nodelay;	/* TCP_NODELAY, TCP_CORK as applied */
	bool			cork;
	/* TCP_INFO's RTT: from post to completion of our sends, in us */
	u32			srtt_us;
	u32			rttvar_us;
	u32			min_rtt_us;
	struct timer_list	cork_timer;
	struct timer_list	credit_timer;	/* a lone free buffer, held back */
	struct timer_list	tx_timer;	/* bounds a send's progress */
	struct timer_list	zc_timer;	/* a SrcAvail's reads held by our reader */
	struct sdp_conn		*cq_next;	/* on its CQ's list (SDP_C_CQ_MARKED) */
	/* a ring: the oldest is offered, MSG_ZEROCOPY's may queue behind it */
	struct sdp_zc_src	zsrc[SDP_ZC_QUEUE];
	u32			zs_head;
	u32			zs_tail;
	u32			zs_bytes;	/* pinned in them */
	/* their buffers (sdp_zbuf.c), from the first zero-copy send: idle connections pay none */
	struct sdp_zc_bufs	*zbufs;
	/* our reader's SinkAvail */
	struct sdp_zr_adv	zr;

	/* RDMA resources, from sdp_conn_setup() to sdp_conn_release() */
	struct_group(res,
		struct sdp_dev		*sdev;
		struct list_head	dev_item;	/* on sdev->conns */
		/*
		 * Its own: the regions a peer may reach through its QP are
		 * this connection's alone, whatever key it guesses.
		 */
		struct ib_pd		*pd;
		struct ib_cq		*cq;		/* shared: sdp_cq_get() */
		u32			cq_room;	/* completions reserved on it */
		struct ib_qp		*qp;
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
		/*
		 * On the device's SRQ (its PD then, and no zero-copy offered):
		 * posted slots are promises, and the messages the SRQ took
		 * wait in land, from the poller to the engine, for them.
		 */
		struct sdp_srq		*srq;
		struct sdp_srq_qp	*srq_qp;	/* its QP's context there */
		struct sdp_land		*land;
		u32			land_mask;
		u32			land_prod;	/* the poller's */
		u32			land_cons;	/* the engine's */
		struct sdp_wr		end_wr;		/* flushed: the QP is down */

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

		/* zero-copy: we read the peer's SrcAvails; it reads ours */
		bool			zc_offered;
		bool			zc_peer;
		u8			rd_in;		/* RDMA Reads of ours in flight at once */
		u8			rd_out;		/* ours of the peer's */
		struct sdp_zc_sink	zsink;
		/* zero-copy receive: we write into the peer's SinkAvails; it into ours */
		bool			zr_offered;
		bool			zr_peer;
		struct sdp_zr_peer	zpeer;
	);
};

static_assert(offsetof(struct sdp_conn, v) == 0);

/* Work requests a buffer's read takes: the read, and its fence (quirks.read_fence). */
static inline u32 sdp_read_wrs(const struct sdp_dev *sdev)
{
	return sdev->quirks.read_fence ? 2 : 1;
}

/* Our oldest zero-copy send (IDLE when none is queued). */
static inline struct sdp_zc_src *sdp_zc_head(struct sdp_conn *c)
{
	return &c->zsrc[c->zs_head % SDP_ZC_QUEUE];
}

/* (a blocking sender's wake condition reads it unlocked) */
static inline u8 sdp_zc_state(const struct sdp_conn *c)
{
	return READ_ONCE(c->zsrc[READ_ONCE(c->zs_head) % SDP_ZC_QUEUE].state);
}

/*
 * Send queue entries zero-copy may take: the reads, a registration, its
 * invalidation and a write from the sender's pages, and a SinkAvail's two.
 */
static inline u32 sdp_zc_wrs(const struct sdp_dev *sdev)
{
	return SDP_ZC_READS * sdp_read_wrs(sdev) + 5;
}

/* A SrcAvail waits to go (not a write into the peer's SinkAvail, which takes no turn). */
static inline bool sdp_zc_offer_queued(struct sdp_conn *c)
{
	return sdp_zc_state(c) == SDP_ZC_QUEUED && !sdp_zc_head(c)->write;
}

/* The peer's SinkAvail is taken and has room: the next bytes are written there. */
static inline bool sdp_zr_filling(const struct sdp_conn *c)
{
	return c->zpeer.held && !c->zpeer.answer_due && c->zpeer.filled < c->zpeer.len;
}

/* Where reading stands in the stream: bytes received less those unread. */
static inline u32 sdp_copied_seq(const struct sdp_conn *c)
{
	return c->rcv_nxt - c->rx_ready_bytes;
}

/* Has the urgent byte arrived, and does it stand at @seq? */
static inline bool sdp_urg_at(const struct sdp_conn *c, u32 seq)
{
	return (c->v.urg_data & (SDP_URG_VALID | SDP_URG_READ)) &&
	       c->urg_seq == seq;
}

/* The next unread byte is the urgent one (so it has arrived, unpassed). */
static inline bool sdp_urg_next(const struct sdp_conn *c)
{
	return c->rx_ready_bytes && sdp_urg_at(c, sdp_copied_seq(c));
}

/* Credits the peer has given us now. */
static inline int sdp_tx_credits(const struct sdp_conn *c)
{
	return sdp_seq_tx_credits(&c->seq);
}

/* A connection that carries data: established or half closed. */
static inline bool sdp_conn_can_send(const struct sdp_conn *c)
{
	return (1 << READ_ONCE(c->sk->sk_state)) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT);
}

/* sdp_post.c: every work request goes through here */
extern const struct sdp_upcalls *sdp_up;
void sdp_cq_mark(struct ib_cq *cq, struct sdp_conn *c);
int sdp_post_recv(struct sdp_conn *c, struct sdp_wr *wr, u64 dma, u32 len);
int sdp_post_send(struct sdp_conn *c, struct sdp_wr *wr, const void *va, u64 dma, u32 len);
int sdp_post_write_mr(struct sdp_conn *c, struct sdp_wr *wr, struct ib_mr *mr, u32 len,
		      u64 raddr, u32 rkey);
int sdp_post_write(struct sdp_conn *c, struct sdp_wr *wr, const void *va, u64 dma, u32 len,
		   u64 raddr, u32 rkey);
int sdp_post_read(struct sdp_conn *c, struct sdp_wr *wr, u64 dma, u32 len,
		  u64 raddr, u32 rkey);
int sdp_post_reg(struct sdp_conn *c, struct sdp_wr *wr, struct ib_mr *mr, int access);
int sdp_post_inv(struct sdp_conn *c, struct sdp_wr *wr, u32 rkey);
void sdp_post_end(struct sdp_conn *c);
int sdp_post_fence(struct ib_qp *qp, struct sdp_wr *wr);
void sdp_wr_init(struct sdp_wr *wr, struct sdp_conn *c,
		 void (*done)(struct ib_cq *cq, struct ib_wc *wc));

/* sdp_buf.c: how a buffer is charged: to the socket (receive or send), or the cgroup */
enum sdp_mem { SDP_MEM_RX, SDP_MEM_TX, SDP_MEM_KERNEL, SDP_MEM_RX_KERNEL };
int sdp_buf_map(struct sdp_conn *c, void **buf, u64 *dma, u32 size,
		enum sdp_mem mem, gfp_t gfp);
void sdp_buf_unmap(struct sdp_conn *c, void *buf, u64 dma, u32 size,
		   enum sdp_mem mem);
void sdp_bufs_free(struct sdp_conn *c);
bool sdp_buf_adopt(struct sdp_conn *c, u32 size);
bool sdp_buf_could_charge(struct sdp_conn *c, u32 size);
int sdp_tx_buf_get(struct sdp_conn *c, struct sdp_tx_slot *s, gfp_t gfp, bool force);
void sdp_tx_buf_put(struct sdp_conn *c, struct sdp_tx_slot *s);
void sdp_tx_keep_drop(struct sdp_conn *c);
int sdp_tx_write(struct sdp_conn *c, struct msghdr *msg, int flags,
		 size_t *copied, gfp_t gfp);

/* sdp_cma.c */
int sdp_conn_param(struct rdma_cm_id *id, struct rdma_conn_param *p,
		   const void *data, u8 len, u8 rd_in, u8 rd_out);

/* sdp_conn.c */
int sdp_conn_cache_init(void);
void sdp_conn_cache_exit(void);
int sdp_conn_setup(struct sdp_conn *c, u32 rcv_max);
int sdp_conn_start(struct sdp_conn *c, u32 snd_size, u16 peer_bufs);
u16 sdp_conn_hello_bufs(struct sdp_conn *c);
int sdp_conn_rts(struct sdp_conn *c);
void sdp_conn_qp_err(struct sdp_conn *c);

/* sdp_cq.c */
struct ib_cq *sdp_cq_get(struct sdp_dev *sdev, u32 nr, int srq_class);
void sdp_cq_put(struct sdp_dev *sdev, struct ib_cq *cq, u32 nr, int srq_class);
u32 sdp_cq_napi_id(struct ib_cq *cq);
int sdp_cq_init(struct sdp_dev *sdev);
/* sdp_srq.c */
struct sdp_srq *sdp_srq_get(struct sdp_dev *sdev, u32 size);
int sdp_srq_conn_init(struct sdp_conn *c);
void sdp_srq_retire(struct sdp_conn *c);
void sdp_srq_dev_exit(struct sdp_dev *sdev);
void sdp_srq_dev_init(struct sdp_dev *sdev);
void sdp_cq_exit(struct sdp_dev *sdev);

/* sdp_dev.c */
struct sdp_dev *sdp_dev_get(struct ib_device *ibdev);
void sdp_dev_put(struct sdp_dev *sdev);
int sdp_dev_add_conn(struct sdp_dev *sdev, struct sdp_conn *c);
void sdp_dev_del_conn(struct sdp_conn *c);

/* sdp_engine.c */
void sdp_conn_timers_init(struct sdp_conn *c);
int sdp_cq_poll(struct napi_struct *napi, int budget);
void sdp_cq_event(struct ib_cq *cq, void *context);
void sdp_process(struct sdp_conn *c);
void sdp_defer_or_process(struct sdp_conn *c);
void sdp_timer_event(struct sdp_conn *c, int bit);

/* sdp_rx.c */
int sdp_rx_grow(struct sdp_conn *c, u32 n, gfp_t gfp);
void sdp_rx_reap(struct sdp_conn *c);
void sdp_rx_ring_init(struct sdp_conn *c);

/* sdp_tx.c */
void sdp_tx_reap(struct sdp_conn *c);
void sdp_tx_push(struct sdp_conn *c, bool force);
void sdp_tx_watch(struct sdp_conn *c, bool rearm);
void sdp_tx_ring_init(struct sdp_conn *c);
void sdp_ctrl_ring_init(struct sdp_conn *c);
void sdp_tx_timers_stop(struct sdp_conn *c);
void sdp_expand_sndbuf(struct sdp_conn *c);
void sdp_update_counts(struct sdp_conn *c);
int sdp_tx_ctrl(struct sdp_conn *c, u8 mid, u32 len);
bool sdp_tx_ctrl_ok(const struct sdp_conn *c);
void sdp_wr_failed(struct sdp_conn *c, u8 status, int mib);
struct sdp_bsdh *sdp_tx_ctrl_msg(struct sdp_conn *c);

/* sdp_zc.c */
void sdp_zbuf_exit(struct sdp_conn *c);
struct sdp_zc_buf *sdp_zbuf_get(struct sdp_conn *c, unsigned long addr, u32 len, bool async,
				bool write);
void sdp_zbuf_written(struct sdp_zc_buf *b);
void sdp_zbuf_put(struct sdp_conn *c, struct sdp_zc_buf *b, bool keep);
void sdp_zbuf_revoke(struct sdp_conn *c, struct sdp_zc_buf *b);
void sdp_zbuf_shed_all(struct sdp_conn *c);
void sdp_zbuf_release(struct sdp_conn *c);
void sdp_zc_init(struct sdp_conn *c);
void sdp_zc_timer_stop(struct sdp_conn *c);
void sdp_zc_release(struct sdp_conn *c);
void sdp_zc_reap(struct sdp_conn *c);
int sdp_zc_push(struct sdp_conn *c);
bool sdp_zc_busy(const struct sdp_conn *c);
bool sdp_zc_holds(const struct sdp_conn *c);
bool sdp_zc_async_room(const struct sdp_conn *c);
void sdp_zc_rules(const struct sdp_conn *c, struct sdp_zc_rules *z);
int sdp_zc_srcavail(struct sdp_conn *c, const struct sdp_bsdh *h);
void sdp_zc_rdmardcompl(struct sdp_conn *c, u32 len);
void sdp_zc_sendsm(struct sdp_conn *c);
void sdp_zc_cancelled(struct sdp_conn *c);
int sdp_zc_read_more(struct sdp_conn *c, gfp_t gfp);
void sdp_zc_wake(struct sock *sk);
void sdp_zc_new_key(struct ib_mr *mr);
bool sdp_zc_may_register(const struct sdp_conn *c);
void sdp_zc_reg_init(struct sdp_zc_reg *r, struct sdp_conn *c);
int sdp_zc_reg_post(struct sdp_conn *c, struct sdp_zc_reg *r, struct ib_mr *mr, int access);
int sdp_zc_reg_inv(struct sdp_conn *c, struct sdp_zc_reg *r, struct ib_mr *mr);
int sdp_zc_reg_reap(struct sdp_conn *c, struct sdp_zc_reg *r, bool inv);
/* zero-copy receive (sdp_zr.c) */
void sdp_zr_init(struct sdp_conn *c);
void sdp_zr_rules(const struct sdp_conn *c, struct sdp_zc_rules *z);
void sdp_zr_sinkavail(struct sdp_conn *c, const struct sdp_bsdh *h);
void sdp_zr_sinkavail_cancel(struct sdp_conn *c);
void sdp_zr_wrcompl(struct sdp_conn *c, u32 len);
void sdp_zr_crossed(struct sdp_conn *c);
int sdp_zr_push(struct sdp_conn *c);
int sdp_zr_answer(struct sdp_conn *c);
void sdp_zr_reap(struct sdp_conn *c);
void sdp_zr_revoke(struct sdp_conn *c);
void sdp_zc_rd_free(struct sdp_conn *c, struct sdp_rx_slot *slot);

#endif /* _NET_SDP_RDMA_H */
