#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The core semantic tests again, on sockets that fell back to TCP: with
# net.sdp.enabled=0 every SDP socket (client, listener, accepted) runs over
# its native TCP socket, and must still behave exactly as TCP (MSG_ZEROCOPY
# included). (The TCP oracle's own cases ran in the RDMA pass: these builds
# leave them out.)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ -w /proc/sys/net/sdp/enabled ] || { echo "# sdp not loaded"; exit $KSFT_SKIP; }
trap 'echo 1 >/proc/sys/net/sdp/enabled' EXIT
echo 0 >/proc/sys/net/sdp/enabled
rc=0
# (scripts/check's matrix may run some on one kernel only)
for t in ${SDP_FALLBACK_PROGS:-sdp_stream sdp_integrity sdp_zcopy}; do
	SDP_EXPECT_TRANSPORT=tcp "$here/${t}_sdponly" || rc=1
done
exit $rc
