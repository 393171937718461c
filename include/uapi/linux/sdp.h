/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Sockets Direct Protocol: the ABI shared by the sdp module and userspace.
 *
 * An SDP socket is created with socket(AF_INET_SDP, SOCK_STREAM, 0) and is
 * then used exactly like a TCP socket: it takes and returns sockaddr_in and
 * sockaddr_in6 addresses and understands the SOL_SOCKET and SOL_TCP options.
 */
#ifndef _UAPI_LINUX_SDP_H
#define _UAPI_LINUX_SDP_H

/*
 * 27 is AF_IB, which the kernel never registers as a socket family; OFED's
 * SDP used the same number, so SDP-aware programs (qperf) keep working. The
 * module parameter "family" moves it if needed.
 */
#define AF_INET_SDP	27
#define PF_INET_SDP	AF_INET_SDP

#endif /* _UAPI_LINUX_SDP_H */
