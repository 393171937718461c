#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages (make deb) as a user installs them, with the module
# DKMS built for this kernel: scripts/dkms-check ran the package's dkms
# steps on the host (dkms add, then the kernel install hook's dkms
# autoinstall and depmod), natively, since a module build takes six
# minutes under emulation and depmod one or two; here the packages
# install (their postinst then finds the module built), modprobe loads
# it from DKMS's place, a program under the installed sdp_run moves a
# file over RDMA, and purging cleans up. The module under test is put
# back at the end.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

debs=${SDP_DEBS:-}
ko=${SDP_KO:-}
dkms_ko=${SDP_DKMS_KO:-}
kver=$(uname -r)
[ -d "$debs" ] && [ -r "$ko" ] && [ -r "$dkms_ko" ] ||
	{ echo "# set SDP_DEBS (make deb), SDP_KO and SDP_DKMS_KO (scripts/dkms-check)"; exit $KSFT_SKIP; }
tmp=$(mktemp -d)
cleanup()
{
	dpkg -P sdp-dkms sdp-utils sdp-dev >/dev/null 2>&1
	[ -e "$tmp/man-db-auto-update" ] && mv "$tmp/man-db-auto-update" /var/lib/man-db/auto-update
	rmmod sdp 2>/dev/null
	umount /lib/modules 2>/dev/null
	umount "$tmp/ovl" 2>/dev/null
	insmod "$ko"
	kill $(jobs -p) 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# The guest's /lib/modules is the kernel's, read-only: an overlay takes
# what DKMS installed. The guest's /etc is a throwaway overlay too.
mkdir -p "$tmp/ovl"
mount -t tmpfs tmpfs "$tmp/ovl" && mkdir -p "$tmp/ovl/u" "$tmp/ovl/w" &&
	mount -t overlay overlay -o "lowerdir=/lib/modules,upperdir=$tmp/ovl/u,workdir=$tmp/ovl/w" /lib/modules ||
	{ echo "# cannot make /lib/modules writable"; exit 1; }
# under the name DKMS gave it (sdp.ko.xz where the kernel's own modules are
# .ko.xz), which the indexes of dkms's depmod, run natively (a minute or
# two here), name
idx=${dkms_ko%/updates/dkms/*}
dkms_rel=${dkms_ko#"$idx/"}
[ -f "$idx/modules.dep" ] || { echo "# no depmod indexes by $dkms_ko"; exit 1; }
install -D -m 0644 "$dkms_ko" "/lib/modules/$kver/$dkms_rel"
find "$idx" -maxdepth 1 -type f -name 'modules.*' -exec cp -t "/lib/modules/$kver" {} +
mkdir -p /etc/dkms
touch /etc/dkms/no-autoinstall
# man-db's trigger re-indexes every manual page at each install and purge:
# 20 s a time under emulation, and not what is tested here
[ -e /var/lib/man-db/auto-update ] && mv /var/lib/man-db/auto-update "$tmp/man-db-auto-update"

ktap_plan 4
KTAP_CLASS=local

# Runs a command; on failure shows the tail of LOG.
logged()	# LOG COMMAND...
{
	local log=$1
	shift
	"$@" && return 0
	sed 's/^/#   /' "$log" | tail -n 30
	return 1
}

# (with autoinstall off the postinst stops before its dkms add: done here)
installed() { dpkg -i "$debs"/sdp-dkms_*.deb "$debs"/sdp-utils_*.deb "$debs"/sdp-dev_*.deb \
		>"$tmp/dpkg" 2>&1 && [ -r /usr/src/sdp-*/dkms.conf ] &&
	      dkms add -m sdp -v "$(dpkg-query -W -f='${Version}' sdp-dkms)" >>"$tmp/dpkg" 2>&1 &&
	      dkms status -m sdp | grep -q added &&
	      [ -x /usr/bin/sdp_run ] && [ -x /usr/bin/sdpstat ] && [ -r /usr/include/linux/sdp.h ] &&
	      dpkg-query -W -f='${Conffiles}' sdp-utils | grep -q /etc/sdp.conf; }
ktap_check "the packages install: the module's source added to DKMS, the tools, the header, /etc/sdp.conf a conffile" \
	logged "$tmp/dpkg" installed

# DKMS installs a module as the kernel's own are (compressed or not, as
# its modules.dep says); when modprobe fails, the kernel's own lines say why
# (a missing symbol, a version), and none that the module never reached it.
from_dkms()
{
	local mark out own
	own=$(sed -n '1s/^[^:]*\(\.ko[^:]*\):.*/\1/p' "/lib/modules/$kver/modules.dep")
	case $dkms_rel in
	*"$own") ;;
	*) echo "# DKMS installed $dkms_rel; this kernel's modules are *$own"; return 1 ;;
	esac
	rmmod sdp || return 1
	mark=$(sdp_kmsg_mark modprobe)
	if ! out=$(modprobe -v sdp 2>&1); then
		echo "# modprobe -v sdp: $(tr '\n' ' ' <<<"$out")"
		echo "# modules.dep: $(grep '^updates/dkms/sdp' "/lib/modules/$kver/modules.dep")"
		ls -l "/lib/modules/$kver/updates/dkms/" | sed 's/^/#   /'
		out=$(sdp_kmsg_since "$mark" | grep -vF "$mark")
		if [ -n "$out" ]; then
			echo "# the kernel's log since:"
			head -n 40 <<<"$out" | sed 's/^/#   /'
		else
			echo "# the kernel logged nothing since: the module never reached it"
		fi
		return 1
	fi
	echo "# loaded $(modinfo -n sdp), signer: $(modinfo -F signer sdp)"
	[ "$(modinfo -n sdp)" = "/lib/modules/$kver/$dkms_rel" ]
}
ktap_check "modprobe sdp loads the module DKMS built, installed as the kernel's own modules are" from_dkms

# The installed tools, the DKMS module: a file over RDMA.
head -c $((2 << 20)) /dev/urandom >"$tmp/in"
sdp_rdma_mark
timeout 60 /usr/bin/sdp_run socat -u TCP4-LISTEN:7301,bind=$SDP_A,reuseaddr "OPEN:$tmp/out,creat,trunc" &
srv=$!
sdp_wait_listen 7301
timeout 60 /usr/bin/sdp_run socat -u "OPEN:$tmp/in" TCP4:$SDP_A:7301
wait $srv
# the installed sdpstat counted the same connection
active=$(/usr/bin/sdpstat -s | awk '$1 == "ActiveOpens" { print $2 }')
over_rdma() { cmp -s "$tmp/in" "$tmp/out" && sdp_rdma_proven $((2 << 20)) 1 0 && [ "$active" -ge 1 ]; }
KTAP_CLASS=
ktap_check "/usr/bin/sdp_run socat, as installed: a file intact over RDMA; /usr/bin/sdpstat counts it" over_rdma
KTAP_CLASS=local

removed() { rmmod sdp && dpkg -P sdp-dkms sdp-utils sdp-dev >"$tmp/dpkg" 2>&1 &&
	    ! dkms status -m sdp | grep -q . && [ ! -e /usr/bin/sdp_run ] &&
	    [ ! -e /usr/src/sdp-* ] && [ ! -e /etc/sdp.conf ]; }
ktap_check "purging removes the source, the tools, the header and /etc/sdp.conf" logged "$tmp/dpkg" removed
ktap_finished
