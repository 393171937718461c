#!/bin/bash
# Install what a fresh Debian 12 lacks to build and test sdp, and fetch the
# guest kernel (never installed on the host). Idempotent; silent when all is
# present. Prints the cache directory's kernel tree on request (--kroot).
set -euo pipefail

PKGS=(
	build-essential make gcc libc6-dev sparse
	linux-headers-amd64 linux-source-6.1 xz-utils
	qemu-system-x86 busybox-static kmod cpio iproute2
	rdma-core ibverbs-utils rdmacm-utils perftest libibverbs-dev librdmacm-dev
	socat netcat-openbsd curl python3 iperf3 qperf procps bc gnuplot-nox
)

SDP_CACHE=${SDP_CACHE:-/var/cache/sdp-dev}

log() { [ -n "${SDP_DEPS_QUIET:-}" ] || echo "deps: $*" >&2; }

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || { echo "deps: need root to install: ${missing[*]}" >&2; exit 1; }
	echo "deps: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# The guest runs the kernel the installed headers were built for.
KVER=${KVER:-$(dpkg-query -W -f='${Depends}' linux-headers-amd64 |
	sed -n 's/.*linux-headers-\([^ ,]*\).*/\1/p')}
[ -n "$KVER" ] || { echo "deps: cannot tell KVER from linux-headers-amd64" >&2; exit 1; }

kroot=$SDP_CACHE/kernel/$KVER
if [ ! -e "$kroot/.done" ]; then
	echo "deps: fetching linux-image-$KVER into $kroot" >&2
	rm -rf "$kroot"
	mkdir -p "$kroot/deb"
	(cd "$kroot/deb" && apt-get download -qq -o APT::Sandbox::User=root "linux-image-$KVER" >&2 ||
		apt-get download -qq -o APT::Sandbox::User=root "linux-image-$KVER-unsigned" >&2)
	dpkg -x "$kroot"/deb/*.deb "$kroot/root"
	rm -rf "$kroot/deb"
	depmod -b "$kroot/root" "$KVER"
	touch "$kroot/.done"
fi

# kselftest headers are taken from Debian's kernel source at build time and
# never committed.
ksrc=$SDP_CACHE/kselftest
if [ ! -e "$ksrc/.done" ]; then
	log "extracting kselftest headers from linux-source-6.1"
	rm -rf "$ksrc"
	mkdir -p "$ksrc"
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$ksrc" --strip-components=4 \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/tools/testing/selftests/kselftest.h
	touch "$ksrc/.done"
fi

case "${1:-}" in
--kver) echo "$KVER" ;;
--kroot) echo "$kroot/root" ;;
--kselftest) echo "$ksrc" ;;
esac
