#!/bin/bash
# What `make check`, `make demo` and `make bench` need, and nothing that a
# plain build needs (that takes only kernel headers). Idempotent; silent when
# all is present.
#
#   scripts/deps.sh                  install the test and VM packages (root)
#   scripts/deps.sh --kver NAME      the kernel release NAME stands for: 6.1 (Debian 12's
#                                    kernel), 6.12 (its newer line) or a release itself
#   scripts/deps.sh --kernel NAME    fetch that kernel's image and headers into the
#                                    cache (never installed on the host); print its release
#   scripts/deps.sh --kroot KVER     the unpacked image (boot/, lib/modules/)
#   scripts/deps.sh --kdir KVER      its headers, to build modules against
#   scripts/deps.sh --kselftest      kselftest_harness.h and kselftest.h
#   scripts/deps.sh --kbuild-deps    what building a kernel takes (scripts/debug-kernel)
#   scripts/deps.sh --nginx          the unpacked nginx binary the program tests run
#   scripts/deps.sh --drbd           the unpacked drbd-utils tree sdp_drbd.sh runs
#   scripts/deps.sh --siw KVER       soft-iWARP (siw.ko) for KVER, built from Debian's
#                                    linux-source of its line: Debian ships no siw
set -euo pipefail

# dwarves: pahole, which 6.12's kbuild runs to give a module its BTF.
PKGS=(
	build-essential make gcc libc6-dev sparse dwarves
	linux-source-6.1 xz-utils
	qemu-system-x86 busybox-static kmod cpio iproute2 util-linux
	rdma-core ibverbs-utils rdmacm-utils perftest libibverbs-dev librdmacm-dev
	socat netcat-openbsd curl python3 iperf3 qperf procps bc gnuplot-nox inetutils-telnet
	dkms fakeroot lintian man-db strace linux-perf
	libcrypt1 libpcre2-8-0 libssl3 zlib1g
)
# Building a whole kernel (scripts/debug-kernel), on top of PKGS.
KBUILD_PKGS=(flex bison bc libelf-dev libssl-dev cpio linux-source-6.1 xz-utils)

SDP_CACHE=${SDP_CACHE:-/var/cache/sdp-dev}

log() { [ -n "${SDP_DEPS_QUIET:-}" ] || echo "deps: $*" >&2; }
die() { echo "deps: $*" >&2; exit 1; }

apt_updated=
apt_update()
{
	[ -z "$apt_updated" ] || return 0
	apt_updated=1
	apt-get update -qq >&2
}

install_pkgs()
{
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	[ "$(id -u)" = 0 ] || die "need root to install: ${missing[*]}"
	echo "deps: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt_update
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# The release a headers meta package points to (Debian's newest of that line).
meta_kver()
{
	local v
	v=$(apt-cache show --no-all-versions "$1" 2>/dev/null |
		sed -n 's/^Depends:.*linux-headers-\([^ ,]*\).*/\1/p' | head -n1)
	if [ -z "$v" ] && [ "$(id -u)" = 0 ]; then
		apt_update
		v=$(apt-cache show --no-all-versions "$1" 2>/dev/null |
			sed -n 's/^Depends:.*linux-headers-\([^ ,]*\).*/\1/p' | head -n1)
	fi
	[ -n "$v" ] || die "cannot tell the kernel release from package $1"
	echo "$v"
}

kver_of()
{
	case $1 in
	6.1) meta_kver linux-headers-amd64 ;;
	6.12) meta_kver linux-headers-6.12-amd64 ;;
	*) echo "$1" ;;
	esac
}

kroot_of() { echo "$SDP_CACHE/kernel/$1/root"; }

kdir_of()
{
	local kroot
	kroot=$(kroot_of "$1")
	echo "$kroot/usr/src/linux-headers-$1"
}

# The image and the headers of Debian's kernel $1, unpacked with dpkg -x: the
# headers packages depend on the image, so installing them would install a
# kernel on the host. A kernel built here (scripts/debug-kernel) is found in
# the same place and never fetched.
fetch_kernel()
{
	local kver=$1 dir kroot common kbuild
	dir=$SDP_CACHE/kernel/$kver
	kroot=$dir/root
	[ -e "$dir/.fetched" ] && return 0
	[ "$(id -u)" = 0 ] || die "need root to fetch kernel $kver into $SDP_CACHE"
	install_pkgs kmod
	echo "deps: fetching linux-image-$kver and its headers into $dir" >&2
	rm -rf "$dir"
	mkdir -p "$dir/deb"
	(
		cd "$dir/deb"
		get() { apt-get download -qq -o APT::Sandbox::User=root "$@" >&2; }
		get "linux-image-$kver" || get "linux-image-$kver-unsigned" ||
			{ apt_update; get "linux-image-$kver" || get "linux-image-$kver-unsigned"; }
		get "linux-headers-$kver"
		common=$(apt-cache show --no-all-versions "linux-headers-$kver" |
			sed -n 's/^Depends:.*\(linux-headers-[^ ,]*-common\).*/\1/p' | head -n1)
		kbuild=$(apt-cache show --no-all-versions "linux-headers-$kver" |
			sed -n 's/^Depends:.*\(linux-kbuild-[^ ,]*\).*/\1/p' | head -n1)
		get "$common" "$kbuild"
	) || die "cannot download kernel $kver"
	for deb in "$dir"/deb/*.deb; do
		dpkg -x "$deb" "$kroot"
	done
	rm -rf "$dir/deb"
	# The headers' Makefile includes its -common half by absolute path.
	sed -i "s|^include /usr/src/|include $kroot/usr/src/|" "$(kdir_of "$kver")/Makefile"
	depmod -b "$kroot" "$kver"
	touch "$dir/.fetched"
}

# Programs the tests run that Debian 12 has but that must not be installed on
# the host: unpacked (dpkg -x) into $SDP_CACHE/PKG/root (nginx's package
# would start a web server). Their libraries are in PKGS.
fetch_unpacked()
{
	local pkg=$1 dir=$SDP_CACHE/$1
	[ -e "$dir/.fetched" ] && return 0
	[ "$(id -u)" = 0 ] || die "need root to fetch $pkg into $SDP_CACHE"
	log "fetching $pkg into $dir"
	rm -rf "$dir"
	mkdir -p "$dir/deb"
	(
		cd "$dir/deb"
		get() { apt-get download -qq -o APT::Sandbox::User=root "$@" >&2; }
		get "$pkg" || { apt_update; get "$pkg"; }
	) || die "cannot download $pkg"
	dpkg -x "$dir/deb/${pkg}_"*.deb "$dir/root"
	rm -rf "$dir/deb"
	touch "$dir/.fetched"
}

# kselftest headers are taken from Debian's kernel source and never committed.
kselftest()
{
	local ksrc=$SDP_CACHE/kselftest
	if [ ! -e "$ksrc/.done" ]; then
		install_pkgs linux-source-6.1 xz-utils
		log "extracting kselftest headers from linux-source-6.1"
		rm -rf "$ksrc"
		mkdir -p "$ksrc"
		tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$ksrc" --strip-components=4 \
			linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
			linux-source-6.1/tools/testing/selftests/kselftest.h
		touch "$ksrc/.done"
	fi
	echo "$ksrc"
}

# Soft-iWARP for kernel $1: Debian's kernels leave drivers/infiniband/sw/siw
# out, but the same line's linux-source builds it as an external module
# against the stock headers. Prints the module's path.
siw()
{
	local kver=$1 line dir
	case $kver in
	6.1.*) line=6.1 ;;
	6.12.*) line=6.12 ;;
	*) die "no linux-source for $kver's line" ;;
	esac
	dir=$SDP_CACHE/siw/$kver
	if [ ! -e "$dir/.built" ]; then
		install_pkgs "linux-source-$line" xz-utils
		fetch_kernel "$kver"
		log "building siw for $kver from linux-source-$line"
		rm -rf "$dir"
		mkdir -p "$dir"
		tar -xJf "/usr/src/linux-source-$line.tar.xz" -C "$dir" --strip-components=5 \
			"linux-source-$line/drivers/infiniband/sw/siw"
		make -s -C "$(kdir_of "$kver")" M="$dir" CONFIG_RDMA_SIW=m modules >&2 ||
			die "cannot build siw for $kver"
		touch "$dir/.built"
	fi
	echo "$dir/siw.ko"
}

case "${1:-}" in
"")
	install_pkgs "${PKGS[@]}"
	fetch_unpacked nginx
	fetch_unpacked drbd-utils
	;;
--nginx) echo "$SDP_CACHE/nginx/root/usr/sbin/nginx" ;;
--drbd) echo "$SDP_CACHE/drbd-utils/root" ;;
--kver) kver_of "$2" ;;
--kernel)
	kver=$(kver_of "$2")
	fetch_kernel "$kver"
	echo "$kver"
	;;
--kroot) kroot_of "$2" ;;
--kdir) kdir_of "$2" ;;
--kselftest) kselftest ;;
--siw) siw "$2" ;;
--kbuild-deps) install_pkgs "${PKGS[@]}" "${KBUILD_PKGS[@]}" ;;
*) die "unknown argument $1" ;;
esac
