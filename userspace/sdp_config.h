/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rules file of the preload shim (/etc/sdp.conf, see sdp.conf(5)):
 *
 *   use sdp|tcp listen|connect|both PROGRAM-GLOB ADDRESS[/PREFIX]:PORTS
 *
 * ADDRESS is "*", an IPv4 address or a bracketed IPv6 one ("[2001:db8::]");
 * PORTS is "*", "N" or "N-M". Rules are tried in order; the first that
 * matches decides; a connection no rule matches uses SDP.
 */
#ifndef SDP_CONFIG_H
#define SDP_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include <linux/sdp.h>

#define SDP_CONF_MAX_RULES	SDP_POLICY_MAX_RULES
#define SDP_CONF_DEFAULT	"/etc/sdp.conf"

struct sdp_conf_rule {
	char			prog[256];	/* fnmatch(3) pattern */
	struct sdp_policy_rule	rule;
};

struct sdp_conf {
	unsigned int		count;
	struct sdp_conf_rule	rules[SDP_CONF_MAX_RULES];
};

/* The policy a program's sockets get: a struct sdp_policy with its rules. */
struct sdp_conf_policy {
	struct sdp_policy	hdr;
	struct sdp_policy_rule	rules[SDP_CONF_MAX_RULES];
};

/*
 * Parse @f (called @name in messages) into @conf. Returns 0, or -1 with
 * "NAME:LINE: what is wrong" in @err for the first bad line.
 */
int sdp_conf_parse(FILE *f, const char *name, struct sdp_conf *conf,
		   char *err, size_t errlen);

/*
 * The rules that apply to program @prog, in order, into @pol. Returns 1 if
 * some connection of that program may use SDP (its TCP sockets should be
 * SDP sockets carrying @pol), 0 if the rules send all of them to TCP.
 */
int sdp_conf_select(const struct sdp_conf *conf, const char *prog,
		    struct sdp_conf_policy *pol);

/* Bytes of @pol to hand to setsockopt(SOL_SDP, SDP_POLICY). */
size_t sdp_conf_policy_size(const struct sdp_conf_policy *pol);

#endif
