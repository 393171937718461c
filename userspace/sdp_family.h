/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SDP_FAMILY_H
#define SDP_FAMILY_H

#include <stdio.h>

#include <linux/sdp.h>

/* The family the loaded module registered (module parameter "family"). */
static inline int sdp_family(void)
{
	FILE *f = fopen("/sys/module/sdp/parameters/family", "re");
	int fam = AF_INET_SDP;

	if (f) {
		if (fscanf(f, "%d", &fam) != 1)
			fam = AF_INET_SDP;
		fclose(f);
	}
	return fam;
}

#endif
