#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The preload shim: unmodified Debian programs under sdp_run move their bytes
# over RDMA (checked end to end, proven by SDP's and rxe's counters); the
# rules file, the environment knobs, threads, fork+exec, /etc/ld.so.preload,
# and a missing module all behave as documented (sdp_run(8), sdp.conf(5)).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ko=${SDP_KO:-$here/../../net/sdp/sdp.ko}
run=$here/../../userspace/sdp_run
lib=$(cd "$here/../../userspace" && pwd)/libsdp.so
py=/usr/bin/python3
[ -r /proc/net/sdp_stats ] || { echo "# sdp not loaded"; exit $KSFT_SKIP; }
[ -x "$run" ] && [ -r "$lib" ] || { echo "# build userspace/ first"; exit $KSFT_SKIP; }
tmp=$(mktemp -d)
trap 'rm -f /etc/ld.so.preload; kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
: >"$tmp/none.conf"
# The guest's /tmp shows the host's (read-only overlay): only what appears
# while this test runs can be the shim's.
sdp_logs() { ls /tmp | grep -i 'sdp.*log'; }
logs0=$(sdp_logs)
export SDP_CONFIG=$tmp/none.conf	# no rules: SDP for every TCP socket

# The output arrived intact and went over RDMA (lib.sh): a case's evidence.
# intact_over_rdma OUT PAYLOAD CONNS [SLACK]
intact_over_rdma() { cmp -s "$tmp/in" "$1" && sdp_rdma_proven "$2" "$3" "${4:-}"; }

# SO_DOMAIN of a TCP socket a program opens, for each of: tcp4 tcp6 udp unix
domains()
{
	"$@" $py -c '
import socket
s = [socket.socket(socket.AF_INET, socket.SOCK_STREAM),
     socket.socket(socket.AF_INET6, socket.SOCK_STREAM | socket.SOCK_CLOEXEC),
     socket.socket(socket.AF_INET, socket.SOCK_DGRAM),
     socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)]
print(*[x.getsockopt(socket.SOL_SOCKET, socket.SO_DOMAIN) for x in s])'
}

fam=$(cat /sys/module/sdp/parameters/family)
head -c $((4 << 20)) /dev/urandom >"$tmp/in"
size=$(stat -c %s "$tmp/in")

ktap_plan 17

# socat and nc, both under the shim
sdp_rdma_mark
timeout 60 "$run" socat -u TCP4-LISTEN:7201,bind=$SDP_A,reuseaddr "OPEN:$tmp/out,creat,trunc" &
srv=$!
sdp_wait_listen 7201
timeout 60 "$run" nc -N $SDP_A 7201 <"$tmp/in"
wait $srv
ktap_check "socat <- nc under sdp_run: file intact, over RDMA" \
	intact_over_rdma "$tmp/out" "$size" 1 0

# curl against python3 -m http.server
sdp_rdma_mark
"$run" $py -m http.server 7202 --bind $SDP_A --directory "$tmp" >/dev/null 2>&1 &
srv=$!
sdp_wait_listen 7202
timeout 60 "$run" curl -sf -o "$tmp/out" http://$SDP_A:7202/in
kill $srv
ktap_check "curl <- python3 -m http.server under sdp_run: file intact, over RDMA" \
	intact_over_rdma "$tmp/out" "$size" 1

# iperf3 (control and data connections)
sdp_rdma_mark
timeout 60 "$run" iperf3 -s -1 -B $SDP_A -p 7203 -J >"$tmp/iperf-s.json" &
srv=$!
sdp_wait_listen 7203
timeout 60 "$run" iperf3 -c $SDP_A -p 7203 -n 8M -J >"$tmp/iperf.json"
wait $srv
# what the client sent and what the server itself counted as received
sent=$($py -c 'import json, sys; print(json.load(sys.stdin)["end"]["sum_sent"]["bytes"])' \
	<"$tmp/iperf.json" 2>/dev/null)
got=$($py -c 'import json, sys; print(json.load(sys.stdin)["end"]["sum_received"]["bytes"])' \
	<"$tmp/iperf-s.json" 2>/dev/null)
echo "# iperf3: the client sent ${sent:-?} B, the server received ${got:-?} B"
# iperf3's server stops reading at the end of the test and closes with the
# last KiB unread (over TCP too, which then resets): what it counted must
# have crossed RDMA, and it must be nearly all of it. The reset drops what
# the client still had queued: SDP received no more than it sent. -n is
# "at least": iperf3 checks the count between 128 KiB blocks and sometimes
# sends one more (over TCP too; esnet/iperf#1768).
iperf_ok() { [ "${sent:-0}" -ge $((8 << 20)) ] && [ "${sent:-0}" -le $(((8 << 20) + (128 << 10))) ] &&
	    [ "${got:-0}" -ge $((7 << 20)) ] &&
	    sdp_rdma_proven "$got" 2 $((sent - got + 65536)) reset; }
ktap_check "iperf3 under sdp_run: 8 MiB sent and received, over RDMA" iperf_ok

# socat forks a child per connection, which execs cat on the inherited socket
sdp_rdma_mark
timeout 60 "$run" socat TCP4-LISTEN:7204,bind=$SDP_A,reuseaddr,fork EXEC:cat &
srv=$!
sdp_wait_listen 7204
timeout 60 "$run" nc -N $SDP_A 7204 <"$tmp/in" >"$tmp/out"
kill $srv
ktap_check "fork+exec: cat echoes over the inherited socket, both ways over RDMA" \
	intact_over_rdma "$tmp/out" $((2 * size)) 1 0

# A TCP program's MSG_ZEROCOPY, unchanged: SO_ZEROCOPY (the shim turns it
# into SDP_ZEROCOPY on 6.1), eight 256 KiB sends, each notified once on the
# error queue, in order, not copied; each went by SrcAvail unwaited
sdp_rdma_mark
zc0=$(sdp_stat ZcopyAsyncSends)
zc_out=$(timeout 60 "$run" $py -c '
import socket, struct, threading, select
l = socket.socket(); l.bind(("'$SDP_A'", 7207)); l.listen()
c = socket.create_connection(("'$SDP_A'", 7207)); s, _ = l.accept()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
c.setsockopt(socket.SOL_SOCKET, 60, 1)                   # SO_ZEROCOPY
data = bytes(range(256)) * 1024
got = bytearray()
def read():
    while len(got) < 8 * len(data):
        b = s.recv(1 << 20)
        if not b:
            break
        got.extend(b)
t = threading.Thread(target=read); t.start()
calls = 0
for i in range(8):
    n = 0
    while n < len(data):
        n += c.send(memoryview(data)[n:], 0x4000000)     # MSG_ZEROCOPY
        calls += 1
t.join()
nxt, copied, p = 0, 0, select.poll()
p.register(c, select.POLLERR)
while nxt < calls and p.poll(10000):
    _, anc, _, _ = c.recvmsg(0, 256, 0x2000)            # MSG_ERRQUEUE
    err, origin, _, code, _, lo, hi = struct.unpack("=IBBBBII", anc[0][2][:16])
    assert origin == 5 and lo == nxt, (origin, lo, nxt)  # SO_EE_ORIGIN_ZEROCOPY
    copied += code & 1; nxt = hi + 1
print(c.getsockopt(socket.SOL_SOCKET, socket.SO_DOMAIN), bytes(got) == data * 8, calls, nxt, copied)')
echo "# MSG_ZEROCOPY under sdp_run: domain, intact, calls, notified, copied: $zc_out"
zc_ok() { [ "$zc_out" = "$fam True 8 8 0" ] && [ $(($(sdp_stat ZcopyAsyncSends) - zc0)) -eq 8 ] &&
	  sdp_rdma_proven $((8 << 18)) 1; }
ktap_check "MSG_ZEROCOPY under sdp_run: 8 sends notified in order, zero-copy, over RDMA" zc_ok

# Only TCP sockets change, in any thread; buffer sizes from the environment
# (socket creation only: no connection)
KTAP_CLASS=local
ktap_check "TCP (v4, v6) become SDP; UDP and AF_UNIX do not" \
	[ "$(domains "$run")" = "$fam $fam 2 1" ]
ktap_check "64 sockets from 8 threads at once are all SDP" [ "$("$run" $py -c '
import socket, threading
out = []
def work():
    for _ in range(8):
        with socket.socket() as s:
            out.append(s.getsockopt(socket.SOL_SOCKET, socket.SO_DOMAIN))
t = [threading.Thread(target=work) for _ in range(8)]
[x.start() for x in t]; [x.join() for x in t]
print(len(out), set(out))')" = "64 {$fam}" ]
ktap_check "sdp_run -r/-w set SO_RCVBUF/SO_SNDBUF as TCP does" [ "$("$run" -r 131072 -w 65536 $py -c '
import socket
s = socket.socket()
print(s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF), s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF))')" = "262144 131072" ]
ktap_check "SO_REUSEPORT works under sdp_run: two SDP listeners on one port" [ "$("$run" $py -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    x.bind(("'$SDP_A'", 7203))
    x.listen()
print(*[x.getsockopt(socket.SOL_SOCKET, o) for x in s
        for o in (socket.SO_DOMAIN, socket.SO_REUSEPORT)])')" = "$fam 1 $fam 1" ]

# The rules file
printf 'use tcp both python3 *:*\n' >"$tmp/tcp.conf"
ktap_check "a catch-all tcp rule for the program: plain TCP sockets" \
	[ "$(SDP_CONFIG=$tmp/tcp.conf domains "$run")" = "2 10 2 1" ]
printf 'use tcp connect nc %s:7205\n' $SDP_A >"$tmp/port.conf"
pol=$(sdp_stat FallbackPolicy)
timeout 60 "$run" socat -u TCP4-LISTEN:7205,bind=$SDP_A,reuseaddr "OPEN:$tmp/out,creat,trunc" &
srv=$!
sdp_wait_listen 7205
SDP_CONFIG=$tmp/port.conf timeout 60 "$run" nc -N $SDP_A 7205 <"$tmp/in"
wait $srv
policy_fell_back() { cmp -s "$tmp/in" "$tmp/out" && [ "$(sdp_stat FallbackPolicy)" -eq $((pol + 1)) ] &&
	echo "# PROOF fallback reason Policy"; }
KTAP_CLASS=
ktap_check "an address:port rule sends that connection over TCP, intact" policy_fell_back
KTAP_CLASS=local
printf 'use sdp both * *:*\nuse sdp both * 1.2.3.4/40:*\n' >"$tmp/bad.conf"
out=$(SDP_CONFIG=$tmp/bad.conf domains "$run" 2>"$tmp/err")
ktap_check "a bad rules file: one warning with its line number, defaults, no harm" \
	bash -c "[ '$out' = '$fam $fam 2 1' ] && [ \$(grep -c . '$tmp/err') -eq 1 ] &&
		 grep -q 'bad.conf:2: bad prefix length' '$tmp/err'"
no_new_log() { [ "$(sdp_logs)" = "$logs0" ]; }
ktap_check "no log file appears in /tmp" no_new_log

# System-wide: /etc/ld.so.preload (the guest's /etc is a throwaway overlay)
echo "$lib" >/etc/ld.so.preload
out=$(domains env)
rm -f /etc/ld.so.preload
ktap_check "/etc/ld.so.preload applies the shim to every program" [ "$out" = "$fam $fam 2 1" ]

# The module absent: programs run on TCP, sdp_run says why
for _ in $(seq 50); do rmmod sdp 2>/dev/null && break; sleep 0.2; done
if [ -d /sys/module/sdp ]; then
	ktap_result fail "module absent: could not unload sdp"
	ktap_result fail "module absent: sdp_run warns"
	ktap_result fail "module back: it loads again"
else
	timeout 60 nc -d -l $SDP_A 7206 >"$tmp/out" &
	srv=$!
	sdp_wait_listen 7206
	timeout 60 "$run" nc -N $SDP_A 7206 <"$tmp/in" 2>"$tmp/err"
	wait $srv
	KTAP_CLASS=tcp
	ktap_check "module absent: nc under sdp_run works over TCP" cmp -s "$tmp/in" "$tmp/out"
	KTAP_CLASS=local
	ktap_check "module absent: sdp_run warns" grep -q 'module is not loaded' "$tmp/err"
	ktap_check "module back: it loads again" insmod "$ko" family="$fam"
fi
ktap_finished
