#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A kernel user of SDP (kmod/sdp_ktest.c, loaded once per case, the test
# running in its init): sockets from sock_create_kern(), options set with
# the kernel's tcp_sock_set_*() and sock_set_*() helpers on our socket,
# which write into it as a tcp_sock (KASAN on the debug kernel checks those
# writes), and honoured; kernel_sendmsg()/kernel_recvmsg() byte-exact both
# ways at once, over RDMA and over the fallback.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ko=${SDP_KTEST_KO:-}
[ -r "$ko" ] || { echo "# no sdp_ktest.ko (SDP_KTEST_KO; scripts/build makes it)"; exit $KSFT_SKIP; }
MIB=32

# sdp_ktest ARGS...: load it (the test runs), show its log, unload it.
sdp_ktest()
{
	local mark rc
	mark=$(sdp_kmsg_mark "sdp_ktest $*")
	insmod "$ko" "$@"
	rc=$?
	grep -q '^sdp_ktest ' /proc/modules && rmmod sdp_ktest
	sdp_kmsg_since "$mark" | grep 'sdp_ktest:' | sed 's/^/#   /'
	return $rc
}

stream_rdma()
{
	sdp_rdma_mark
	sdp_ktest test=stream mib=$MIB || return 1
	sdp_rdma_proven $((2 * MIB << 20)) 1
}

pages_rdma()
{
	sdp_rdma_mark
	sdp_ktest test=pages mib=$MIB || return 1
	sdp_rdma_proven $((2 * MIB << 20)) 1
}

# over_fallback N ARGS...: the case with net.sdp.enabled=0, where the
# listener serves TCP only and N sockets fall back by policy: no byte over RDMA
over_fallback()
{
	local n=$1 fb=$(sdp_stat FallbackPolicy) tx=$(sdp_stat TxBytes) rc=0
	shift
	sysctl -qw net.sdp.enabled=0
	sdp_ktest "$@" || rc=1
	sysctl -qw net.sdp.enabled=1
	[ $rc -eq 0 ] || return 1
	[ "$(sdp_stat FallbackPolicy)" -ge $((fb + n)) ] && [ "$(sdp_stat TxBytes)" -eq "$tx" ] ||
		{ echo "# FallbackPolicy $fb -> $(sdp_stat FallbackPolicy), TxBytes $tx -> $(sdp_stat TxBytes)"; return 1; }
	echo "# PROOF fallback reason Policy, no byte over RDMA"
}

stream_fallback() { over_fallback 1 test=stream mib=$MIB; }

# The reader runs from sk_data_ready, the writer from sk_write_space.
driven_rdma()
{
	sdp_rdma_mark
	sdp_ktest test=driven mib=$MIB || return 1
	sdp_rdma_proven $((MIB << 20)) 1
}

# The same over the fallback: the hooks on the SDP socket, called after TCP's
driven_fallback() { over_fallback 1 test=driven mib=$MIB; }

shutdown_both()
{
	local tx=$(sdp_stat TxBytes)

	sdp_ktest test=shutdown || return 1
	tx=$(($(sdp_stat TxBytes) - tx))
	[ "$tx" -ge $((8 << 20)) ] || { echo "# only $tx B over RDMA"; return 1; }
	echo "# PROOF rdma $tx B sent over RDMA before the shutdown"
}

cork()
{
	sdp_rdma_mark
	sdp_ktest test=cork || return 1
	# (a try the host slowed past 150 ms sends its 6 bytes again)
	sdp_rdma_proven 6 1 12
}

# keepidle 1 s, keepintvl 1 s through the helpers, 3.5 s idle: probes
# (each end's idle time restarts with the other's probe), where the
# native socket's two hours would send none.
keepalive()
{
	local probes=$(sdp_stat KeepaliveProbes) n

	sdp_rdma_mark
	sdp_ktest test=keepalive || return 1
	n=$(($(sdp_stat KeepaliveProbes) - probes))
	echo "# $n keepalive probes"
	[ "$n" -ge 2 ] || return 1
	sdp_rdma_proven 0 1 0
}

accept_hook()
{
	sdp_rdma_mark
	sdp_ktest test=accept || return 1
	sdp_rdma_proven 0 1 0
}

# TCP clients of a kernel listener that serves TCP only: the hooks as well
accept_hook_fallback() { over_fallback 2 test=accept; }

KTAP_CLASS=
ktap_plan 10
ktap_check "kernel stream, ${MIB} MiB each way, helpers set: byte-exact over RDMA" stream_rdma
ktap_check "kernel stream, one way as pages (sendpage / MSG_SPLICE_PAGES): byte-exact over RDMA" pages_rdma
ktap_check "kernel stream over the fallback (net.sdp.enabled=0): byte-exact" stream_fallback
ktap_check "kernel stream driven by sk_data_ready and sk_write_space, MSG_DONTWAIT: byte-exact over RDMA" driven_rdma
ktap_check "the same driven stream over the fallback (net.sdp.enabled=0): byte-exact, hooks called" driven_fallback
ktap_check "kernel_sock_shutdown() of both ends under two senders: they return, nothing hangs" shutdown_both
ktap_check "tcp_sock_set_cork() holds a write, uncorking sends it" cork
ktap_check "keepalive set with tcp_sock_set_keepidle/keepintvl probes an idle connection" keepalive
ktap_check "a listener's sk_state_change, sk_data_ready and sk_user_data: called, and its children's (DRBD's accept)" accept_hook
ktap_check "the same for TCP clients of a listener on the fallback" accept_hook_fallback
ktap_finished
