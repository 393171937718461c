/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SDP_ZC_NOTE_H
#define SDP_ZC_NOTE_H

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/errqueue.h>

/*
 * The next MSG_ZEROCOPY notification on @fd's error queue, as TCP gives
 * it (sdp_bench and the selftests read it so): 0 with *@e filled, -EAGAIN
 * when none waits, -errno when recvmsg() fails, -EPROTO for anything but
 * an IP_RECVERR or IPV6_RECVERR of origin SO_EE_ORIGIN_ZEROCOPY, no error.
 */
static inline int sdp_zc_note(int fd, struct sock_extended_err *e)
{
	char cbuf[CMSG_SPACE(sizeof(*e) + 64)];
	struct msghdr m = { .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
		return -errno;
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || !((cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
		     (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR)))
		return -EPROTO;
	memcpy(e, CMSG_DATA(cm), sizeof(*e));
	if (e->ee_origin != SO_EE_ORIGIN_ZEROCOPY || e->ee_errno)
		return -EPROTO;
	return 0;
}

#endif
