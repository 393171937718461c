#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Not a test of sdp: the harness's self-test (scripts/check-guest) runs this
# through run_kselftest.sh and expects it to FAIL. It passes on its own, but
# arms debugfs sdp/inject_warn so that its receive over RDMA logs a WARN;
# the runner must see the splat and fail this program by name. Its text is
# lib.sh's SDP_INJECTED_WARN: the self-test excuses that report, once, and
# no other (sdp_splat_expected).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

knob=/sys/kernel/debug/sdp/inject_warn
[ -w $knob ] || { echo "# no $knob"; exit 1; }
addr=$(sdp_socat_addr $SDP_A 7299)
ktap_plan 1
echo 1 >$knob
timeout 30 socat -u SOCKET-LISTEN:27:6:$addr,reuseaddr - >/tmp/sdp_inject_warn.out &
srv=$!
sdp_wait_listen 7299
echo ping | timeout 30 socat -u - SOCKET-CONNECT:27:6:$addr
wait $srv
# the knob is back to 0: a receive over RDMA took it
delivered() { [ "$(cat /tmp/sdp_inject_warn.out)" = ping ] && [ "$(cat $knob)" = 0 ]; }
KTAP_CLASS=rdma
ktap_check "one message over RDMA with a WARN armed" delivered
rm -f /tmp/sdp_inject_warn.out
ktap_finished
