#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SDP between two hosts joined by a real wire (scripts/wire: two VMs, a
# virtio NIC each, Soft-RoCE on both). Checked transfers both ways at once
# (sdp_xfer) over RDMA, over TCP (the oracle) and over the fallback, then
# the faults a wire has: the link down and up, loss and reordering, and the
# peer host going silent or losing power. Over RDMA, the proof that the
# bytes crossed the wire is the devices' own counters on both hosts: every
# packet this host's RDMA device sent, the peer's received, and the NICs
# carried them.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ -n "${SDP_PEER:-}" ] || { echo "# no peer host (run under scripts/wire)"; exit $KSFT_SKIP; }
xfer=$here/sdp_xfer
tmp=$(mktemp -d)
trap 'tc qdisc del dev eth0 root 2>/dev/null; tc qdisc del dev eth0 ingress 2>/dev/null; ip link set eth0 up; rm -rf "$tmp"' EXIT
port=7400

ctr() { cat "/sys/class/infiniband/rxe0/ports/1/hw_counters/$1"; }
nic() { cat "/sys/class/net/eth0/statistics/$1"; }
peer_ctr() { sdp_peer "cat /sys/class/infiniband/rxe0/ports/1/hw_counters/$1"; }
peer_stat() { sdp_peer "sdp_stat $1"; }

# Counters on both hosts before a transfer.
wire_mark()
{
	w_tx=$(sdp_stat TxBytes) w_rx=$(sdp_stat RxBytes) w_msgs=$(sdp_stat TxMsgs)
	w_sent=$(ctr sent_pkts) w_nic=$(nic tx_packets)
	w_peer_rcvd=$(peer_ctr rcvd_pkts) w_peer_msgs=$(peer_stat TxMsgs)
	w_peer_sent=$(peer_ctr sent_pkts) w_rcvd=$(ctr rcvd_pkts)
}

# After a transfer of PAYLOAD bytes each way on CONNS connections: SDP
# counted them over RDMA on this host; this device sent the packets those
# messages make (ours, plus one ack per message of the peer's, plus the
# CM's few per connection) and they left through this NIC; the peer's
# device received at least the packets our data needs: the PROOF line.
# LOSSY: the wire drops packets (netem, or the UDP link under load), and
# a device resends from the lost one on: no upper bound on what it sent.
wire_proven()	# PAYLOAD CONNS [lossy]
{
	local payload=$1 conns=$2 lossy=${3:-} tx rx msgs sent rcvd nic_tx peer_rcvd
	local peer_sent peer_msgs mtu need lo hi try
	mtu=$(ibv_devinfo -d rxe0 | awk '/active_mtu/ { print $2; exit }')
	for try in $(seq 20); do
		[ "$try" = 1 ] || sleep 0.5
		tx=$(($(sdp_stat TxBytes) - w_tx)) rx=$(($(sdp_stat RxBytes) - w_rx))
		msgs=$(($(sdp_stat TxMsgs) - w_msgs))
		sent=$(($(ctr sent_pkts) - w_sent)) rcvd=$(($(ctr rcvd_pkts) - w_rcvd))
		nic_tx=$(($(nic tx_packets) - w_nic))
		peer_rcvd=$(($(peer_ctr rcvd_pkts) - w_peer_rcvd))
		peer_sent=$(($(peer_ctr sent_pkts) - w_peer_sent))
		peer_msgs=$(($(peer_stat TxMsgs) - w_peer_msgs))
		sdp_pkt_bounds "$tx" "$msgs" "$mtu"
		need=$pk_need lo=$((pk_need + peer_msgs)) hi=$((pk_most + peer_msgs + 10 * conns))
		[ -z "$lossy" ] || hi=$((sent + 1))
		[ "$tx" -ge $((conns * payload)) ] && [ "$tx" -le $((conns * (payload + 64))) ] &&
			[ "$rx" -eq $((conns * payload)) ] &&
			[ "$sent" -ge "$lo" ] && [ "$sent" -le "$hi" ] && [ "$nic_tx" -ge "$sent" ] &&
			[ "$peer_rcvd" -ge "$need" ] && [ "$peer_rcvd" -le "$sent" ] || continue
		echo "# PROOF rdma over the wire: $tx B out, $rx B in; rxe0 sent $sent pkts ($lo..${lossy:-$hi}), the peer's received $peer_rcvd (>= $need); eth0 sent $nic_tx"
		return 0
	done
	echo "# not proven: $tx B out, $rx B in, $msgs msgs; rxe0 sent $sent ($lo..$hi) rcvd $rcvd; peer rcvd $peer_rcvd (>= $need) sent $peer_sent; eth0 $nic_tx"
	return 1
}

# sdp_xfer server ARGS on the peer's PORT, in the background (its output and
# status in /tmp/xfer.PORT[.rc] there), once it listens.
peer_server()	# ARGS PORT
{
	sdp_peer "(timeout 200 selftests/sdp/sdp_xfer server $1 $2 >/tmp/xfer.$2 2>&1 </dev/null
		echo \$? >/tmp/xfer.$2.rc) </dev/null >/dev/null 2>&1 &
		for _ in \$(seq 100); do grep -q listening /tmp/xfer.$2 && break; sleep 0.1; done" >/dev/null
}

# What a program that should have ended waits on: its threads, the QPs.
stuck_state()
{
	local p t
	for p in $(pgrep sdp_xfer); do
		for t in /proc/$p/task/*; do echo "thread ${t##*/}: $(cat "$t/wchan")"; done
	done
	rdma res show qp | grep -v GSI
	echo "rxe0: $(rdma statistic show link rxe0/1 | tr ' ' '\n' | paste -sd' ' | sed 's/link rxe0\/1 //')"
}

# Waits SECONDS at most for PID; then says where it waits, and kills it.
wait_or_kill()	# PID SECONDS
{
	local _
	for _ in $(seq "$2"); do kill -0 "$1" 2>/dev/null || break; sleep 1; done
	if kill -0 "$1" 2>/dev/null; then
		stuck_state | sed 's/^/#   stuck: /'
		sdp_peer "$(declare -f stuck_state); stuck_state" | sed 's/^/#   peer then: /'
		kill -KILL "$1"
	fi
	wait "$1"
}

# A checked transfer: the peer serves CONNS connections on PORT, we run the
# client; both must report every connection intact. Extra args go to our
# client; SERVER_ARGS to the peer's server.
xfer_both()	# PORT CONNS BYTES [CLIENT_ARG...]
{
	local p=$1 n=$2 b=$3
	shift 3
	peer_server "${SERVER_ARGS:-} -n $n" "$p"
	"$xfer" client "$@" -n "$n" -b "$b" "$SDP_PEER" "$p" >"$tmp/client.$p" 2>&1 &
	wait_or_kill $! 150
	c_rc=$?
	# the server ends soon after the client: or say where it waits
	sdp_peer "$(declare -f stuck_state)
		timeout 60 bash -c 'while [ ! -e /tmp/xfer.$p.rc ]; do sleep 1; done' ||
			stuck_state | sed 's/^/server stuck: /'
		cat /tmp/xfer.$p" >"$tmp/server.$p"
	sed 's/^/#   here: /' "$tmp/client.$p"
	sed 's/^/#   peer: /' "$tmp/server.$p"
	[ $c_rc -eq 0 ] && [ "$(grep -c ' ok ' "$tmp/client.$p")" -eq "$n" ] &&
		[ "$(grep -c ' ok ' "$tmp/server.$p")" -eq "$n" ]
}

# Every connection of the last transfer on PORT ran over TRANSPORT at both ends.
all_on()	# PORT TRANSPORT
{
	! grep -v "transport $2 " "$tmp/client.$1" | grep -q '^conn' &&
		! grep -v "transport $2 " "$tmp/server.$1" | grep -q '^conn'
}

# Two one-vCPU emulated hosts: while one is busy (a transfer tearing down),
# an RDMA connect can take more than the default second, and a connect
# that times out falls back to TCP, by design.
sysctl -qw net.sdp.connect_timeout_ms=5000
sdp_peer 'sysctl -qw net.sdp.connect_timeout_ms=5000'

ktap_plan 10

# 1. RDMA across the wire: 8 connections, 2 MiB each way each.
port=$((port + 1))
wire_mark
rdma_xfer() { xfer_both $port 8 $((2 << 20)) && all_on $port 1 && wire_proven $((2 << 20)) 8 lossy; }
ktap_check "8 connections, 2 MiB each way at once, intact, over RDMA across the wire" rdma_xfer

# 2. The oracle: the same over TCP.
port=$((port + 1))
tcp_xfer() { SERVER_ARGS=-t xfer_both $port 8 $((2 << 20)) -t && echo "# PROOF tcp"; }
ktap_check "the same over TCP (the oracle), intact" tcp_xfer

# 3. IP_TOS on the client: every RoCE packet of its connections leaves with
# that class in the IP header, both ways (the peer's queue pair takes it
# from the connect request). Counted where the packets arrive, by two tc
# filters on each host's NIC: RoCE (UDP 4791) with TOS 0x28, and RoCE
# without it (the CM's few packets each way).
tos_filters()
{
	tc qdisc add dev eth0 ingress &&
	tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 match ip tos 0x28 0xfc \
		match ip protocol 17 0xff match ip dport 4791 0xffff action pass &&
	tc filter add dev eth0 parent ffff: protocol ip prio 2 u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff action pass
}
# packets matched by filter PRIO so far
tos_count() { tc -s filter show dev eth0 ingress prio "$1" | awk '/Sent/ { print $4; exit }'; }
port=$((port + 1))
tos_xfer()
{
	local here_tos here_other peer_tos peer_other
	tos_filters && sdp_peer "$(declare -f tos_filters); tos_filters" || return 1
	wire_mark
	xfer_both $port 2 $((1 << 20)) -Q 0x28 && all_on $port 1 && wire_proven $((1 << 20)) 2 lossy || return 1
	here_tos=$(tos_count 1) here_other=$(tos_count 2)
	peer_tos=$(sdp_peer "$(declare -f tos_count); tos_count 1")
	peer_other=$(sdp_peer "$(declare -f tos_count); tos_count 2")
	tc qdisc del dev eth0 ingress
	sdp_peer 'tc qdisc del dev eth0 ingress'
	echo "# RoCE packets with TOS 0x28 / without: the peer received $peer_tos / $peer_other, this host $here_tos / $here_other"
	[ "$peer_tos" -ge "$pk_need" ] && [ "$here_tos" -ge "$pk_need" ] &&
		[ "$peer_other" -le 20 ] && [ "$here_other" -le 20 ]
}
ktap_check "IP_TOS 0x28 before connect: RDMA packets carry it across the wire, both ways" tos_xfer

# 4. Fallback: the peer's SDP is disabled, so its listener serves TCP only;
# our connects are refused over RDMA and fall back.
port=$((port + 1))
sdp_peer 'echo 0 >/proc/sys/net/sdp/enabled'
rejected=$(sdp_stat FallbackRejected) cached=$(sdp_stat FallbackCached)
# the first is refused, the others find the destination in the negative cache
fb_xfer() { xfer_both $port 4 $((1 << 20)) && all_on $port 2 &&
	    [ "$(sdp_stat FallbackRejected)" -eq $((rejected + 1)) ] &&
	    [ "$(sdp_stat FallbackCached)" -eq $((cached + 3)) ] &&
	    echo "# PROOF fallback reasons Rejected, Cached x3"; }
ktap_check "a peer whose SDP is off: 4 connections fall back to TCP, intact" fb_xfer
sdp_peer 'echo 1 >/proc/sys/net/sdp/enabled'

# 5. The link goes down for 3 s in the middle of a transfer: each connection
# completes intact or ends with an error (its QP failed, or its sends stalled
# until the 60 s bound), no hang; then RDMA works again. TCP comes through
# such a cut intact (case 6); Soft-RoCE's RC QPs often do not: on 6.1 one
# stopped retrying after two retries (TxTimeout), on 6.12 the peer's used up
# its retries although the link was back (QpError).
# Soft-RoCE (6.1 and 6.12) can lose the flapped host's CM: a CM message sent
# while the link is down fails, rxe puts QP1 in error, ib_mad moves it back
# to RTS, and 6.1's rxe leaves its receive side in error (rxe_qp_from_attr
# resets only the send side), so no CM reply ever arrives again: SDP's
# connects time out, and so do rping's. Only then (rping must fail too, or
# the fault is ours) the device is recreated, as an administrator would,
# and SDP must run over RDMA on the new one.
rping_ok()
{
	sdp_peer "(timeout 20 rping -s -a $SDP_PEER -C 2 >/dev/null 2>&1 </dev/null &); sleep 1" >/dev/null
	timeout 15 rping -c -a "$SDP_PEER" -C 2 >/dev/null 2>&1
}
rdma_again()	# PORT
{
	wire_mark
	xfer_both "$1" 2 $((1 << 20)) && all_on "$1" 1 && wire_proven $((1 << 20)) 2 lossy
}
# Bytes this host sent: SDP's over RDMA, or the NIC's (TCP).
sent_rdma() { sdp_stat TxBytes; }
sent_nic() { nic tx_bytes; }

# In the background: eth0 down for 3 s once SENT grew by 4 MiB (a fixed
# delay met the connects), and what it had grown by at the cut in
# $tmp/cut.
flap_mid()	# SENT
{
	local from
	from=$($1)
	( for _ in $(seq 600); do
		[ $(($($1) - from)) -lt $((4 << 20)) ] || break
		sleep 0.1
	  done
	  ip link set eth0 down
	  echo $(($($1) - from)) >"$tmp/cut"
	  sleep 3; ip link set eth0 up ) &
	flap=$!
}

# The cut came mid-transfer: after 4 MiB, before 2 connections sent 32 MiB.
cut_mid()
{
	cut=$(cat "$tmp/cut")
	[ "$cut" -ge $((4 << 20)) ] && [ "$cut" -lt $((64 << 20)) ] && return 0
	echo "# the link went down after $cut B out, not mid-transfer"
	return 1
}

# What rxe0 counted on HOST (here or the peer) about retries and errors.
rxe_errors()
{
	local c
	for c in retry_exceeded_err completer_retry_err rcvd_seq_err send_err link_downed; do
		echo -n " $c $(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/$c)"
	done
	echo
}

# The flapped transfer copies (zcopy_thresh 0 on both hosts): Soft-RoCE
# cannot serve an RDMA Read across a flap. A read response it failed to
# send (the GID went with the link) stays half-served, the read's retry is
# answered from there, and the reader's rxe WARNs and completes the read as
# a success with its bytes never written (rxe_comp.c, COMPST_ERROR; seen
# as a corrupt stream here). quirks.read_fence keeps such a read out of
# the stream; the WARN is rxe's own. The client's TCP_USER_TIMEOUT (8 s,
# sdp_xfer -K) ends a connection the flap broke, as it would TCP's, sooner
# than the 60 s an unset one waits.
flap_ok()
{
	local ttl zc
	port=$((port + 1))
	zc=$(sysctl -n net.sdp.zcopy_thresh)
	sysctl -qw net.sdp.zcopy_thresh=0
	sdp_peer 'sysctl -qw net.sdp.zcopy_thresh=0'
	flap_mid sent_rdma
	t0=$(date +%s)
	xfer_both $port 2 $((32 << 20)) -K
	wait $flap
	sysctl -qw net.sdp.zcopy_thresh="$zc"
	sdp_peer "sysctl -qw net.sdp.zcopy_thresh=$zc"
	elapsed=$(($(date +%s) - t0))
	cut_mid || return 1
	# no connection hung, and none lost or mangled a byte unnoticed
	[ "$elapsed" -lt 150 ] && ! grep -q 'bad-at [0-9]' "$tmp/client.$port" "$tmp/server.$port" || {
		echo "# after ${elapsed}s: a hang or a corrupt stream"; return 1; }
	echo "# down after $cut B out; after ${elapsed}s: $(grep -c ' ok ' "$tmp/client.$port") of 2 intact, the rest ended with an error; QpError $(sdp_stat QpError), TxTimeout $(sdp_stat TxTimeout)"
	echo "# rxe0 here:$(rxe_errors); the peer's:$(sdp_peer "$(declare -f rxe_errors); rxe_errors")"
	# a connect that times out must not send the next ones to TCP
	ttl=$(sysctl -n net.sdp.negative_cache_ttl)
	sysctl -qw net.sdp.negative_cache_ttl=0
	port=$((port + 1))
	sleep 2
	if rdma_again $port; then
		sysctl -qw net.sdp.negative_cache_ttl="$ttl"
		return 0
	fi
	if rping_ok; then
		echo "# RDMA gone after the flap, yet rping connects: the fault is SDP's"
		sysctl -qw net.sdp.negative_cache_ttl="$ttl"
		return 1
	fi
	echo "# rping fails too: this host's QP1 is deaf (Soft-RoCE); rxe0 recreated"
	rdma link delete rxe0 && rdma link add rxe0 type rxe netdev eth0
	sleep 2
	port=$((port + 1))
	rdma_again $port
	local rc=$?
	sysctl -qw net.sdp.negative_cache_ttl="$ttl"
	return $rc
}
ktap_check "link down 3 s mid-transfer: intact or a clean error, no hang; RDMA again after" flap_ok

# 6. The oracle: TCP's connections ride out the same cut intact.
tcp_flap()
{
	port=$((port + 1))
	flap_mid sent_nic
	SERVER_ARGS=-t xfer_both $port 2 $((32 << 20)) -t
	local rc=$?
	wait $flap
	cut_mid && [ $rc -eq 0 ] && echo "# down after $cut B out; both intact"
}
KTAP_CLASS=tcp
ktap_check "the same cut over TCP (the oracle): both connections intact" tcp_flap
KTAP_CLASS=

# 7. Loss and reordering on both NICs: RDMA's retransmissions keep every byte.
# A lost CM message is sent again only after the CM's response timeout
# (rdma_cm's, about 4.3 s for RoCE): the connects get 30 s, or one loss in
# the handshake falls back to TCP (by design; CI saw it, reason TIMEOUT).
port=$((port + 1))
tc qdisc add dev eth0 root netem loss 1% delay 1ms reorder 10% 50%
sdp_peer 'tc qdisc add dev eth0 root netem loss 1% delay 1ms reorder 10% 50%'
sysctl -qw net.sdp.connect_timeout_ms=30000
sdp_peer 'sysctl -qw net.sdp.connect_timeout_ms=30000'
wire_mark
# Writes of up to 256 KiB: zero-copy's SrcAvails are read both ways, and
# their registrations live through the retransmissions (Soft-RoCE ran a
# registration again on a retry: "rxe_reg_fast_mr: ... not free").
lossy_xfer()
{
	local here0 peer0 here1 peer1
	here0=$(sdp_stat ZcopyRxBytes) peer0=$(sdp_peer 'sdp_stat ZcopyRxBytes')
	xfer_both $port 2 $((2 << 20)) && all_on $port 1 && wire_proven $((2 << 20)) 2 lossy || return 1
	here1=$(sdp_stat ZcopyRxBytes) peer1=$(sdp_peer 'sdp_stat ZcopyRxBytes')
	echo "# PROOF zero-copy under loss: $((here1 - here0)) B read here, $((peer1 - peer0)) B by the peer"
	[ $((here1 - here0)) -gt 0 ] && [ $((peer1 - peer0)) -gt 0 ]
}
ktap_check "1% loss and reordering both ways: 2 connections intact over RDMA, zero-copy both ways" lossy_xfer
tc qdisc del dev eth0 root
sdp_peer 'tc qdisc del dev eth0 root'
sysctl -qw net.sdp.connect_timeout_ms=5000
sdp_peer 'sysctl -qw net.sdp.connect_timeout_ms=5000'

# 8 and 10. The peer goes away mid-transfer, with no goodbye: our sockets
# end with ETIMEDOUT when their TCP_USER_TIMEOUT (8 s, sdp_xfer -K) runs
# out with sends uncompleted, as TCP's would (TxTimeout counts them; the
# RC retries alone take ~30 s), and nothing hangs. GONE is what makes it
# go: the fault, then the time it started, on stdout.
gone_at=0
peer_gone()	# GONE
{
	local rc t0 elapsed timeouts
	port=$((port + 1))
	timeouts=$(sdp_stat TxTimeout)
	peer_server "-n 2" $port
	"$xfer" client -K -n 2 -b $((512 << 20)) "$SDP_PEER" $port >"$tmp/client.gone" 2>&1 &
	client=$!
	sleep 3
	t0=$("$1")
	gone_at=$t0
	wait_or_kill $client 90
	rc=$?
	elapsed=$(($(date +%s) - t0))
	sed 's/^/#   here: /' "$tmp/client.gone"
	timeouts=$(($(sdp_stat TxTimeout) - timeouts))
	# before 7 s it failed before the peer went, or not by the timeout
	if [ $rc -ne 0 ] && [ $rc -ne 137 ] && [ "$elapsed" -ge 7 ] && [ "$elapsed" -lt 60 ] &&
		[ "$(grep -c 'FAIL.*transport 1' "$tmp/client.gone")" -eq 2 ] &&
		[ "$timeouts" -eq 2 ]; then
		echo "# PROOF rdma over the wire, both connections: ETIMEDOUT ${elapsed}s after the peer went, TxTimeout +$timeouts"
		return 0
	fi
	echo "# rc $rc after ${elapsed}s; TxTimeout +$timeouts, rxe0 retry_exceeded_err $(ctr retry_exceeded_err), QpError $(sdp_stat QpError), KeepaliveProbes $(sdp_stat KeepaliveProbes)"
	return 1
}

# A hung host: the peer drops every packet it would send for 28 s (our
# sockets timed out after 11 to 18 s in CI's runs), then answers again.
go_silent()
{
	# the agent's answer may be caught in the silence: not waited for
	sdp_peer '(sleep 1; tc qdisc add dev eth0 root netem loss 100%; sleep 28; tc qdisc del dev eth0 root) </dev/null >/dev/null 2>&1 &' >/dev/null 2>&1 &
	echo $(($(date +%s) + 1))
}
ktap_check "the peer goes silent mid-transfer: our RDMA sockets time out (TCP_USER_TIMEOUT 8 s)" peer_gone go_silent
left=$((gone_at + 31 - $(date +%s)))
[ $left -le 0 ] || sleep $left
sdp_peer 'for _ in $(seq 100); do [ -e /tmp/xfer.'$port'.rc ] && break; sleep 0.5; done' >/dev/null

# 9. The peer's kernel log stayed clean until now (before its power goes).
KTAP_CLASS=local
peer_log_clean() { sdp_peer 'if sdp_splat_since "$(cat /run/wire-mark)"; then false; fi' | sed 's/^/#   peer: /'
		   return "${PIPESTATUS[0]}"; }
ktap_check "the peer's kernel log is clean" peer_log_clean
KTAP_CLASS=

# A dead host: scripts/wire kills the peer's VM on this console line.
power_cut()
{
	echo "sdp-wire: cut the peer's power" >/dev/console
	date +%s
}
ktap_check "the peer loses power mid-transfer: our RDMA sockets time out (TCP_USER_TIMEOUT 8 s)" peer_gone power_cut
ktap_finished
