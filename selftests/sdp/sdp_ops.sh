#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What an administrator uses. sdpstat(8): the table and its JSON show a
# live pair over RDMA as it is (both ends, device, bytes); the counters and
# their deltas; the devices; and --check names the right cause for each way
# to the transport the suite can produce: RDMA, a peer refusing RDMA then
# the negative cache, no RDMA device, no RDMA answer in time, policy,
# loopback, and no connection at all (sdp_wire: a peer speaking another
# SDP). (sdp_diag checks the kernel's sock_diag itself.) The net.sdp.* sysctls: each takes its bounds and
# refuses one past either with EINVAL, keeping its value.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

st=$here/../../userspace/sdpstat
[ -x "$st" ] || { echo "# build userspace/ first"; exit $KSFT_SKIP; }
fam=$(cat /sys/module/sdp/parameters/family)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; kill $(jobs -p) 2>/dev/null' EXIT

# checked WANT_RC REGEX DEST [sdpstat args]: --check's line and exit status
checked()
{
	local want=$1 re=$2 dest=$3 out rc
	shift 3
	out=$("$st" --check "$dest" "$@")
	rc=$?
	echo "# sdpstat --check $dest: $out (exit $rc)"
	[ "$rc" = "$want" ] && [[ $out =~ $re ]]
}

sdp_server()	# PORT: an SDP listener on SDP_A that takes one connection (pid in $srv)
{
	timeout 30 socat -u "SOCKET-LISTEN:$fam:6:$(sdp_socat_addr $SDP_A "$1"),reuseaddr" /dev/null &
	srv=$!
	sdp_wait_listen "$1"
}

table()
{
	local addr cli
	sdp_rdma_mark
	addr=$(sdp_socat_addr $SDP_A 7321)
	# each end in a process group of its own, for the kill below: its
	# sleep, not only the socat, goes then (else the wait lasts its 20 s)
	setsid timeout 30 socat -u "SOCKET-LISTEN:$fam:6:$addr,reuseaddr" EXEC:'sleep 20' &
	srv=$!
	sdp_wait_listen 7321 || return 1
	setsid sh -c "(printf hello; sleep 20) | timeout 30 socat -u - SOCKET-CONNECT:$fam:6:$addr" &
	cli=$!
	for _ in $(seq 50); do
		"$st" -n | grep -q ":7321 .*rdma" && break
		sleep 0.2
	done
	"$st" -n -e | sed 's/^/#   /'
	"$st" -n -e >"$tmp/t"
	"$st" -a -n -j >"$tmp/j"
	kill -- -$srv -$cli 2>/dev/null; wait $srv $cli 2>/dev/null
	# both ends, over RDMA; root sees the device
	[ "$(grep -Ec "^ESTAB .*$SDP_A:7321 .* rdma\$|^ESTAB .*$SDP_A:[0-9]+ +$SDP_A:7321 +rdma\$" "$tmp/t")" = 2 ] ||
		{ echo "# want both ends of :7321 in the table"; return 1; }
	grep -q "dev:rxe1 port:1 qp:[1-9]" "$tmp/t" || { echo "# no device line"; return 1; }
	python3 - "$tmp/j" "$SDP_A:7321" <<'PY' || return 1
import json, sys
rows = json.load(open(sys.argv[1]))
cli = [r for r in rows if r["peer"] == sys.argv[2]]
srv = [r for r in rows if r["local"] == sys.argv[2] and r["state"] == "ESTAB"]
ok = len(cli) == 1 and len(srv) == 1 and cli[0]["transport"] == "rdma" \
    and cli[0]["bytes_sent"] == 5 and srv[0]["bytes_received"] == 5 \
    and cli[0]["peer_qp"] == srv[0]["qp"] and srv[0]["peer_qp"] == cli[0]["qp"] \
    and cli[0]["device"] == "rxe1" and cli[0]["fallback"] == ""
if not ok:
    print("# json:", cli, srv)
sys.exit(0 if ok else 1)
PY
	sdp_rdma_proven 5 1
}

listening()
{
	local addr cli l all
	addr=$(sdp_socat_addr $SDP_A 7322)
	# a listener that keeps listening (fork), and one connection through it
	setsid timeout 30 socat -u "SOCKET-LISTEN:$fam:6:$addr,reuseaddr,fork" /dev/null &
	srv=$!
	sdp_wait_listen 7322 || return 1
	setsid sh -c "sleep 20 | timeout 30 socat -u - SOCKET-CONNECT:$fam:6:$addr" &
	cli=$!
	for _ in $(seq 50); do
		"$st" -n | grep -q ":7322 .*rdma" && break
		sleep 0.2
	done
	l=$("$st" -l -n -e)
	all=$("$st" -a -n)
	kill -- -$srv -$cli 2>/dev/null; wait $srv $cli 2>/dev/null
	echo "$l" | sed 's/^/#   /'
	# -l: the listener, over RDMA, none of its connections; -a: all three
	echo "$l" | grep -Eq "^LISTEN +0 +[0-9]+ +$SDP_A:7322 .* rdma\$" &&
		! echo "$l" | grep -q '^ESTAB' &&
		[ "$(echo "$all" | grep -c ":7322 ")" = 3 ]
}

counters()
{
	local out
	"$st" -s | grep -Eq '^TxBytes +[0-9]+$' || return 1
	sdp_server 7323 || return 1
	# one interval: only what changed, by how much (ActiveOpens by 1)
	out=$( { sleep 1; socat -u /dev/null "SOCKET-CONNECT:$fam:6:$(sdp_socat_addr $SDP_A 7323)"; } &
		"$st" -s -i 3 -c 1 | sed -n '/^-- 3 s/,$p')
	wait $srv
	echo "$out" | sed 's/^/#   /'
	echo "$out" | grep -Eq '^ActiveOpens +1$' && echo "$out" | grep -Eq '^PassiveOpens +1$' &&
		! echo "$out" | grep -Eq ' 0$' &&
		"$st" -s -j | python3 -c 'import json,sys; d = json.load(sys.stdin); sys.exit(0 if d["ActiveOpens"] > 0 else 1)'
}

devices()
{
	local out
	out=$("$st" -d)
	echo "$out" | sed 's/^/#   /'
	echo "$out" | grep -Eq '^rxe1 +1 +4: ACTIVE +Ethernet ' &&
		echo "$out" | grep -Eq '^rxe3 +1 ' &&
		"$st" -d -j | python3 -c 'import json,sys; sys.exit(0 if len(json.load(sys.stdin)) >= 3 else 1)'
}

over_rdma()
{
	sdp_rdma_mark
	sdp_server 7324 || return 1
	checked 0 "^$SDP_A:7324: RDMA via rxe1 port 1 \\(path MTU [0-9]+, QP [0-9]+ -> [0-9]+\\)\$" $SDP_A:7324 &&
		wait $srv && sdp_rdma_proven 0 1
}

rejected_then_cached()
{
	timeout 30 socat -u TCP-LISTEN:7325,bind=$SDP_A,reuseaddr,fork /dev/null &
	sdp_wait_listen 7325 || return 1
	checked 1 "^$SDP_A:7325: TCP \\(FallbackRejected\\): the peer refused RDMA: nothing listens over SDP on $SDP_A:7325 " $SDP_A:7325 &&
		checked 1 "^$SDP_A:7325: TCP \\(FallbackCached\\): a recent RDMA attempt to $SDP_A:7325 failed: negative cache \\(net.sdp.negative_cache_ttl\\)\$" $SDP_A:7325
}

no_device()
{
	ip netns exec $SDP_TCPONLY_NS timeout 30 socat -u TCP-LISTEN:7326,reuseaddr /dev/null &
	sdp_wait_listen 7326 ip netns exec $SDP_TCPONLY_NS || return 1
	checked 1 "^$SDP_TCPONLY:7326: TCP \\(FallbackNoDevice\\): no RDMA device routes to $SDP_TCPONLY:7326\$" $SDP_TCPONLY:7326
}

no_answer()
{
	local saved rc
	saved=$(sysctl -n net.sdp.connect_timeout_ms)
	ip netns exec $SDP_NORDMA_NS timeout 30 socat -u TCP-LISTEN:7327,reuseaddr /dev/null &
	sdp_wait_listen 7327 ip netns exec $SDP_NORDMA_NS || return 1
	sysctl -qw net.sdp.connect_timeout_ms=300
	checked 1 "^$SDP_NORDMA:7327: TCP \\(FallbackTimeout\\): no RDMA answer from $SDP_NORDMA:7327 " $SDP_NORDMA:7327
	rc=$?
	sysctl -qw net.sdp.connect_timeout_ms="$saved"
	return $rc
}

by_policy()
{
	local rc saved
	saved=$(sysctl -n net.sdp.enabled)
	timeout 30 socat -u TCP-LISTEN:7328,bind=$SDP_A,reuseaddr,fork /dev/null &
	sdp_wait_listen 7328 || return 1
	sysctl -qw net.sdp.enabled=0
	checked 1 "^$SDP_A:7328: TCP \\(FallbackPolicy\\): policy said TCP" $SDP_A:7328 &&
		checked 1 "\"result\":\"tcp\",\"errno\":0,\"fallback\":\"FallbackPolicy\"" $SDP_A:7328 -j
	rc=$?
	sysctl -qw net.sdp.enabled="$saved"
	return $rc
}

loopback()
{
	timeout 30 socat -u TCP-LISTEN:7330,bind=127.0.0.1,reuseaddr /dev/null &
	sdp_wait_listen 7330 || return 1
	checked 1 "^127.0.0.1:7330: TCP \\(FallbackLoopback\\): a loopback destination" 127.0.0.1:7330
}

refused()
{
	checked 2 "^$SDP_TCPONLY:7331: no connection: Connection refused; before that, RDMA was not used: no RDMA device routes to $SDP_TCPONLY:7331\$" $SDP_TCPONLY:7331
}

# NAME MIN MAX for every sysctl: a new one without its line fails below
bounds="enabled 0 1
rdma_only 0 1
connect_timeout_ms 1 600000
negative_cache_ttl 0 86400
recv_poll_us 0 1000000
syn_timeout_ms 1 600000
max_half_open 1 65536
buf_size 1024 131072
rx_bufs 4 256
tx_bufs 4 256
zcopy_thresh 0 1073741824
shared_rq 0 1"

sysctls()
{
	local name lo hi v saved rc=0
	[ "$(ls /proc/sys/net/sdp | sort)" = "$( (echo "$bounds" | cut -d' ' -f1; echo mem) | sort)" ] ||
		{ echo "# net.sdp.* is not the list this test knows: $(ls /proc/sys/net/sdp)"; return 1; }
	# mem: three page counts, as tcp_mem
	saved=$(sysctl -n net.sdp.mem)
	sysctl -qw net.sdp.mem="1 2 3" && [ "$(sysctl -n net.sdp.mem | tr -s '\t' ' ')" = "1 2 3" ] ||
		{ echo "# net.sdp.mem=1 2 3 refused"; rc=1; }
	sysctl -qw net.sdp.mem="$saved"
	[ "$(sysctl -n net.sdp.mem)" = "$saved" ] || { echo "# net.sdp.mem not restored"; rc=1; }
	while read -r name lo hi; do
		saved=$(sysctl -n net.sdp.$name)
		for v in $((lo - 1)) $((hi + 1)); do
			if out=$(sysctl -w net.sdp.$name=$v 2>&1) ||
			   ! [[ $out =~ "Invalid argument" ]] ||
			   [ "$(sysctl -n net.sdp.$name)" != "$saved" ]; then
				echo "# net.sdp.$name=$v: $out, now $(sysctl -n net.sdp.$name)"
				rc=1
			fi
		done
		for v in $lo $hi; do
			sysctl -qw net.sdp.$name=$v && [ "$(sysctl -n net.sdp.$name)" = "$v" ] ||
				{ echo "# net.sdp.$name=$v refused"; rc=1; }
		done
		sysctl -qw net.sdp.$name="$saved"
	done <<<"$bounds"
	return $rc
}

ktap_plan 12
KTAP_CLASS=rdma
ktap_check "the table and JSON show both ends of a pair over RDMA, its device, QPs and bytes" table
ktap_check "-l shows a listener over RDMA and none of its connections, -a all of them" listening
KTAP_CLASS=local
ktap_check "-s prints the counters, -i their changes (ActiveOpens 1, PassiveOpens 1, nothing unchanged)" counters
ktap_check "-d lists the RDMA ports with state and link layer" devices
KTAP_CLASS=rdma
ktap_check "--check: RDMA, with device, port, MTU and QPs (exit 0)" over_rdma
KTAP_CLASS=fallback
ktap_check "--check: a TCP-only port refuses RDMA, then the negative cache answers (exit 1)" rejected_then_cached
ktap_check "--check: no RDMA device toward a TCP-only host (exit 1)" no_device
ktap_check "--check: no RDMA answer within connect_timeout_ms (exit 1)" no_answer
ktap_check "--check: policy (net.sdp.enabled=0), and its JSON (exit 1)" by_policy
ktap_check "--check: loopback (exit 1)" loopback
KTAP_CLASS=local
ktap_check "--check: nothing listens: the errno, and why RDMA was not used (exit 2)" refused
ktap_check "each net.sdp.* sysctl takes its bounds and refuses one past either (EINVAL); mem its three limits" sysctls
ktap_finished
