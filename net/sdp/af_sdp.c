// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: the address family.
 *
 * SDP sockets look like TCP sockets to their users but move their bytes over
 * RDMA reliable connections.
 */
#define pr_fmt(fmt) "sdp: " fmt

#include <linux/module.h>
#include <linux/net.h>
#include <linux/in.h>
#include <net/sock.h>
#include <linux/sdp.h>

#include "sdp.h"

static int family = AF_INET_SDP;
module_param(family, int, 0444);
MODULE_PARM_DESC(family, "socket address family number to register (default 27, AF_INET_SDP)");

static struct proto sdp_proto = {
	.name		= "SDP",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct sdp_sock),
};

static int sdp_release(struct socket *sock)
{
	struct sock *sk = sock->sk;

	if (!sk)
		return 0;
	sock_orphan(sk);
	sock->sk = NULL;
	sock_put(sk);
	return 0;
}

static const struct proto_ops sdp_proto_ops = {
	.family		= PF_INET_SDP,
	.owner		= THIS_MODULE,
	.release	= sdp_release,
	.bind		= sock_no_bind,
	.connect	= sock_no_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= sock_no_accept,
	.getname	= sock_no_getname,
	.poll		= datagram_poll,
	.ioctl		= sock_no_ioctl,
	.listen		= sock_no_listen,
	.shutdown	= sock_no_shutdown,
	.sendmsg	= sock_no_sendmsg,
	.recvmsg	= sock_no_recvmsg,
	.mmap		= sock_no_mmap,
	.sendpage	= sock_no_sendpage,
};

/* Stream sockets only, with the protocol TCP would take for them. */
static int sdp_create(struct net *net, struct socket *sock, int protocol, int kern)
{
	struct sock *sk;

	if (sock->type != SOCK_STREAM)
		return -ESOCKTNOSUPPORT;
	if (protocol < 0 || protocol >= IPPROTO_MAX)
		return -EINVAL;
	if (protocol != IPPROTO_IP && protocol != IPPROTO_TCP)
		return -EPROTONOSUPPORT;

	sk = sk_alloc(net, family, GFP_KERNEL, &sdp_proto, kern);
	if (!sk)
		return -ENOMEM;
	sock_init_data(sock, sk);
	sk->sk_protocol = IPPROTO_TCP;
	sock->state = SS_UNCONNECTED;
	sock->ops = &sdp_proto_ops;
	return 0;
}

static struct net_proto_family sdp_family_ops = {
	.create	= sdp_create,
	.owner	= THIS_MODULE,
};

static int __init sdp_init(void)
{
	int err;

	if (family <= 0 || family >= NPROTO) {
		pr_err("family=%d is out of range (1..%d)\n", family, NPROTO - 1);
		return -EINVAL;
	}
	err = proto_register(&sdp_proto, 1);
	if (err)
		return err;
	sdp_family_ops.family = family;
	err = sock_register(&sdp_family_ops);
	if (err) {
		pr_err("cannot register address family %d (%d): %s\n", family, err,
		       err == -EEXIST ? "another module holds it, load with family=N" : "error");
		proto_unregister(&sdp_proto);
		return err;
	}
	pr_info("registered address family %d\n", family);
	return 0;
}

static void __exit sdp_exit(void)
{
	sock_unregister(family);
	proto_unregister(&sdp_proto);
}

module_init(sdp_init);
module_exit(sdp_exit);

MODULE_DESCRIPTION("Sockets Direct Protocol: TCP stream sockets over RDMA");
MODULE_LICENSE("GPL");
MODULE_ALIAS_NETPROTO(AF_INET_SDP);
