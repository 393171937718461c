#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Shared by the sdp selftests: the test topology and KTAP helpers.
#
# Topology (rxe on 6.1 works in init_net only, so the RDMA hosts live there):
#   init_net  v1 198.18.0.1/24 2001:db8::1/64  rxe1 --veth-- v2 198.18.0.2/24 2001:db8::2/64  rxe2
#   init_net  t1 198.19.0.1/24 2001:db8:1::1/64 --veth-- netns "tcponly": t2 198.19.0.2/24 2001:db8:1::2/64
#   init_net  v3 198.20.0.1/24 (rxe3) --veth-- netns "nordma": v4 198.20.0.2/24
# "tcponly" has no RDMA device: a plain TCP host for fallback tests.
# "nordma" is reached through an RDMA device but has none itself: an RDMA
# connect to it goes unanswered (the short first attempt's case).

SDP_A=198.18.0.1
SDP_B=198.18.0.2
SDP_A6=2001:db8::1
SDP_B6=2001:db8::2
SDP_TCPONLY_LOCAL=198.19.0.1
SDP_TCPONLY=198.19.0.2
SDP_TCPONLY6=2001:db8:1::2
SDP_TCPONLY_NS=tcponly
SDP_NORDMA=198.20.0.2
SDP_NORDMA_NS=nordma
KSFT_SKIP=4

sdp_topology_up()
{
	ip link show v1 >/dev/null 2>&1 && return 0
	modprobe rdma_rxe || return 1
	modprobe rdma_cm || return 1
	modprobe veth || return 1
	ip link add v1 type veth peer name v2 || return 1
	ip addr add $SDP_A/24 dev v1
	ip addr add $SDP_B/24 dev v2
	ip -6 addr add $SDP_A6/64 dev v1 nodad
	ip -6 addr add $SDP_B6/64 dev v2 nodad
	ip link set v1 up
	ip link set v2 up
	rdma link add rxe1 type rxe netdev v1 || return 1
	rdma link add rxe2 type rxe netdev v2 || return 1

	ip netns add $SDP_TCPONLY_NS || return 1
	ip link add t1 type veth peer name t2 netns $SDP_TCPONLY_NS || return 1
	ip addr add $SDP_TCPONLY_LOCAL/24 dev t1
	ip -6 addr add 2001:db8:1::1/64 dev t1 nodad
	ip link set t1 up
	ip -n $SDP_TCPONLY_NS addr add $SDP_TCPONLY/24 dev t2
	ip -n $SDP_TCPONLY_NS -6 addr add $SDP_TCPONLY6/64 dev t2 nodad
	ip -n $SDP_TCPONLY_NS link set t2 up
	ip -n $SDP_TCPONLY_NS link set lo up

	ip netns add $SDP_NORDMA_NS || return 1
	ip link add v3 type veth peer name v4 netns $SDP_NORDMA_NS || return 1
	ip addr add 198.20.0.1/24 dev v3
	ip link set v3 up
	ip -n $SDP_NORDMA_NS addr add $SDP_NORDMA/24 dev v4
	ip -n $SDP_NORDMA_NS link set v4 up
	ip -n $SDP_NORDMA_NS link set lo up
	rdma link add rxe3 type rxe netdev v3 || return 1
}

# Two hosts (scripts/wire): this guest's NIC gets ADDR/24 and a Soft-RoCE
# device, rxe0. The peer is 10.77.0.1 or .2; SDP_PEER names it.
sdp_wire_up()	# ADDR
{
	local dev
	modprobe virtio_net 2>/dev/null
	modprobe rdma_rxe || return 1
	modprobe rdma_cm || return 1
	dev=$(ls /sys/class/net | grep -v '^lo$' | head -n1)
	[ -n "$dev" ] || return 1
	ip link set lo up
	ip link set "$dev" name eth0 2>/dev/null
	ip addr add "$1/24" dev eth0 || return 1
	ip link set eth0 up || return 1
	rdma link add rxe0 type rxe netdev eth0
}

# Run a shell script on the peer (its agent, scripts/wire-peer), in the
# project tree with lib.sh loaded; prints its output, returns its status.
sdp_peer()
{
	local out rc err
	err=$(mktemp)
	# socat retries a connect the busy one-vCPU peer missed; never a command
	out=$(printf 'cd %q && . selftests/sdp/lib.sh && {\n%s\n}; echo "@rc=$?"\n' \
		"$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)" "$*" |
		timeout 300 socat -t 300 - "TCP:${SDP_PEER:?}:7777,retry=5,interval=1,connect-timeout=5" 2>"$err")
	rc=$(sed -n 's/^@rc=//p' <<<"$out" | tail -n1)
	[ -n "$rc" ] || sed 's/^/# sdp_peer: /' "$err" >&2
	rm -f "$err"
	sed '/^@rc=/d' <<<"$out"
	return "${rc:-255}"
}

# Until the peer's agent answers: 120 s at most (it boots at the same time).
sdp_peer_wait()
{
	local _
	for _ in $(seq 120); do
		sdp_peer true >/dev/null 2>&1 && return 0
		sleep 1
	done
	return 1
}

# Sum of a counter (sent_pkts, rdma_sends, ...) over every rxe link: in one
# VM the rdma_cm binds both ends to the device owning the destination address.
sdp_rxe_counter()
{
	rdma statistic show link 2>/dev/null |
		awk -v c="$1" '{ for (i = 1; i < NF; i++) if ($i == c) s += $(i + 1) } END { print s + 0 }'
}

# A counter of /proc/net/sdp_stats.
sdp_stat() { awk -v k="$1" '$1 == k { print $2 }' /proc/net/sdp_stats; }

# The data packets SDP's messages make on a device: MSGS messages carrying
# TX bytes plus a 16-byte BSDH each, one packet per path MTU and at least one
# per message. sdp_pkt_bounds TX MSGS MTU sets pk_need (fewest: full
# packets) and pk_most (a short tail per message, and 1/128 to spare for
# the device's retransmissions).
sdp_pkt_bounds()
{
	local wire=$(($1 + 16 * $2))

	pk_need=$(((wire + $3 - 1) / $3)); [ "$pk_need" -ge "$2" ] || pk_need=$2
	pk_most=$(($2 + wire / $3 + wire / $3 / 128))
}

# For programs whose sockets a script cannot reach (socat, curl, ...): SDP's
# and the devices' counters since sdp_rdma_mark must show the transfer over
# RDMA. sdp_rdma_proven PAYLOAD CONNS [SLACK [reset]]: the bytes SDP received
# equal those it sent (with reset, a receiver that reset may have left some
# unreceived), and are PAYLOAD to PAYLOAD + SLACK (default 64 KiB, for
# protocol headers); the devices completed one send per SDP message (plus
# the CM's few per connection) and sent the packets those messages make
# (one per path MTU of bytes, at least one per message, plus one ack per
# message; bytes that went by SrcAvail, in read responses of one per path
# MTU, at most one more per RDMA Read, and the Reads' requests): bounds
# within 1.5x; with reset, at least the data packets of what was received.
# Prints the PROOF line.
sdp_rdma_mark()
{
	local last= now _
	# The last case's connections may still be moving bytes (a program that
	# exits leaves its queued data to the kernel; a peer's reset stops it):
	# wait until SDP and the devices idle, 0.3 s without a change (6 s at
	# most), so that this case counts only its own.
	for _ in $(seq 20); do
		now="$(sdp_stat TxBytes) $(sdp_stat RxBytes) $(sdp_rxe_counter sent_pkts)"
		[ "$now" != "$last" ] || break
		last=$now
		sleep 0.3
	done
	m_tx=$(sdp_stat TxBytes) m_rx=$(sdp_stat RxBytes) m_msgs=$(sdp_stat TxMsgs)
	m_sends=$(sdp_rxe_counter rdma_sends) m_pkts=$(sdp_rxe_counter sent_pkts)
	m_zc=$(sdp_stat ZcopyTxBytes) m_reads=$(sdp_stat ZcopyReads)
}
sdp_rdma_proven()
{
	local payload=$1 conns=$2 slack=${3:-65536} reset=${4:-} tx rx msgs sends pkts mtu lo hi try
	local zc reads
	mtu=$(ibv_devinfo -d rxe1 | awk '/active_mtu/ { print $2; exit }')
	# completions and the last closes may lag the programs' exits a little
	for try in $(seq 30); do
		[ "$try" = 1 ] || sleep 0.1
		tx=$(($(sdp_stat TxBytes) - m_tx)) rx=$(($(sdp_stat RxBytes) - m_rx))
		msgs=$(($(sdp_stat TxMsgs) - m_msgs))
		sends=$(($(sdp_rxe_counter rdma_sends) - m_sends))
		pkts=$(($(sdp_rxe_counter sent_pkts) - m_pkts))
		zc=$(($(sdp_stat ZcopyTxBytes) - m_zc)) reads=$(($(sdp_stat ZcopyReads) - m_reads))
		sdp_pkt_bounds "$((tx - zc))" "$msgs" "$mtu"
		lo=$((pk_need + msgs + zc / mtu)) hi=$((pk_most + msgs + 10 * conns + zc / mtu + 2 * reads))
		# a reset flushes what was posted and not yet sent: the packets
		# of the bytes received, no ack counted
		[ -z "$reset" ] || lo=$(((rx - zc + mtu - 1) / mtu + zc / mtu))
		{ [ "$tx" -eq "$rx" ] || { [ -n "$reset" ] && [ "$tx" -gt "$rx" ] &&
						[ "$tx" -le $((payload + slack)) ]; }; } &&
			[ "$rx" -ge "$payload" ] && [ "$rx" -le $((payload + slack)) ] &&
			[ "$sends" -ge "$msgs" ] && [ "$sends" -le $((msgs + 10 * conns)) ] &&
			[ "$pkts" -ge "$lo" ] && [ "$pkts" -le "$hi" ] || continue
		echo "# PROOF rdma $rx B in $msgs msgs ($zc B of them read by SrcAvail); device: $sends sends, $pkts pkts ($lo..$hi)"
		return 0
	done
	echo "# not over RDMA as expected: $tx B sent, $rx B received (want $payload..+$slack) in $msgs msgs; device: $sends sends, $pkts pkts (want $lo..$hi)"
	return 1
}

# sdp_wait_listen PORT [PREFIX...]: until a TCP socket listens on PORT, 10 s
# at most; a PREFIX such as "ip netns exec NS" looks in another namespace.
sdp_wait_listen()
{
	local p=$1 _
	shift
	for _ in $(seq 100); do
		"$@" ss -Hltn "sport = :$p" | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

# socat's generic address for IPv4 ADDR:PORT in an SDP family
# (SOCKET-CONNECT:27:6:...): the sockaddr_in after its family field, in hex.
sdp_socat_addr() { printf 'x%04x%s0000000000000000' "$2" "$(printf '%02x' ${1//./ })"; }

# Kernel log lines that mean a kernel bug, whoever caused them: a test that
# ran when one was logged fails (run_kselftest.sh, check-guest).
SDP_SPLAT_RE='BUG:|WARNING:|Oops|general protection|Kernel panic|kernel BUG|UBSAN:|KASAN:|KFENCE:|refcount_t:|list_(add|del) corruption|kmemleak: [0-9]+ new suspected|unreferenced object|INFO: task .* blocked for more than|soft lockup|hard LOCKUP|rcu: INFO|detected stall|self-detected stall|possible circular locking|possible recursive locking|inconsistent lock state|sleeping function called from invalid context|scheduling while atomic|suspicious RCU usage|DEBUG_LOCKS_WARN_ON|ODEBUG:|Call Trace:|page allocation failure|stack-protector|Unable to handle kernel'

# sdp_kmsg_mark NAME: put a unique marker into the kernel log; prints it.
# The sdp tracepoints, on for the rest of the run. Enabling an event patches
# kernel text (static keys and calls), and under TCG a CPU can keep hitting
# the int3 of a site another CPU has finished rewriting: a soft lockup was
# seen in __schedule, which ftrace's command-line recorder hooks when the
# first event goes on. So: once, right after the module loads (scripts/
# check-guest), without the recorder; the tests only clear and read the
# buffer.
SDP_TRACEFS=/sys/kernel/tracing
sdp_trace_on()
{
	[ -d $SDP_TRACEFS/events ] || mount -t tracefs nodev $SDP_TRACEFS 2>/dev/null
	[ -w $SDP_TRACEFS/events/sdp/enable ] || return 1
	[ "$(cat $SDP_TRACEFS/events/sdp/enable)" = 1 ] && return 0
	echo 0 >$SDP_TRACEFS/options/record-cmd &&
		echo 1 >$SDP_TRACEFS/events/sdp/enable
}

sdp_kmsg_mark()
{
	local m="sdp-ksft-mark $1 $$-$RANDOM-$(date +%s%N)"
	echo "$m" >/dev/kmsg
	echo "$m"
}

# sdp_kmsg_since MARKER: the kernel log after MARKER; fails if MARKER has
# left the ring buffer.
sdp_kmsg_since() { dmesg | awk -v m="$1" 'seen { print } index($0, m) { seen = 1 } END { exit !seen }'; }

# sdp_kmsg_line_since MARKER LINE...: succeeds if the kernel log after
# MARKER has a line that is exactly one of LINEs (its time stamp aside).
sdp_kmsg_line_since()
{
	local m=$1 l
	local -a e=()
	shift
	for l; do e+=(-e "$l"); done
	sdp_kmsg_since "$m" | sed 's/^\[ *[0-9]*\.[0-9]*\] //' | grep -qxF "${e[@]}"
}

# sdp_kmsg_between FROM TO: the kernel log after marker FROM and before
# marker TO; fails if either is not in the ring buffer.
sdp_kmsg_between()
{
	dmesg | awk -v a="$1" -v b="$2" '
		seen && index($0, b) { done = 1; exit }
		seen { print }
		index($0, a) { seen = 1 }
		END { exit !done }'
}

# What net/sdp/sdp_data.c's sdp_recvmsg() WARNs once debugfs sdp/inject_warn
# is armed (sdp_inject_warn.sh; scripts/check-guest's self-test).
SDP_INJECTED_WARN="sdp: warning injected through debugfs"

# sdp_splat_expected MESSAGE FUNCTION: reads a kernel log window (from
# sdp_kmsg_since or sdp_kmsg_between) in which a check expects one WARN of
# its own: WARN(cond, "MESSAGE\n") in FUNCTION. Succeeds, silent, when the
# window holds that report exactly once, whole between the kernel's own
# delimiters (CUT_HERE, then MESSAGE as the whole next line, then its
# "WARNING: ... at FILE:LINE FUNCTION+off/size" line, ..., "---[ end trace
# ... ]---"), and nothing else SDP_SPLAT_RE matches: not another report,
# not a line of one inside it. A function name or a pattern alone never
# excuses a splat: a WARN_ON_ONCE of a real bug in the same function is
# not the expected report. Otherwise prints "other splat: LINE" for each
# other splat (its first line: where it fired) or what is wrong with the
# expected one, then the window (400 lines at most), and fails.
sdp_splat_expected()
{
	local log out
	log=$(cat)
	out=$(awk -v msg="$1" -v fn="$2" -v re="$SDP_SPLAT_RE" '
	function other(t) { if (!(t in said)) { said[t] = 1; others++; print "other splat: " t } }
	function close_block(whole) {
		if (!mine) other(named != "" ? named : first)
		else if (whole) ok++
		else print "the expected report is not whole: no end of trace before the next report or the end of the window"
		inblk = 0; mine = 0
	}
	{
		t = $0
		sub(/^\[ *[0-9]+\.[0-9]+\] /, "", t)	# dmesg time stamp
		sub(/^\[ *[TC][0-9]+\] /, "", t)	# CONFIG_PRINTK_CALLER
	}
	t == "------------[ cut here ]------------" {
		if (inblk) close_block(0)
		inblk = 1; n = 0; first = ""; named = ""; mine = 0; traces = 0
		next
	}
	inblk {
		n++
		if (n == 1) first = t
		if (n == 1 && t == msg) { mine = 1; seen++; next }
		if (mine && n == 2) {
			if (t ~ /^WARNING: / && index(t, " " fn "+")) next
			print "the WARNING line of the expected report is not at " fn ": " t
			mine = 0; seen--
		}
		if (t ~ /^---\[ end trace [0-9a-f]+ \]---$/) { close_block(1); next }
		if (mine && t == "Call Trace:" && !traces++) next
		if (t ~ re) {
			if (mine) other(t)	# inside our report, from elsewhere
			else if (named == "") named = t
		}
		next
	}
	t ~ re { other(t) }
	END {
		if (inblk) close_block(0)
		if (seen == 0) print "the expected report is not in the log: " msg " (WARN in " fn ")"
		else if (seen > 1) print "the expected report came " seen " times"
		exit !(ok == 1 && seen == 1 && others == 0)
	}' <<<"$log") && return 0
	echo "$out"
	echo "kernel log of the window:"
	head -n 400 <<<"$log"
	return 1
}

# sdp_splat_since MARKER: succeeds, printing each splat with its context,
# if the kernel log has one after MARKER (or anywhere, if MARKER has left
# the ring buffer: then it says so).
sdp_splat_since()
{
	local log
	log=$(sdp_kmsg_since "$1") ||
		log="(marker lost: the whole kernel log is checked)"$'\n'$(dmesg)
	grep -Eq "$SDP_SPLAT_RE" <<<"$log" || return 1
	grep -E -B3 -A30 "$SDP_SPLAT_RE" <<<"$log" | head -n 150
}

# KTAP output for shell tests; the runner reads the result lines. Every
# passing case says what it ran over (see run_kselftest.sh): ktap_result and
# ktap_check take the class from KTAP_CLASS (rdma, fallback, tcp, local), and
# a script sets it only where its checks prove it.
KTAP_CLASS=
ktap_pass=0
ktap_fail=0
ktap_skip=0
ktap_n=0

ktap_plan() { echo "TAP version 13"; echo "1..$1"; }
ktap_result()	# ktap_result pass|fail|skip "description" [reason]
{
	ktap_n=$((ktap_n + 1))
	case $1 in
	pass) ktap_pass=$((ktap_pass + 1)); [ -z "$KTAP_CLASS" ] || echo "# PROOF $KTAP_CLASS"; echo "ok $ktap_n $2" ;;
	fail) ktap_fail=$((ktap_fail + 1)); echo "not ok $ktap_n $2${3:+ # $3}" ;;
	skip) ktap_skip=$((ktap_skip + 1)); echo "ok $ktap_n $2 # SKIP $3" ;;
	esac
}
ktap_check()	# ktap_check "description" command... : pass when it succeeds
{
	local d=$1
	shift
	if "$@"; then ktap_result pass "$d"; else ktap_result fail "$d"; fi
}
ktap_finished()
{
	echo "# Totals: pass:$ktap_pass fail:$ktap_fail xfail:0 xpass:0 skip:$ktap_skip error:0"
	[ $ktap_fail -eq 0 ] || exit 1
	[ $ktap_pass -gt 0 ] || [ $ktap_skip -eq 0 ] || exit $KSFT_SKIP
	exit 0
}
