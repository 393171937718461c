#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# An in-kernel consumer: DRBD (drivers/block/drbd) replicates a block device
# over sockets it creates itself in the kernel, in the address family its
# configuration names ("sdp:" is AF_INET_SDP, 27). Two DRBD resources in this
# guest are each other's peer, r0 on SDP_A:7789 and r1 on SDP_A:7790 (DRBD
# binds its outgoing sockets to its own address: from SDP_B, rxe2's, to
# SDP_A the RoCE packets would go through lo, where no rxe listens), and
# replicate with protocol C (a write completes once the peer has it): the
# initial full sync, then 64 MiB written to the primary with O_DIRECT. Both
# backing devices must then hold the same bytes, every DRBD connection must
# have been SDP over RDMA (no fallback), and the bytes must have crossed RDMA.
# drbdsetup-84 speaks to the kernel's DRBD 8.4; drbd-utils is unpacked by
# scripts/deps.sh (SDP_DRBD), never installed.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

drbd=${SDP_DRBD:-}
[ -r /proc/net/sdp_stats ] || { echo "# sdp not loaded"; exit $KSFT_SKIP; }
[ -x "$drbd/lib/drbd/drbdsetup-84" ] ||
	{ echo "# no drbd-utils: scripts/deps.sh fetches it (SDP_DRBD)"; exit $KSFT_SKIP; }
[ "$(cat /sys/module/sdp/parameters/family)" = 27 ] ||
	{ echo "# DRBD's sdp: addresses are family 27; sdp has another"; exit $KSFT_SKIP; }
# DRBD 8.4's worker takes a mutex while TASK_INTERRUPTIBLE (wait_for_work()
# -> maybe_send_barrier(), drbd_worker.c), which DEBUG_ATOMIC_SLEEP reports
# as a WARNING whatever the transport (seen on the debug kernel)
zgrep -q '^CONFIG_DEBUG_ATOMIC_SLEEP=y' /proc/config.gz 2>/dev/null &&
	{ echo "# DEBUG_ATOMIC_SLEEP: DRBD's own wait_for_work() warns"; exit $KSFT_SKIP; }
modprobe drbd 2>/dev/null || { echo "# this kernel has no drbd module"; exit $KSFT_SKIP; }
modprobe loop 2>/dev/null	# its backing devices (built in on some kernels)
mkdir -p "$(readlink -f /var/lock)"	# drbdmeta's lock (/run/lock, a fresh tmpfs)

# the debug kernel has DRBD built in: nothing to unload there
unload_drbd() { [ ! -e /sys/module/drbd/refcnt ] || modprobe -r drbd; }
tmp=$(mktemp -d)
loops=()
# DRBD runs a usermode helper on events (before a resync, on a split brain,
# to fence the peer), its module's usermode_helper, /sbin/drbdadm, and
# drops the connection when it fails. The guest shares the host's root: a
# host with drbd-utils has a /sbin/drbdadm that knows none of these
# resources ("before-resync-source handler returned 1, dropping
# connection"). The helper is the test's own: it records each call and
# succeeds, as drbdadm does for a handler a configuration leaves unset.
helper_param=/sys/module/drbd/parameters/usermode_helper
old_helper=$(cat "$helper_param")
cleanup()
{
	local l
	drbdsetup down r0 2>/dev/null
	drbdsetup down r1 2>/dev/null
	for l in "${loops[@]}"; do losetup -d "$l"; done
	[ -z "$old_helper" ] || printf %s "$old_helper" >"$helper_param"
	unload_drbd 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
printf '#!/bin/sh\necho "$*" >>%s/helper.log\nexit 0\n' "$tmp" >"$tmp/helper"
chmod +x "$tmp/helper"
: >"$tmp/helper.log"
# (no newline: the parameter would keep it, and the exec fail unseen)
printf %s "$tmp/helper" >"$helper_param" && [ "$(cat "$helper_param")" = "$tmp/helper" ] ||
	{ echo "# cannot set DRBD's usermode_helper (was $old_helper)"; exit 1; }
helper_calls() { sort "$tmp/helper.log" | uniq -c | tr -s ' \n' ' '; }
# drbdmeta asks "drbdsetup" whether a minor is in use: the 8.4 one.
mkdir "$tmp/bin"
ln -s "$drbd/lib/drbd/drbdsetup-84" "$tmp/bin/drbdsetup"
export PATH=$tmp/bin:$drbd/sbin:$PATH

# A step that must work: its output, and its name if it fails.
step()
{
	local out
	out=$("$@" 2>&1) && return 0
	echo "# failed: $* -- $(tr '\n' ' ' <<<"$out")"
	return 1
}

size=$((64 << 20))
# DRBD's connections that run on TCP (a fallen-back SDP socket is its native
# TCP socket; one over RDMA has no TCP connection)
tcp_conns() { ss -Htn state established '( sport = :7789 or sport = :7790 )' | wc -l; }

# A resource: minor N on a fresh 66 MiB loop device (internal metadata),
# replicating from local address:port A to the peer's B.
resource()	# N A B
{
	local dev
	step truncate -s 66M "$tmp/disk$1" || return 1
	dev=$(losetup -f --show "$tmp/disk$1") || return 1
	loops+=("$dev")
	step drbdmeta --force "$1" v08 "$dev" internal create-md &&
		step drbdsetup new-resource "r$1" &&
		step drbdsetup new-minor "r$1" "$1" 0 &&
		step drbdsetup attach "$1" "$dev" "$dev" internal --c-plan-ahead=0 --resync-rate=1000M &&
		step drbdsetup connect "r$1" "sdp:$2" "sdp:$3" --protocol=C \
			--ping-timeout=50 --timeout=100
}

# Until both minors report DSTATE (e.g. UpToDate/UpToDate): 120 s at most.
wait_dstate()	# DSTATE
{
	local _
	for _ in $(seq 240); do
		[ "$(drbdsetup dstate 0)" = "$1" ] && [ "$(drbdsetup dstate 1)" = "$1" ] && return 0
		sleep 0.5
	done
	echo "# dstate: $(drbdsetup dstate 0) $(drbdsetup dstate 1), want $1"
	return 1
}

ktap_plan 3
m_est=$(sdp_stat Established)
sdp_rdma_mark
connected()
{
	resource 0 $SDP_A:7789 $SDP_A:7790 && resource 1 $SDP_A:7790 $SDP_A:7789 &&
		step drbdsetup wait-connect 0 --wfc-timeout=60 &&
		step drbdsetup wait-connect 1 --wfc-timeout=60 || return 1
	[ "$(drbdsetup cstate 0)" = Connected ] && [ "$(drbdsetup cstate 1)" = Connected ] ||
		{ echo "# cstate: $(drbdsetup cstate 0) $(drbdsetup cstate 1)"; return 1; }
	# DRBD 8.4 opens a data and a meta socket per peer: both ends, both
	# resources' sockets, over RDMA; none fell back to TCP (a first connect
	# before the peer listens is refused: ECONNREFUSED, as over TCP)
	est=$(($(sdp_stat Established) - m_est)) tcp=$(tcp_conns)
	echo "# DRBD connected: $est SDP connection ends established over RDMA, $tcp on TCP"
	[ "$est" -ge 4 ] && [ "$tcp" -eq 0 ]
}
KTAP_CLASS=rdma
mark=$(sdp_kmsg_mark drbd)
# DRBD's own account (its info lines are not on the console), and the
# calls of its helper
drbd_log()
{
	sdp_kmsg_since "$mark" | grep -i drbd | tail -n 60 | sed 's/^/#   /'
	echo "# DRBD's helper ($(cat "$helper_param")) was called:$(helper_calls)"
}
if connected; then
	ktap_result pass "DRBD connects two resources over SDP sockets it opens in the kernel, over RDMA"
else
	drbd_log
	ktap_result fail "DRBD connects two resources over SDP sockets it opens in the kernel, over RDMA"
	ktap_finished
fi
KTAP_CLASS=

# The full sync from the new primary, then a protocol C write stream.
replicated()
{
	local disk
	step drbdsetup primary 0 --force && wait_dstate UpToDate/UpToDate || return 1
	disk=$(blockdev --getsize64 /dev/drbd0)
	head -c $size /dev/urandom >"$tmp/data"
	dd if="$tmp/data" of=/dev/drbd0 bs=1M oflag=direct status=none || return 1
	wait_dstate UpToDate/UpToDate || return 1
	# both backing devices hold the data (after DRBD's metadata at the end)
	cmp -n $size "$tmp/data" "${loops[0]}" && cmp -n $size "$tmp/data" "${loops[1]}" || return 1
	# the sync (the whole device) and the writes went over RDMA; DRBD's
	# headers, acks and pings ride along on four connections
	[ "$(tcp_conns)" -eq 0 ] && sdp_rdma_proven $((disk + size)) 4 $((4 << 20)) || return 1
	# the resync asked the test's helper, no other program
	echo "# DRBD's helper was called:$(helper_calls)"
	grep -q '^before-resync-source ' "$tmp/helper.log"
}
ktap_check "DRBD syncs and replicates 64 MiB (protocol C, O_DIRECT) intact, over RDMA" \
	eval 'replicated || { drbd_log; false; }'

KTAP_CLASS=local
down_clean()
{
	step drbdsetup disconnect "sdp:$SDP_A:7789" "sdp:$SDP_A:7790" &&
		step drbdsetup down r0 && step drbdsetup down r1 && step unload_drbd
}
ktap_check "DRBD disconnects and goes down; its module unloads" down_clean
ktap_finished
