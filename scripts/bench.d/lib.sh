# Sourced by the parts of `make bench` that run in one VM or, with SDP_PEER
# set (scripts/wire's guest A, SDP_WIRE_RUN), against servers on the peer
# host: zcopy and scale. A is the servers' address; sections get "wire_"
# in front between two hosts.
# shellcheck shell=bash
A=${SDP_PEER:-$SDP_A}
sec=${SDP_PEER:+wire_}
kv() { sed -n "s/.*\<$1=\([^ ]*\).*/\1/p"; }
csv() { local s=$sec$1 IFS=,; shift; printf '@@,%s\n' "$s,$*"; }
busy_jiffies() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
# run "$@" on the servers' host (this one, or the peer)
there() {
	if [ -n "${SDP_PEER:-}" ]; then
		sdp_peer "$(printf '%q ' "$@")"
	else
		"$@"
	fi
}
# a server on the servers' host, in the background; up() says when it
# listens. The call to the peer is in the background too: one that started
# an AF_SMC server sometimes did not return for 300 s (sdp_peer's limit)
# though the server was up, for a cause not found.
serve() {
	if [ -n "${SDP_PEER:-}" ]; then
		sdp_peer "setsid $* </dev/null >/dev/null 2>&1 &" &
	else
		"$@" </dev/null >/dev/null 2>&1 &
	fi
}
# every server of these parts gone
unserve() {
	there pkill -f "^$root/userspace/sdp_(conn)?bench -l|^ib_(read_bw|send_lat)|^rstream -b"
	sleep 0.5
}
up() {	# until port $1 listens (TCP or rdma_cm), 10 s at most
	if [ -n "${SDP_PEER:-}" ]; then
		sdp_peer "$(declare -f up); up $1"
		return
	fi
	for _ in $(seq 100); do
		ss -Hltn "sport = :$1" 2>/dev/null | grep -q . && return 0
		rdma resource show cm_id 2>/dev/null | grep -Eq "state LISTEN .*:$1( |\$)" && return 0
		sleep 0.1
	done
}
