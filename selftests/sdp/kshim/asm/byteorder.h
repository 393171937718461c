/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's byte order helpers, for sdp_proto.c in userspace. */
#ifndef _SDP_KSHIM_ASM_BYTEORDER_H
#define _SDP_KSHIM_ASM_BYTEORDER_H

#include <endian.h>

#define cpu_to_be16(x)	htobe16(x)
#define cpu_to_be32(x)	htobe32(x)
#define be16_to_cpu(x)	be16toh(x)
#define be32_to_cpu(x)	be32toh(x)
#define cpu_to_be64(x)	htobe64(x)
#define be64_to_cpu(x)	be64toh(x)

#endif
