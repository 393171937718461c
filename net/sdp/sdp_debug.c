// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs sdp/: root-only knobs for the test suite, not an ABI.
 *
 * inject_warn: writing 1 makes the next receive over RDMA print one WARN,
 * so that the suite can prove its kernel-log check fails a test for what a
 * real bug in the data path would print.
 *
 * fail_accept: the next that many connection requests a listener takes
 * fail as if the child's RDMA resources could not be allocated (stock
 * kernels have no fault injection to make them).
 */
#include <linux/debugfs.h>

#include "sdp_sock.h"

u32 sdp_inject_warn;
static struct dentry *sdp_debugfs;

void sdp_debug_init(void)
{
	sdp_debugfs = debugfs_create_dir("sdp", NULL);
	debugfs_create_u32("inject_warn", 0600, sdp_debugfs, &sdp_inject_warn);
	debugfs_create_atomic_t("fail_accept", 0600, sdp_debugfs, &sdp_fail_accept);
}

void sdp_debug_exit(void)
{
	debugfs_remove_recursive(sdp_debugfs);
}
