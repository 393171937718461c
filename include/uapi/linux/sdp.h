/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Sockets Direct Protocol: the ABI shared by the sdp module and userspace.
 *
 * An SDP socket is created with socket(AF_INET_SDP, SOCK_STREAM, 0) and is
 * then used exactly like a TCP socket: it takes and returns sockaddr_in and
 * sockaddr_in6 addresses (the family of the first address given decides which
 * the socket returns) and understands the SOL_SOCKET, SOL_TCP, SOL_IP and
 * SOL_IPV6 options. SDP's own options live at level SOL_SDP.
 */
#ifndef _UAPI_LINUX_SDP_H
#define _UAPI_LINUX_SDP_H

#include <linux/types.h>
#include <linux/inet_diag.h>

/*
 * 27 is AF_IB, which the kernel never registers as a socket family; OFED's
 * SDP used the same number, so SDP-aware programs (qperf) keep working. The
 * module parameter "family" moves it if needed. A sockaddr_in whose family
 * field holds AF_INET_SDP is taken as AF_INET, as OFED did.
 */
#define AF_INET_SDP	27
#define PF_INET_SDP	AF_INET_SDP

/* Far from the kernel's SOL_* range so that it never collides. */
#define SOL_SDP		0x5344

/* getsockopt(SOL_SDP, SDP_INFO, struct sdp_info) */
#define SDP_INFO		1
/* getsockopt(SOL_SDP, SDP_FALLBACK_REASON, int): enum sdp_fallback_reason */
#define SDP_FALLBACK_REASON	2

/*
 * setsockopt/getsockopt(SOL_SDP, SDP_POLICY, struct sdp_policy + rules):
 * which connections of this socket may use RDMA. connect() walks the rules
 * with SDP_ROLE_CONNECT against the destination, listen() those with
 * SDP_ROLE_LISTEN against the bound address; the first match decides, else
 * dflt. SDP_USE_TCP makes the socket fall back (SDP_FB_POLICY). The preload
 * shim (libsdp.so) sets it from /etc/sdp.conf.
 */
#define SDP_POLICY		3
/*
 * setsockopt/getsockopt(SOL_SDP, SDP_FAMILY, int): AF_INET or AF_INET6.
 * Makes a fresh socket that family for good, as socket(AF_INET[6]) makes a
 * TCP socket: addresses and SOL_IPV6 options then get TCP's errnos instead
 * of changing the family (the shim sets it; EISCONN once bound).
 */
#define SDP_FAMILY		4
/*
 * setsockopt/getsockopt(SOL_SDP, SDP_REUSEPORT, int): SO_REUSEPORT, which
 * the sockets core accepts only for AF_INET/AF_INET6 sockets (the shim
 * turns SO_REUSEPORT into this). getsockopt(SO_REUSEPORT) reads it too.
 */
#define SDP_REUSEPORT		5
/*
 * setsockopt/getsockopt(SOL_SDP, SDP_ZCOPY_THRESH, int): a blocking send
 * offers user memory of at least this many bytes (per iovec) for the peer
 * to RDMA Read, instead of copying it; a blocking read of as many, finding
 * nothing to read, offers its buffer for the peer to RDMA Write the bytes
 * into. 0 never does. Unset: the namespace's net.sdp.zcopy_thresh.
 */
#define SDP_ZCOPY_THRESH	6
/*
 * setsockopt/getsockopt(SOL_SDP, SDP_ZEROCOPY, int): SO_ZEROCOPY, which the
 * sockets core before Linux 6.2 accepts only for AF_INET/AF_INET6 sockets
 * (the shim turns SO_ZEROCOPY into this). Then send(MSG_ZEROCOPY) returns
 * once its bytes are offered, and the error queue tells, as for TCP, when
 * their memory is the caller's again. getsockopt(SO_ZEROCOPY) reads it too.
 */
#define SDP_ZEROCOPY		7
#define SDP_POLICY_MAX_RULES	64

enum sdp_policy_use {
	SDP_USE_SDP = 1,
	SDP_USE_TCP = 2,
};

#define SDP_ROLE_LISTEN		0x1
#define SDP_ROLE_CONNECT	0x2

struct sdp_policy_rule {
	__u8	use;		/* enum sdp_policy_use */
	__u8	roles;		/* SDP_ROLE_* it applies to */
	__u8	family;		/* AF_INET, AF_INET6, or 0: any address */
	__u8	prefix;		/* leading bits of addr that must match */
	__u16	port_lo;	/* port range, host order, inclusive */
	__u16	port_hi;
	__u8	addr[16];	/* network order; IPv4 in the first 4 bytes */
};

struct sdp_policy {
	__u32	count;		/* rules that follow, at most SDP_POLICY_MAX_RULES */
	__u32	dflt;		/* enum sdp_policy_use when no rule matches */
	struct sdp_policy_rule rules[];
};

/* How a socket's bytes travel (sdp_info.transport). */
enum sdp_transport {
	SDP_TRANSPORT_NONE = 0,	/* not connected yet */
	SDP_TRANSPORT_RDMA = 1,	/* an RDMA reliable connection */
	SDP_TRANSPORT_TCP = 2,	/* the native TCP connection (fallback) */
};

/*
 * Why a socket runs over TCP instead of RDMA. Counted per network namespace
 * in /proc/net/sdp_stats (Fallback<Name>).
 */
enum sdp_fallback_reason {
	SDP_FB_NONE = 0,
	SDP_FB_POLICY,		/* net.sdp.enabled is 0 */
	SDP_FB_LOOPBACK,	/* a loopback destination: TCP is faster there */
	SDP_FB_NO_DEVICE,	/* no RDMA device for the destination */
	SDP_FB_NO_ROUTE,	/* no RDMA route to the destination */
	SDP_FB_REJECTED,	/* the peer refused: no SDP listener on that port */
	SDP_FB_TIMEOUT,		/* no answer within net.sdp.connect_timeout_ms */
	SDP_FB_VERSION,		/* the peer's Hello or HelloAck is incompatible */
	SDP_FB_CACHED,		/* this destination failed recently (negative cache) */
	SDP_FB_PEER_TCP,	/* accepted from a plain TCP client */
	SDP_FB_NO_RDMA_LISTEN,	/* a listener that could not listen over RDMA */
	SDP_FB_RESOURCES,	/* local RDMA resources failed (QP, CQ, memory) */
	SDP_FB_PORT,		/* rdma_cm's other users hold the ports TCP gave */
	SDP_FB_MAX
};

struct sdp_info {
	__u32	transport;	/* enum sdp_transport */
	__u32	state;		/* TCP_* state names, as in tcp_info */
	__u32	rcv_size;	/* bytes per receive buffer, header included */
	__u32	snd_size;	/* bytes per message to the peer, header included */
	__u32	rx_bufs;	/* receive buffers in the ring */
	__u32	tx_bufs;	/* send buffers in the ring */
	__u32	tx_credits;	/* messages the peer can take now */
	__u32	fallback_reason;	/* enum sdp_fallback_reason */
	__u64	tx_bytes;	/* payload bytes sent over RDMA */
	__u64	rx_bytes;	/* payload bytes received over RDMA */
	__u64	tx_msgs;	/* messages posted (data and control) */
	__u64	rx_msgs;	/* messages received */
	__u64	tx_credit_updates;	/* messages sent only to return credits */
	char	ibdev[64];	/* RDMA device carrying the connection */
	/* Of rx_bufs and tx_bufs, those holding memory: rings grow with use. */
	__u32	rx_bufs_held;
	__u32	tx_bufs_held;
	/* The RDMA connection: local QP number and path MTU in bytes (0 without). */
	__u32	qp_num;
	__u32	path_mtu;
	__u32	port_num;	/* the RDMA device's port */
	__u32	dest_qp_num;	/* the peer's QP number */
	__u32	rx_credits;	/* receive buffers posted: messages the peer may send */
	__u32	syn_queue;	/* a listener's children not yet established */
	/*
	 * Zero-copy (of tx_bytes and rx_bytes): bytes the peer read from our
	 * SrcAvails, bytes we read from its, and the RDMA Reads that took them
	 * (Soft-RoCE's fence reads too).
	 */
	__u32	zc_reads;
	__u64	zc_tx_bytes;
	__u64	zc_rx_bytes;
	/*
	 * Zero-copy receive (of tx_bytes and rx_bytes): bytes we RDMA Wrote
	 * into the peer's SinkAvails, and the writes; bytes it wrote into
	 * our readers' buffers.
	 */
	__u64	zw_tx_bytes;
	__u64	zw_rx_bytes;
	__u32	zw_writes;
};

/*
 * sock_diag: a NETLINK_SOCK_DIAG request of type SOCK_DIAG_BY_FAMILY with
 * NLM_F_DUMP and this header (sdiag_family: the module's family) lists the
 * SDP sockets of the caller's network namespace, one struct sdp_diag_msg
 * each, followed by the attributes sdiag_ext asked for. What identifies the
 * RDMA connection (device, port, QP numbers) needs CAP_NET_ADMIN; without
 * it those fields of sdp_info read 0, as ss hides a TCP socket's mark.
 */
struct sdp_diag_req {
	__u8	sdiag_family;		/* AF_INET_SDP */
	__u8	sdiag_protocol;		/* 0 */
	__u8	sdiag_ext;		/* 1 << (SDP_DIAG_x - 1) for each wanted */
	__u8	pad;
	__u32	sdiag_states;		/* 1 << TCP_x for each state wanted; 0: all */
	/* ports and addresses to match (network order; 0: any); cookie unused */
	struct inet_diag_sockid id;
};

struct sdp_diag_msg {
	__u8	sdiag_family;		/* AF_INET or AF_INET6: the addresses' */
	__u8	sdiag_state;		/* TCP_x */
	__u8	sdiag_transport;	/* enum sdp_transport (NONE: not yet) */
	__u8	sdiag_fallback;		/* enum sdp_fallback_reason */
	struct inet_diag_sockid id;	/* IPv4 addresses in src[0] and dst[0] */
	__u32	sdiag_rqueue;		/* unread bytes; a listener: its accept queue */
	__u32	sdiag_wqueue;		/* sent, not acknowledged; a listener: backlog */
	__u32	sdiag_uid;
	__u32	sdiag_inode;
};

/* Attributes after struct sdp_diag_msg. */
enum {
	SDP_DIAG_NONE,
	SDP_DIAG_INFO,		/* struct sdp_info */
	SDP_DIAG_SHUTDOWN,	/* __u8: RCV_SHUTDOWN 1, SEND_SHUTDOWN 2 */
	__SDP_DIAG_MAX,
};
#define SDP_DIAG_MAX	(__SDP_DIAG_MAX - 1)

#endif /* _UAPI_LINUX_SDP_H */
