#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run the sdp selftests (kselftest layout) and print KTAP, then what ran
# where, and a last line "N passed, N failed, N skipped" over every case.
#   run_kselftest.sh [TEST...]      (default: every test the Makefile lists)
#
# Each case must say what it ran over with a "# PROOF <class> ..." line
# before its result (sdp_util.h and lib.sh print them only once the evidence
# is checked): rdma (SDP over RDMA, its bytes seen in the QP's packets),
# fallback (SDP on its native TCP socket), tcp (the AF_INET oracle), local
# (no connection: socket API, parsers, module life). A passing case without
# one is a failure: the count must never claim what nothing checked.
#
# The kernel log is never cleared: a marker goes into it before each
# program, and anything lib.sh's SDP_SPLAT_RE matches after the marker
# fails that program, with the excerpt.
#
# SDP_SUMMARY=FILE also writes the counts there (for scripts/check-guest).
cd "$(dirname "$0")" || exit 1
. ./lib.sh

timeout_s=$(sed -n 's/^timeout=//p' settings)
# scripts/debug-kernel's KASAN/lockdep kernel runs the suite about four
# times slower (sdp_stream passed 600 s there)
slow=1
case $(uname -r) in
*-sdp-debug) timeout_s=$((timeout_s * 4)) slow=10 ;;
esac
# sdp_soak's random_lives runs SDP_SOAK_SECS in each of its two variants;
# sdp_wire's random peer SDP_FUZZ_SECONDS, ten times that on the debug kernel
timeout_s=$((${timeout_s:-300} + 2 * ${SDP_SOAK_SECS:-0} + slow * ${SDP_FUZZ_SECONDS:-0}))
# scripts/check-guest's self-test sets its own
timeout_s=${SDP_PROGRAM_TIMEOUT:-$timeout_s}
if [ $# -gt 0 ]; then
	tests=("$@")
else
	read -ra tests <<<"$(make -s list)"
	# scripts/check runs these on another kernel of its matrix (PROG, or
	# PROG=BUILD: part of it, BUILD the rest, runs here), and these
	# programs' TCP oracle cases (their _sdponly build runs here)
	for t in ${SDP_ELSEWHERE:-} ${SDP_ORACLE_ELSEWHERE:-}; do
		for i in "${!tests[@]}"; do
			[ "${tests[i]}" != "${t%%=*}" ] && continue
			if [[ " ${SDP_ORACLE_ELSEWHERE:-} " == *" $t "* ]]; then
				tests[i]=${t}_sdponly
				echo "# $t: its TCP oracle runs on another kernel of the matrix"
			elif [ "$t" != "${t%%=*}" ]; then
				tests[i]=${t#*=}
				echo "# ${t%%=*}: part runs on another kernel of the matrix, ${t#*=} here"
			else
				unset 'tests[i]'
				echo "# $t: runs on another kernel of the matrix"
			fi
		done
	done
	tests=("${tests[@]}")
fi

# Reads one program's output; prints "pass fail skip rdma fallback tcp local",
# then one line per skip reason ("skip <reason>") and per failure
# ("fail <name> -- <where the harness saw it fail>").
tally()
{
	awk '
	BEGIN { rank["local"] = 1; rank["tcp"] = 2; rank["fallback"] = 3; rank["rdma"] = 4 }
	/^#  RUN  / { running = $3; detail = ""; nd = 0; last = ""; next }
	# Where the harness saw a case fail (a check and the log line after
	# it), for the summary: a CI log may keep only the end.
	/^# [^ ]+\.[ch]:[0-9]+:/ {
		line = substr($0, 3)
		if (($0 ~ /:Expected / || follow) && nd < 4) {
			detail = detail (nd++ ? " | " : "") line
			follow = $0 ~ /:Expected /
		} else {
			follow = 0
		}
		last = line
		next
	}
	{ follow = 0 }
	/^# PROOF (rdma|fallback|tcp|local)( |$)/ {
		if (rank[$3] > rank[cls]) cls = $3
		next
	}
	# The last comment before a case fails: lib.sh says "not over RDMA as
	# expected: ...", the C harness "Test terminated by timeout".
	/^# / && !/^# PROOF / { note = substr($0, 3) }
	/^(not )?ok [0-9]+ / {
		bad = /^not ok/
		name = $0
		sub(/^(not )?ok [0-9]+ /, "", name)
		if (name ~ /# SKIP/) {
			why = name; sub(/.*# SKIP */, "", why)
			# the C harness drops the name of a skipped case
			if (name ~ /^# SKIP/ && running != "") why = running ": " why
			skip++; reason[why]++
		} else if (bad) {
			if (detail == "") detail = last
			if (detail == "") detail = note
			fail++; failed[++nf] = name (detail == "" ? "" : " -- " detail)
		} else if (cls == "") {
			fail++; failed[++nf] = name " (passed, but no PROOF line says what it ran over)"
		} else {
			pass++; n[cls]++
		}
		cls = ""; note = ""; detail = ""; nd = 0; last = ""
		next
	}
	/^# Totals: / {
		split($0, f, /[: ]+/)
		tp += f[4]; tf += f[6]; ts += f[12]; te += f[14]; totals = 1
	}
	END {
		# results lost (a crash mid-program) or a case without a result
		if (totals && tp + tf + te + ts != pass + fail + skip) {
			fail++; failed[++nf] = "results and Totals disagree (lost output?)"
		}
		printf "%d %d %d %d %d %d %d\n", pass, fail, skip, n["rdma"], n["fallback"], n["tcp"], n["local"]
		for (r in reason) printf "skip %d %s\n", reason[r], r
		for (i = 1; i <= nf; i++) printf "fail %s\n", failed[i]
	}'
}

# Runs one program under the timeout, in a session of its own, its output
# into $2 and onto ours as it comes. The session is killed after: the C
# harness runs each case in a process group of its own, which timeout's
# signal does not reach, and what is left must neither hold our output nor
# live on into the next program. Returns the program's status, and sets
# stuck to what SIGKILL could not end: tasks stuck in the kernel.
run_one() # run_one PROGRAM OUTFILE
{
	local sidf=$2.sid sid pid rc i
	setsid -w sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$sidf" \
		timeout -k 10 "$timeout_s" "./$1" \
		</dev/null >"$2" 2>&1 &
	pid=$!
	tail -n +1 -f --pid=$pid "$2" | relay_timed
	wait $pid
	rc=$?
	stuck=
	sid=$(cat "$sidf" 2>/dev/null)
	rm -f "$sidf"
	[ -n "$sid" ] || return $rc
	pkill -KILL -s "$sid"
	for i in $(seq 50); do
		stuck=$(pgrep -s "$sid") || return $rc
		sleep 0.2
	done
	for pid in $stuck; do
		echo "# stuck after SIGKILL: $pid $(cat /proc/$pid/comm 2>/dev/null)"
		sed 's/^/#   /' /proc/$pid/stack 2>/dev/null
	done
	return $rc
}

# Relays a program's output as TAP comments, then names its three slowest
# cases (SDP_SLOWEST of them if set): what to look at when make check
# grows too long.
relay_timed()
{
	local line now start=${EPOCHREALTIME/./}
	local -a took=()

	while IFS= read -r line || [ -n "$line" ]; do
		printf '# %s\n' "$line"
		case $line in
		'#  RUN '*) start=${EPOCHREALTIME/./} ;;
		'ok '* | 'not ok '*)
			now=${EPOCHREALTIME/./}
			line=${line#not }
			line=${line#ok * }
			took+=("$(((now - start) / 1000000)) s ${line%% # *}")
			start=$now
			;;
		esac
	done
	[ ${#took[@]} -gt 0 ] || return 0
	printf '# slowest: %s\n' "$(printf '%s\n' "${took[@]}" | sort -rn | head -n "${SDP_SLOWEST:-3}" | paste -sd '|' | sed 's/|/ | /g')"
}

sum_pass=0 sum_fail=0 sum_skip=0 sum_rdma=0 sum_fb=0 sum_tcp=0 sum_local=0
skips=()
failures=()
times=()
n=0
echo "TAP version 13"
echo "1..${#tests[@]}"
for t in "${tests[@]}"; do
	n=$((n + 1))
	echo "# selftests: sdp: $t"
	out=$(mktemp)
	mark=$(sdp_kmsg_mark "$t")
	t0=$SECONDS
	run_one "$t" "$out"
	rc=$?
	# what each program costs the suite, for keeping make check's time
	echo "# $t: ran $((SECONDS - t0)) s"
	times+=("$((SECONDS - t0)) $t")
	{
		read -r p f s r fb tc lo
		while read -r kind rest; do
			case $kind in
			skip) skips+=("$t: $rest") ;;
			fail) failures+=("$t: $rest") ;;
			esac
		done
	} < <(tally <"$out")
	rm -f "$out"
	why=
	if [ -n "$stuck" ]; then
		f=$((f + 1))
		why="stuck in the kernel"
		failures+=("$t: tasks $stuck still there after SIGKILL")
	fi
	# A crash, a timeout or an exit status the results do not explain.
	if [ "$rc" -ne 0 ] && [ "$rc" -ne "$KSFT_SKIP" ] && [ "$f" -eq 0 ]; then
		f=$((f + 1))
		why="exit=$rc"
		failures+=("$t: exit status $rc with no failed case")
	fi
	if [ "$rc" -eq "$KSFT_SKIP" ] && [ $((p + f + s)) -eq 0 ]; then
		s=1
		skips+=("$t: 1 whole program")
	fi
	if splat=$(sdp_splat_since "$mark"); then
		f=$((f + 1))
		why="kernel splat"
		failures+=("$t: kernel log splat while it ran")
		echo "# kernel log since this program started, around each splat:"
		echo "$splat" | sed 's/^/#   /'
	fi
	sum_pass=$((sum_pass + p)) sum_fail=$((sum_fail + f)) sum_skip=$((sum_skip + s))
	sum_rdma=$((sum_rdma + r)) sum_fb=$((sum_fb + fb)) sum_tcp=$((sum_tcp + tc)) sum_local=$((sum_local + lo))
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "not ok $n selftests: sdp: $t # TIMEOUT ${timeout_s}s"
	elif [ "$f" -gt 0 ]; then
		echo "not ok $n selftests: sdp: $t # ${why:-exit=$rc}"
	elif [ "$rc" -eq "$KSFT_SKIP" ]; then
		echo "ok $n selftests: sdp: $t # SKIP"
	else
		echo "ok $n selftests: sdp: $t"
	fi
done

summary()
{
	# where make check's time goes (its budget: Documentation/testing.rst)
	echo "# time per program, slowest first: $(printf '%s\n' "${times[@]}" | sort -rn |
		awk '{ printf "%s%s %d s", (NR > 1 ? ", " : ""), $2, $1; t += $1 }
		     END { printf " (%d s in all)", t }')"
	echo "# ran over: SDP over RDMA (proven per case) $sum_rdma, SDP over fallback TCP (proven per case) $sum_fb, TCP oracle (AF_INET) $sum_tcp, local (no connection) $sum_local"
	echo "# skipped: $sum_skip"
	[ ${#skips[@]} -eq 0 ] || printf '#   %s\n' "${skips[@]}"
	echo "# failed: $sum_fail"
	[ ${#failures[@]} -eq 0 ] || printf '#   %s\n' "${failures[@]}"
}
summary
[ -z "${SDP_SUMMARY:-}" ] || {
	echo "counts $sum_pass $sum_fail $sum_skip $sum_rdma $sum_fb $sum_tcp $sum_local"
	summary
} >"$SDP_SUMMARY"
echo "$sum_pass passed, $sum_fail failed, $sum_skip skipped"
[ "$sum_fail" -eq 0 ]
