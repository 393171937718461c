# SPDX-License-Identifier: GPL-2.0
#
#   make            sdp.ko for the running kernel, and the userspace tools;
#                   needs only that kernel's headers, installs nothing
#   make install    install sdp.ko (for KVER), libsdp.so, sdp_run, sdpstat, man pages,
#                   <linux/sdp.h>; DESTDIR= stages all of it, the module too
#   make check      the kselftests in VMs on Debian's 6.1 and 6.12 kernels
#   make check-debug  the same on a 6.1 debug kernel (KASAN, lockdep, kmemleak,
#                   ...) built once from Debian's source (scripts/debug-kernel)
#   make check-wire the two-host tests alone
#   make demo       show SDP against TCP in a throwaway VM
#   make bench      SDP against verbs, rsockets and TCP: table, CSV, plot
#   make deb        Debian packages sdp-dkms, sdp-utils, sdp-dev (build/deb/)
#   make C=1        also run sparse on the module
#   KVER=/KDIR=     build for another kernel (KDIR: its build tree)
#
# check, demo and bench install what they need (scripts/deps.sh) and fetch
# the guest kernels into /var/cache/sdp-dev; the build targets never do.

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
# Warnings fail our builds (dkms.conf calls kbuild directly, without -Werror).
WERROR ?= -Werror

.PHONY: all module userspace headers-present check check-debug check-wire demo bench deb install clean

all: module userspace

headers-present:
	@test -f $(KDIR)/Makefile || { \
		echo "sdp: no kernel headers for $(KVER) in $(KDIR)."; \
		echo "sdp: install linux-headers-$(KVER) (Debian: apt install linux-headers-$(KVER)), or set KVER= / KDIR=."; \
		exit 1; }

module: headers-present
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 KCFLAGS="$(WERROR)" $(if $(C),C=$(C)) modules

userspace:
	$(MAKE) -C userspace

check:
	scripts/check

check-debug:
	scripts/check-debug

check-wire:
	scripts/wire

demo:
	scripts/demo

bench:
	scripts/bench

deb:
	scripts/deb

# On a host with RDMA: then `depmod -a $(KVER); modprobe sdp`.
# With DESTDIR (a package's staging tree) nothing is written outside it:
# kbuild takes the module's root from INSTALL_MOD_PATH, not DESTDIR; and its
# depmod (run when KDIR has a System.map) is left to the target
# (DEPMOD=true): in the staging tree it would write an index of the lone
# sdp.ko, which, packaged, would replace the target's.
# (Made absolute: both sub-makes run in other directories.)
install: stage = $(if $(DESTDIR),$(abspath $(DESTDIR)))
install: all
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(if $(stage),INSTALL_MOD_PATH=$(stage) DEPMOD=true) modules_install
	$(MAKE) -C userspace install DESTDIR=$(stage)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C userspace clean
	$(MAKE) -C selftests/sdp clean
	rm -rf build
