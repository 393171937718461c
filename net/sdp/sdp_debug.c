// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs sdp/: root-only knobs for the test suite, not an ABI.
 *
 * inject_warn: writing 1 makes the next receive over RDMA print one WARN,
 * so that the suite can prove its kernel-log check fails a test for what a
 * real bug in the data path would print.
 *
 * fail/<site>: the next that many allocations at that site fail, as if
 * the memory were not there, so that each path a shortage takes can be
 * tested on stock kernels, which have no fault injection (enum sdp_fault
 * names the sites; "accept" is a listener's child connection as a whole).
 */
#include <linux/debugfs.h>

#include "sdp_debug.h"

u32 sdp_inject_warn;
u32 sdp_hold_poll;
atomic_t sdp_faults[SDP_FAULT_MAX];
static struct dentry *sdp_debugfs;

static const char *const sdp_fault_names[SDP_FAULT_MAX] = {
	[SDP_FAULT_SOCK]	= "sock",
	[SDP_FAULT_TCP]		= "tcp",
	[SDP_FAULT_CM_ID]	= "cm_id",
	[SDP_FAULT_ACCEPT]	= "accept",
	[SDP_FAULT_CONN]	= "conn",
	[SDP_FAULT_PD]		= "pd",
	[SDP_FAULT_SRQ]		= "srq",
	[SDP_FAULT_CQ]		= "cq",
	[SDP_FAULT_QP]		= "qp",
	[SDP_FAULT_RINGS]	= "rings",
	[SDP_FAULT_RX_BUF]	= "rx_buf",
	[SDP_FAULT_TX_BUF]	= "tx_buf",
	[SDP_FAULT_KMEM_BUF]	= "kmem_buf",
};

void sdp_debug_init(void)
{
	struct dentry *fail;
	int i;

	sdp_debugfs = debugfs_create_dir("sdp", NULL);
	debugfs_create_u32("inject_warn", 0600, sdp_debugfs, &sdp_inject_warn);
	debugfs_create_u32("hold_poll", 0600, sdp_debugfs, &sdp_hold_poll);
	fail = debugfs_create_dir("fail", sdp_debugfs);
	for (i = 0; i < SDP_FAULT_MAX; i++)
		debugfs_create_atomic_t(sdp_fault_names[i], 0600, fail, &sdp_faults[i]);
}

void sdp_debug_exit(void)
{
	debugfs_remove_recursive(sdp_debugfs);
}
