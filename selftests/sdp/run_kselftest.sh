#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run the sdp selftests (kselftest layout) and print KTAP, ending with a
# plain "N passed, N failed, N skipped" line counted over every test case.
# Exits non-zero if anything failed.
#   run_kselftest.sh [TEST...]      (default: every test the Makefile lists)
cd "$(dirname "$0")" || exit 1

timeout_s=$(sed -n 's/^timeout=//p' settings)
if [ $# -gt 0 ]; then
	tests=("$@")
else
	read -ra tests <<<"$(make -s list)"
fi

pass=0 fail=0 skip=0 n=0
echo "TAP version 13"
echo "1..${#tests[@]}"
for t in "${tests[@]}"; do
	n=$((n + 1))
	echo "# selftests: sdp: $t"
	out=$(mktemp)
	timeout -k 10 "${timeout_s:-300}" "./$t" 2>&1 | tee "$out" | sed 's/^/# /'
	rc=${PIPESTATUS[0]}
	# A script may run several harness programs: add up their totals.
	totals=$(sed -n 's/^# Totals: pass:\([0-9]*\) fail:\([0-9]*\) xfail:[0-9]* xpass:[0-9]* skip:\([0-9]*\) error:\([0-9]*\).*/\1 \2 \3 \4/p' "$out" |
		awk '{ p += $1; f += $2; s += $3; e += $4 } END { if (NR) print p, f, s, e }')
	rm -f "$out"
	read -r p f s e <<<"${totals:-0 0 0 0}"
	f=$((f + e))
	# A crash, a timeout or an exit status that contradicts the totals is
	# one more failure.
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 4 ] && [ "$f" -eq 0 ]; then
		f=$((f + 1))
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "not ok $n selftests: sdp: $t # TIMEOUT ${timeout_s}s"
	elif [ "$f" -gt 0 ]; then
		echo "not ok $n selftests: sdp: $t # exit=$rc"
	elif [ "$rc" -eq 4 ]; then
		echo "ok $n selftests: sdp: $t # SKIP"
	else
		echo "ok $n selftests: sdp: $t"
	fi
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
