#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The module's life cycle: the family exists while it is loaded, sockets pin
# it, a taken family number fails the load cleanly, and it unloads.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ko=${SDP_KO:-$here/../../net/sdp/sdp.ko}
[ -r "$ko" ] || { echo "# no sdp.ko at $ko (set SDP_KO)"; exit $KSFT_SKIP; }

# Prints the errno name socket(family, SOCK_STREAM) gets, or "ok".
try_socket()
{
	python3 -c '
import socket, sys, errno
try:
    socket.socket(int(sys.argv[1]), socket.SOCK_STREAM).close()
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])' "$1"
}

fam=$(cat /sys/module/sdp/parameters/family 2>/dev/null || echo 27)
KTAP_CLASS=local
ktap_plan 7

ktap_check "module loaded" grep -q '^sdp ' /proc/modules
ktap_check "socket($fam, SOCK_STREAM) succeeds" [ "$(try_socket "$fam")" = ok ]

python3 -c 'import socket, sys, time
s = socket.socket(int(sys.argv[1]), socket.SOCK_STREAM); print("held", flush=True); time.sleep(60)' "$fam" >/tmp/sdp_hold.$$ &
holder=$!
for _ in $(seq 50); do grep -q held /tmp/sdp_hold.$$ && break; sleep 0.1; done
# refused because of the open socket: it is held, and the module counts it
refused_busy() { grep -q held /tmp/sdp_hold.$$ &&
		 [ "$(awk '$1 == "sdp" { print $3 }' /proc/modules)" -gt 0 ] &&
		 ! rmmod sdp 2>/dev/null; }
ktap_check "rmmod refused while a socket is open" refused_busy
kill $holder
wait $holder 2>/dev/null
rm -f /tmp/sdp_hold.$$

ktap_check "rmmod succeeds once sockets are closed" rmmod sdp
ktap_check "family gone after unload" [ "$(try_socket "$fam")" = EAFNOSUPPORT ]

# AF_INET is always taken: the load must fail and say why (in the kernel
# log after our marker: the log is never cleared), in af_sdp.c's words:
# sock_diag's AF_INET handler is inet_diag's once that is loaded (-EBUSY),
# the family is inet's (-EEXIST). A prefix would take "family 27" or
# another error for it.
mark=$(sdp_kmsg_mark "taken family")
why="another module holds it, load with family=N"
logged_why() { sdp_kmsg_line_since "$mark" "sdp: cannot register address family 2 (-16): $why" \
	"sdp: cannot register address family 2 (-17): $why"; }
if insmod "$ko" family=2 2>/dev/null; then
	rmmod sdp
	ktap_result fail "load with a taken family fails"
else
	ktap_check "load with a taken family fails and logs why" logged_why
fi

insmod "$ko" family="$fam"
ktap_check "reloaded module serves sockets" [ "$(try_socket "$fam")" = ok ]
ktap_finished
