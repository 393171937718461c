/* SPDX-License-Identifier: GPL-2.0 */
/* static_assert, as the kernel has it, for sdp_proto.c in userspace. */
#ifndef _SDP_KSHIM_BUILD_BUG_H
#define _SDP_KSHIM_BUILD_BUG_H

#include <assert.h>

#endif
