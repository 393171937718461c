#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The tracepoints (events/sdp/ in tracefs) fire where they say, read back
# from the trace buffer: a connection over RDMA shows its rdma_cm events and
# both ends established over RDMA; a connect that the peer's CM
# refuses, and one that policy sends to TCP, show why they fell back and
# where to; a sender whose peer never reads shows its sends held for
# credits. (sdp_conn_error is checked by sdp_wire's hostile peer.)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

# (the events stay on: sdp_trace_on in lib.sh says why)
sdp_trace_on || { echo "# the sdp tracepoints are not in tracefs"; exit 1; }
tr=$SDP_TRACEFS
fam=$(cat /sys/module/sdp/parameters/family)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# traced COMMAND...: COMMAND, and the events it caused in $tmp/trace
traced()
{
	local rc
	echo >$tr/trace
	"$@"
	rc=$?
	grep ' sdp_' $tr/trace >"$tmp/trace"
	sed 's/^/#   /' "$tmp/trace" | head -n 40
	return $rc
}
# has COUNT REGEX: at least COUNT events match
has()
{
	local n
	n=$(grep -Ec "$2" "$tmp/trace")
	[ "$n" -ge "$1" ] || { echo "# want $1 of /$2/, found $n"; return 1; }
}

# One message from a client to a server, both SDP (or the server plain TCP).
exchange()	# PORT [tcp]
{
	local addr srv out
	addr=$(sdp_socat_addr $SDP_A "$1")
	if [ "${2:-}" = tcp ]; then
		timeout 30 socat -u TCP-LISTEN:"$1",bind=$SDP_A,reuseaddr - >"$tmp/out" &
	else
		timeout 30 socat -u "SOCKET-LISTEN:$fam:6:$addr,reuseaddr" - >"$tmp/out" &
	fi
	srv=$!
	sdp_wait_listen "$1" || return 1
	echo ping | timeout 30 socat -u - "SOCKET-CONNECT:$fam:6:$addr" || return 1
	wait $srv
	[ "$(cat "$tmp/out")" = ping ]
}

over_rdma()
{
	sdp_rdma_mark
	traced exchange 7311 || return 1
	# (the accepted end may have the client's DisConn before its own
	# established event: then it goes from SYN_RECV to CLOSE_WAIT; the
	# connecting end, whose QP is its own, hears "connect response")
	has 1 'sdp_cm_event: .* connect request status=0' &&
		has 1 'sdp_cm_event: .* connect response status=0' &&
		has 1 'sdp_cm_event: .* established status=0' &&
		has 1 'sdp_state: .* SYN_SENT -> ESTABLISHED transport=rdma' &&
		has 1 'sdp_state: .* SYN_RECV -> (ESTABLISHED|CLOSE_WAIT) ' &&
		! grep -q 'sdp_fallback:' "$tmp/trace" &&
		sdp_rdma_proven 5 1 0
}

refused_by_cm()
{
	traced exchange 7312 tcp || return 1
	has 1 'sdp_cm_event: .* rejected status=' &&
		has 1 "sdp_fallback: .* FallbackRejected addr=$SDP_A:7312\$"
}

by_policy()
{
	local rc
	sysctl -qw net.sdp.enabled=0
	traced exchange 7313
	rc=$?
	sysctl -qw net.sdp.enabled=1
	# the listener (its own address), the client (its destination), and
	# the child the listener accepted from that TCP client
	[ $rc -eq 0 ] && has 2 "sdp_fallback: .* FallbackPolicy addr=$SDP_A:7313\$" &&
		has 1 "sdp_fallback: .* FallbackPeerTcp addr=$SDP_A:[0-9]+\$"
}

# 2 MiB to a server that never reads: its ring fills, credits run out.
never_read()
{
	local addr srv
	addr=$(sdp_socat_addr $SDP_A 7314)
	# it reads only what a pipe to sleep holds, from its accept on (an
	# EXEC first would start its clock before the listen, which took 6 s
	# on the debug kernel)
	timeout 30 socat -u "SOCKET-LISTEN:$fam:6:$addr,reuseaddr" EXEC:'sleep 6' &
	srv=$!
	sdp_wait_listen 7314 || return 1
	head -c $((2 << 20)) /dev/zero | timeout 4 socat -u - "SOCKET-CONNECT:$fam:6:$addr"
	wait $srv
	return 0
}
stalled()
{
	local tx=$(sdp_stat TxBytes)
	traced never_read || return 1
	tx=$(($(sdp_stat TxBytes) - tx))
	echo "# $tx B went over RDMA before the stall"
	[ "$tx" -gt 0 ] && has 1 'sdp_state: .* -> ESTABLISHED transport=rdma' &&
		has 1 'sdp_credit_stall: .* credits=[01] unsent=[0-9]+'
}

ktap_plan 4
KTAP_CLASS=rdma
ktap_check "a connection over RDMA: its rdma_cm events, both ends ESTABLISHED over RDMA, no fallback" over_rdma
KTAP_CLASS=fallback
ktap_check "a connect refused by the peer's CM: rejected, FallbackRejected with the destination" refused_by_cm
ktap_check "policy sends a listener and a connect to TCP: FallbackPolicy and FallbackPeerTcp with the addresses" by_policy
KTAP_CLASS=rdma
ktap_check "a peer that never reads: sends held for credits" stalled
ktap_finished
