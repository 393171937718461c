#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Program conformance: unmodified Debian programs run under sdp_run and
# again over plain TCP, the oracle; both runs must give the same bytes
# (checksums) and the same exit codes, and the SDP run must be proven over
# RDMA. nginx is the event-loop server real sites run: a master that forks
# its workers, non-blocking sockets in edge-triggered epoll, sendfile() with
# tcp_nopush (TCP_CORK), keep-alive and range requests; curl is the client.
# telnet's "send synch" is urgent data (MSG_OOB) from a real program;
# socat forking per connection serves nc clients streaming both ways.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

run=$here/../../userspace/sdp_run
nginx=${SDP_NGINX:-}
[ -r /proc/net/sdp_stats ] || { echo "# sdp not loaded"; exit $KSFT_SKIP; }
[ -x "$run" ] || { echo "# build userspace/ first"; exit $KSFT_SKIP; }
[ -x "$nginx" ] || { echo "# no nginx: scripts/deps.sh fetches it (SDP_NGINX)"; exit $KSFT_SKIP; }
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$tmp"' EXIT
: >"$tmp/none.conf"
export SDP_CONFIG=$tmp/none.conf	# no rules: SDP for every TCP socket

mkdir -p "$tmp/www"
head -c $((64 << 20)) /dev/urandom >"$tmp/www/big"
head -c 1 /dev/urandom >"$tmp/www/one"
head -c 4097 /dev/urandom >"$tmp/www/page"
head -c $(((1 << 20) + 3)) /dev/urandom >"$tmp/www/mib"

# nginx on PORT, as a user's site would set it up.
nginx_conf()	# PORT
{
	cat <<EOF
daemon off;
master_process on;
worker_processes 2;
user root;
pid $tmp/nginx-$1.pid;
error_log $tmp/error-$1.log warn;
events { worker_connections 64; use epoll; }
http {
	access_log off;
	default_type application/octet-stream;
	sendfile on;
	tcp_nopush on;
	tcp_nodelay on;
	keepalive_timeout 10;
	client_body_temp_path $tmp/body-$1;
	proxy_temp_path $tmp/proxy-$1;
	fastcgi_temp_path $tmp/fastcgi-$1;
	uwsgi_temp_path $tmp/uwsgi-$1;
	scgi_temp_path $tmp/scgi-$1;
	server {
		listen $SDP_A:$1;
		root $tmp/www;
	}
}
EOF
}

# Starts nginx on PORT, under sdp_run when WRAP is "$run" ("" for TCP).
nginx_start()	# PORT WRAP...
{
	local port=$1
	shift
	nginx_conf "$port" >"$tmp/nginx-$port.conf"
	"$@" "$nginx" -p "$tmp" -e "$tmp/error-$port.log" -c "$tmp/nginx-$port.conf" &
	nginx_pid=$!
	sdp_wait_listen "$port"
}

nginx_stop() { kill "$nginx_pid"; wait "$nginx_pid"; }

# What one client run gave: exit code, then curl's report per URL and the
# checksum of the bodies (-o body.N, in order). The same command runs
# under sdp_run and over TCP.
fetch()		# OUT WRAP CURL-ARGS...
{
	local out=$1 wrap=$2
	shift 2
	rm -f "$tmp"/body.*
	(cd "$tmp" && timeout 300 $wrap curl -s \
		-w '%{http_code} %{size_download} %{num_connects}\n' "$@" \
		>"$tmp/report"; echo "exit $?" >"$out")
	cat "$tmp/report" >>"$out"
	cat "$tmp"/body.* | sha256sum >>"$out"
}

# No SDP connection was made since the mark: the oracle ran over TCP.
over_tcp()
{
	[ "$(sdp_stat ActiveOpens)" -eq "$o_active" ] &&
		[ "$(sdp_stat PassiveOpens)" -eq "$o_passive" ] &&
		[ "$(sdp_stat TxBytes)" -eq "$m_tx" ] || return 1
	echo "# PROOF tcp"
}
tcp_mark()
{
	o_active=$(sdp_stat ActiveOpens) o_passive=$(sdp_stat PassiveOpens)
	m_tx=$(sdp_stat TxBytes)
}

# The SDP run and the TCP run agree, and both are what was expected.
same()		# NAME EXPECTED
{
	if ! cmp -s "$tmp/$1.sdp" "$tmp/$1.tcp" || ! cmp -s "$tmp/$1.tcp" "$2"; then
		echo "# expected:"; sed 's/^/#   /' "$2"
		echo "# over SDP:"; sed 's/^/#   /' "$tmp/$1.sdp"
		echo "# over TCP:"; sed 's/^/#   /' "$tmp/$1.tcp"
		return 1
	fi
}

# What a case should give: exit 0, one report line per URL, the checksum of
# the bodies one after the other.
expect()	# NAME "REPORT-LINES" FILES...
{
	local name=$1 lines=$2
	shift 2
	{ echo "exit 0"; printf '%s\n' "$lines"; cat "$@" | sha256sum; } >"$tmp/$name.want"
}

# Each case: nginx and curl under sdp_run (over RDMA, proven), then both
# over TCP; then the comparison. In CURL-ARGS, PORT stands for the port.
case_both()	# NAME PAYLOAD CONNS CURL-ARGS
{
	local name=$1 payload=$2 conns=$3 args
	shift 3

	sdp_rdma_mark
	nginx_start 7301 "$run" || return 1
	args=("${@//PORT/7301}")
	fetch "$tmp/$name.sdp" "$run" "${args[@]}"
	nginx_stop
	sdp_rdma_proven "$payload" "$conns" $((64 << 10)) || return 1

	tcp_mark
	nginx_start 7302 || return 1
	args=("${@//PORT/7302}")
	fetch "$tmp/$name.tcp" "" "${args[@]}"
	nginx_stop
	over_tcp || return 1
	same "$name" "$tmp/$name.want"
}

# Waits up to 30 s for PATH to hold at least BYTES.
wait_size()	# PATH BYTES
{
	local _
	for _ in $(seq 300); do
		[ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0
		sleep 0.1
	done
}

# telnet sends a line, then "send synch" (IAC DM, urgent), then a line, to
# socat writing what it reads to a file (SOCAT-OPTS: so-oobinline or
# none); once under sdp_run (proven over RDMA), once over TCP.
telnet_case()	# NAME SOCAT-OPTS
{
	local name=$1 opts=$2 mode wrap port=7303 srv out
	for mode in sdp tcp; do
		if [ $mode = sdp ]; then wrap=$run; sdp_rdma_mark; else wrap=; tcp_mark; fi
		out=$tmp/$name.$mode
		timeout 60 $wrap socat -u "TCP4-LISTEN:$port,bind=$SDP_A,reuseaddr$opts" \
			"OPEN:$out,creat,trunc" &
		srv=$!
		sdp_wait_listen $port || return 1
		# Each step once the last one reached socat's file: telnet
		# exits at end of input without sending what it has not read,
		# so on a slow kernel a fixed sleep could drop "bye".
		{ printf 'hello\n'; wait_size "$out" 7
		  printf '\035send synch\n'; wait_size "$out" 8
		  printf 'bye\n'; wait_size "$out" 12; } |
			timeout 60 $wrap telnet $SDP_A $port >/dev/null 2>&1
		wait $srv
		if [ $mode = sdp ]; then
			# 14 bytes sent: two lines and IAC DM
			sdp_rdma_proven 14 1 0 || return 1
		else
			over_tcp || return 1
		fi
		port=$((port + 1))
	done
	cmp -s "$tmp/$name.sdp" "$tmp/$name.tcp" || {
		echo "# over SDP: $(od -An -c "$tmp/$name.sdp")"
		echo "# over TCP: $(od -An -c "$tmp/$name.tcp")"
		return 1
	}
}

# A server that forks per connection (socat fork, each child execs cat, an
# echo) and two nc clients streaming 1 MiB each through it, one after the
# other; once under sdp_run (proven over RDMA), once over TCP. What the
# clients got back and their exit codes, both ways.
echo_case()
{
	local mode wrap port=7310 srv i
	for mode in sdp tcp; do
		if [ $mode = sdp ]; then wrap=$run; sdp_rdma_mark; else wrap=; tcp_mark; fi
		timeout 120 $wrap socat "TCP4-LISTEN:$port,bind=$SDP_A,reuseaddr,fork" EXEC:cat &
		srv=$!
		sdp_wait_listen $port || return 1
		for i in 1 2; do
			timeout 60 $wrap nc -N $SDP_A $port <"$tmp/www/mib" >"$tmp/echo.$mode.$i"
			echo "exit $?" >>"$tmp/echo.$mode.$i"
		done
		kill $srv
		wait $srv
		if [ $mode = sdp ]; then
			sdp_rdma_proven $((4 * ((1 << 20) + 3))) 2 || return 1
		else
			over_tcp || return 1
		fi
		port=$((port + 1))
	done
	{ cat "$tmp/www/mib"; echo "exit 0"; } >"$tmp/echo.want"
	for i in 1 2; do
		cmp -s "$tmp/echo.sdp.$i" "$tmp/echo.tcp.$i" && cmp -s "$tmp/echo.tcp.$i" "$tmp/echo.want" || {
			echo "# client $i: $(tail -c 20 "$tmp/echo.sdp.$i" | od -An -c) over SDP, $(tail -c 20 "$tmp/echo.tcp.$i" | od -An -c) over TCP"
			return 1
		}
	done
}

# The urgent byte kept in the stream (IAC DM there), or lost from it.
has_iac_dm() { od -An -tx1 "$tmp/$1.tcp" | tr -d ' \n' | grep -q 'fff2'; }

ktap_plan 6

# 1. A 64 MiB body through sendfile() under tcp_nopush, to curl.
expect big "200 $((64 << 20)) 1" "$tmp/www/big"
KTAP_CLASS=
ktap_check "nginx -> curl: 64 MiB by sendfile, same bytes and exit code as TCP, over RDMA" \
	case_both big $((64 << 20)) 1 -o body.1 "http://$SDP_A:PORT/big"

# 2. Keep-alive: three bodies over one connection.
expect keepalive "200 1 1"$'\n'"200 4097 0"$'\n'"200 $(((1 << 20) + 3)) 0" \
	"$tmp/www/one" "$tmp/www/page" "$tmp/www/mib"
ktap_check "nginx -> curl: three files over one keep-alive connection, as over TCP, over RDMA" \
	case_both keepalive $(((1 << 20) + 4101)) 1 \
	-o body.1 "http://$SDP_A:PORT/one" -o body.2 "http://$SDP_A:PORT/page" \
	-o body.3 "http://$SDP_A:PORT/mib"

# 3. A range: sendfile() from an unaligned offset to the middle of a page.
dd if="$tmp/www/big" of="$tmp/range" bs=64K skip=4095 count=$((3 << 20)) iflag=skip_bytes,count_bytes status=none
expect range "206 $((3 << 20)) 1" "$tmp/range"
ktap_check "nginx -> curl: a range from an unaligned offset, as over TCP, over RDMA" \
	case_both range $((3 << 20)) 1 \
	-r 4095-$((4095 + (3 << 20) - 1)) -o body.1 "http://$SDP_A:PORT/big"

# 4. and 5. telnet's urgent data, with and without SO_OOBINLINE at socat.
ktap_check "telnet send synch -> socat so-oobinline: urgent byte inline, as over TCP, over RDMA" \
	eval 'telnet_case synch_inline ,so-oobinline && has_iac_dm synch_inline'
ktap_check "telnet send synch -> socat: urgent byte out of the stream, as over TCP, over RDMA" \
	eval 'telnet_case synch_oob "" && ! has_iac_dm synch_oob'

# 6. fork per connection, streaming both ways.
ktap_check "socat fork+exec cat echoes 1 MiB to each of two nc clients, as over TCP, over RDMA" \
	echo_case
ktap_finished
