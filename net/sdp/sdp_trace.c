// SPDX-License-Identifier: GPL-2.0
/* Sockets Direct Protocol: the tracepoints' one definition (sdp_trace.h). */
#define CREATE_TRACE_POINTS
#include "sdp_trace.h"
