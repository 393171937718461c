#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fallback with unmodified Debian programs: nc (plain TCP) against an SDP
# listener run by socat, and socat's SDP client against nc on hosts where RDMA
# is not possible. Every transfer is checked byte for byte and the reason it
# went over TCP is read from /proc/net/sdp_stats.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ -r /proc/net/sdp_stats ] || { echo "# sdp not loaded"; exit $KSFT_SKIP; }
fam=$(cat /sys/module/sdp/parameters/family)
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

head -c $((3 << 20)) /dev/urandom >"$tmp/in"

ktap_plan 3

# FILE arrived intact and counter Fallback<REASON> went from BEFORE to +1:
# the case's evidence that it ran over the fallback.
intact_fell_back()	# FILE REASON BEFORE
{
	cmp -s "$tmp/in" "$1" && [ "$(sdp_stat "Fallback$2")" -eq $(($3 + 1)) ] || return 1
	echo "# PROOF fallback reason $2"
}

# 1. nc, a plain TCP client, sends a file to socat's SDP listener.
port=7101
peer_tcp=$(sdp_stat FallbackPeerTcp)
timeout 60 socat -u "SOCKET-LISTEN:$fam:6:$(sdp_socat_addr $SDP_A $port),reuseaddr" \
	"OPEN:$tmp/out1,creat,trunc" &
srv=$!
sdp_wait_listen $port
timeout 60 nc -N $SDP_A $port <"$tmp/in"
wait $srv
ktap_check "nc -> SDP listener (socat): file intact, served over TCP (FallbackPeerTcp +1)" \
	intact_fell_back "$tmp/out1" PeerTcp "$peer_tcp"

# socat's SDP client sends to nc listening on ADDR:PORT in NETNS ("-": ours);
# the counter Fallback<REASON> must go up by one.
sdp_to_nc()	# LABEL NETNS ADDR PORT REASON
{
	local ns=() before srv
	[ "$2" != - ] && ns=(ip netns exec "$2")
	before=$(sdp_stat "Fallback$5")
	timeout 60 "${ns[@]}" nc -d -l "$3" "$4" >"$tmp/out.$4" &
	srv=$!
	sdp_wait_listen "$4" "${ns[@]}"
	timeout 60 socat -u "OPEN:$tmp/in" "SOCKET-CONNECT:$fam:6:$(sdp_socat_addr "$3" "$4")"
	wait $srv
	ktap_check "SDP client (socat) -> nc on $1: file intact, fell back (Fallback$5 +1)" \
		intact_fell_back "$tmp/out.$4" "$5" "$before"
}

# 2. A host without RDMA. 3. Loopback, where RDMA never goes.
sdp_to_nc "a TCP-only host" $SDP_TCPONLY_NS $SDP_TCPONLY 7102 NoDevice
sdp_to_nc 127.0.0.1 - 127.0.0.1 7103 Loopback
ktap_finished
