# SPDX-License-Identifier: GPL-2.0
#
#   make            build sdp.ko, userspace tools and selftests (installs deps)
#   make check      run the kselftests in a VM on Debian's stock kernel
#   make demo       show SDP against TCP in a throwaway VM
#   make bench      SDP against verbs, rsockets and TCP: table, CSV, plot
#   make install    install sdp.ko, libsdp.so, sdp_run and the man pages
#   make C=1        also run sparse on the module
#   KVER=/KDIR=     build against another kernel

KVER ?= $(shell scripts/deps.sh --kver)
KDIR ?= /lib/modules/$(KVER)/build
# Warnings fail our builds (dkms.conf calls kbuild directly, without -Werror).
WERROR ?= -Werror

SUBDIRS := userspace selftests/sdp

.PHONY: all deps module $(SUBDIRS) check demo bench install clean

all: module $(SUBDIRS)

deps:
	@SDP_DEPS_QUIET=1 scripts/deps.sh

module: deps
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 KCFLAGS="$(WERROR)" $(if $(C),C=$(C)) modules

$(SUBDIRS): deps
	$(MAKE) -C $@ KSFT_INC=$(shell scripts/deps.sh --kselftest)

check: all
	scripts/check

demo: all
	scripts/demo

bench: all
	scripts/bench

# On a host with RDMA: the module (then depmod; modprobe sdp) and userspace.
install: all
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install
	$(MAKE) -C userspace install

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	for d in $(SUBDIRS); do $(MAKE) -C $$d clean; done
