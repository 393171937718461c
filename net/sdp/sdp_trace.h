/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol: tracepoints (events/sdp/ in tracefs), so that
 * perf and bpftrace can follow a connection: its states, why it fell back,
 * the rdma_cm events it saw, why it was reset, and sends held for credits.
 * A socket is named by its address (skaddr), as TCP's tracepoints do.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sdp

#if !defined(_SDP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SDP_TRACE_H

#include <linux/in6.h>
#include <linux/socket.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <net/tcp_states.h>

#define sdp_show_state(s)						\
	__print_symbolic(s,						\
		{ TCP_ESTABLISHED, "ESTABLISHED" },			\
		{ TCP_SYN_SENT, "SYN_SENT" },				\
		{ TCP_SYN_RECV, "SYN_RECV" },				\
		{ TCP_FIN_WAIT1, "FIN_WAIT1" },				\
		{ TCP_FIN_WAIT2, "FIN_WAIT2" },				\
		{ TCP_TIME_WAIT, "TIME_WAIT" },				\
		{ TCP_CLOSE, "CLOSE" },					\
		{ TCP_CLOSE_WAIT, "CLOSE_WAIT" },			\
		{ TCP_LAST_ACK, "LAST_ACK" },				\
		{ TCP_LISTEN, "LISTEN" },				\
		{ TCP_CLOSING, "CLOSING" })

TRACE_EVENT(sdp_state,
	TP_PROTO(const void *sk, int oldstate, int newstate, u32 transport),
	TP_ARGS(sk, oldstate, newstate, transport),
	TP_STRUCT__entry(
		__field(const void *, skaddr)
		__field(int, oldstate)
		__field(int, newstate)
		__field(u32, transport)
	),
	TP_fast_assign(
		__entry->skaddr = sk;
		__entry->oldstate = oldstate;
		__entry->newstate = newstate;
		__entry->transport = transport;
	),
	TP_printk("skaddr=%p %s -> %s transport=%s", __entry->skaddr,
		  sdp_show_state(__entry->oldstate), sdp_show_state(__entry->newstate),
		  __print_symbolic(__entry->transport, { 0, "none" }, { 1, "rdma" },
				   { 2, "tcp" }))
);

/*
 * @why: the counter's name in /proc/net/sdp_stats (Fallback<Reason>);
 * @addr: the destination, an accepted client's address, or a listener's own.
 */
TRACE_EVENT(sdp_fallback,
	TP_PROTO(const void *sk, const char *why, const void *addr, size_t alen),
	TP_ARGS(sk, why, addr, alen),
	TP_STRUCT__entry(
		__field(const void *, skaddr)
		__array(char, why, 24)
		__array(u8, addr, sizeof(struct sockaddr_in6))
	),
	TP_fast_assign(
		__entry->skaddr = sk;
		strscpy(__entry->why, why, sizeof(__entry->why));
		memset(__entry->addr, 0, sizeof(__entry->addr));
		memcpy(__entry->addr, addr, min(alen, sizeof(__entry->addr)));
	),
	TP_printk("skaddr=%p %s addr=%pISpc", __entry->skaddr, __entry->why,
		  __entry->addr)
);

/* An rdma_cm event on the socket's id (@status: the event's). */
TRACE_EVENT(sdp_cm_event,
	TP_PROTO(const void *sk, const char *event, int status),
	TP_ARGS(sk, event, status),
	TP_STRUCT__entry(
		__field(const void *, skaddr)
		__array(char, event, 32)
		__field(int, status)
	),
	TP_fast_assign(
		__entry->skaddr = sk;
		strscpy(__entry->event, event, sizeof(__entry->event));
		__entry->status = status;
	),
	TP_printk("skaddr=%p %s status=%d", __entry->skaddr, __entry->event,
		  __entry->status)
);

/* The connection is reset for @why (a counter's name), with errno @err. */
TRACE_EVENT(sdp_conn_error,
	TP_PROTO(const void *sk, const char *why, int err),
	TP_ARGS(sk, why, err),
	TP_STRUCT__entry(
		__field(const void *, skaddr)
		__array(char, why, 24)
		__field(int, err)
	),
	TP_fast_assign(
		__entry->skaddr = sk;
		strscpy(__entry->why, why, sizeof(__entry->why));
		__entry->err = err;
	),
	TP_printk("skaddr=%p %s err=%d", __entry->skaddr, __entry->why,
		  __entry->err)
);

/* Data waits to be sent: the peer has no buffer for it (@credits left). */
TRACE_EVENT(sdp_credit_stall,
	TP_PROTO(const void *sk, int credits, u32 unsent),
	TP_ARGS(sk, credits, unsent),
	TP_STRUCT__entry(
		__field(const void *, skaddr)
		__field(int, credits)
		__field(u32, unsent)
	),
	TP_fast_assign(
		__entry->skaddr = sk;
		__entry->credits = credits;
		__entry->unsent = unsent;
	),
	TP_printk("skaddr=%p credits=%d unsent=%u", __entry->skaddr,
		  __entry->credits, __entry->unsent)
);

#endif /* _SDP_TRACE_H */

/* An out-of-tree module's trace header is found next to its sources. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sdp_trace
#include <trace/define_trace.h>
