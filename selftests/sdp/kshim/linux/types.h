/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's names for the uapi types, so that net/sdp/sdp_proto.c builds
 * in userspace for sdp_proto_test (kshim/ comes first on its include path).
 */
#ifndef _SDP_KSHIM_LINUX_TYPES_H
#define _SDP_KSHIM_LINUX_TYPES_H

#include_next <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s16 s16;
typedef __s32 s32;

#define __packed __attribute__((packed))

#endif
