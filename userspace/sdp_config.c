// SPDX-License-Identifier: GPL-2.0
/*
 * The shim's rules file parser (see sdp_config.h and sdp.conf(5)). No
 * allocation, no global state: it runs inside arbitrary programs.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sdp_config.h"

#define LINE_MAX_LEN	1024

static int fail(char *err, size_t errlen, const char *name, int line,
		const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s:%d: %s", name, line, msg);
	return -1;
}

/* A decimal number in 0..@max, the whole of @s. */
static int parse_num(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno || *end || *v > max ? -1 : 0;
}

static int parse_ports(char *s, struct sdp_policy_rule *r)
{
	unsigned long lo, hi;
	char *dash;

	if (!strcmp(s, "*")) {
		r->port_lo = 0;
		r->port_hi = 65535;
		return 0;
	}
	dash = strchr(s, '-');
	if (dash)
		*dash = '\0';
	if (parse_num(s, 65535, &lo))
		return -1;
	hi = lo;
	if (dash && parse_num(dash + 1, 65535, &hi))
		return -1;
	if (lo > hi)
		return -1;
	r->port_lo = lo;
	r->port_hi = hi;
	return 0;
}

/* "*", "A.B.C.D[/N]" or "[IPV6][/N]" */
static const char *parse_addr(char *s, struct sdp_policy_rule *r)
{
	unsigned long prefix;
	char *slash;

	if (!strcmp(s, "*"))
		return NULL;
	slash = strrchr(s, '/');
	if (slash && (!strchr(s, ']') || slash > strchr(s, ']')))
		*slash++ = '\0';
	else
		slash = NULL;
	if (*s == '[') {
		size_t n = strlen(s);

		if (n < 3 || s[n - 1] != ']')
			return "bad IPv6 address (write it in brackets: [2001:db8::1])";
		s[n - 1] = '\0';
		if (inet_pton(AF_INET6, s + 1, r->addr) != 1)
			return "bad IPv6 address";
		r->family = AF_INET6;
	} else if (strchr(s, ':')) {
		return "IPv6 addresses go in brackets: [2001:db8::1]:80";
	} else {
		if (inet_pton(AF_INET, s, r->addr) != 1)
			return "bad IPv4 address";
		r->family = AF_INET;
	}
	prefix = r->family == AF_INET ? 32 : 128;
	if (slash && parse_num(slash, prefix, &prefix))
		return "bad prefix length";
	r->prefix = prefix;
	/* The kernel matches v4-mapped destinations as IPv4: so do rules. */
	if (r->family == AF_INET6 && IN6_IS_ADDR_V4MAPPED((struct in6_addr *)r->addr)) {
		if (prefix < 96)
			return "a v4-mapped prefix must be at least 96 bits";
		memmove(r->addr, r->addr + 12, 4);
		memset(r->addr + 4, 0, 12);
		r->family = AF_INET;
		r->prefix = prefix - 96;
	}
	return NULL;
}

static int parse_line(char *line, struct sdp_conf_rule *cr, const char **why)
{
	char *tok[6], *save = NULL, *colon;
	struct sdp_policy_rule *r = &cr->rule;
	int n = 0;

	for (char *t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (n == 5) {
			*why = "too many fields (expected: use sdp|tcp listen|connect|both PROGRAM ADDRESS:PORTS)";
			return -1;
		}
		tok[n++] = t;
	}
	if (n < 5) {
		*why = "too few fields (expected: use sdp|tcp listen|connect|both PROGRAM ADDRESS:PORTS)";
		return -1;
	}
	memset(cr, 0, sizeof(*cr));
	if (strcmp(tok[0], "use")) {
		*why = "a rule starts with \"use\"";
		return -1;
	}
	if (!strcmp(tok[1], "sdp"))
		r->use = SDP_USE_SDP;
	else if (!strcmp(tok[1], "tcp"))
		r->use = SDP_USE_TCP;
	else {
		*why = "expected \"sdp\" or \"tcp\" after \"use\"";
		return -1;
	}
	if (!strcmp(tok[2], "listen"))
		r->roles = SDP_ROLE_LISTEN;
	else if (!strcmp(tok[2], "connect"))
		r->roles = SDP_ROLE_CONNECT;
	else if (!strcmp(tok[2], "both"))
		r->roles = SDP_ROLE_LISTEN | SDP_ROLE_CONNECT;
	else {
		*why = "expected \"listen\", \"connect\" or \"both\"";
		return -1;
	}
	if (strlen(tok[3]) >= sizeof(cr->prog)) {
		*why = "program pattern too long";
		return -1;
	}
	strcpy(cr->prog, tok[3]);
	colon = strrchr(tok[4], ':');
	if (!colon || (strchr(tok[4], ']') && colon < strchr(tok[4], ']'))) {
		*why = "expected ADDRESS:PORTS (\"*:*\" for any)";
		return -1;
	}
	*colon = '\0';
	*why = parse_addr(tok[4], r);
	if (*why)
		return -1;
	if (parse_ports(colon + 1, r)) {
		*why = "bad port range (\"*\", \"N\" or \"N-M\", 0..65535)";
		return -1;
	}
	return 0;
}

int sdp_conf_parse(FILE *f, const char *name, struct sdp_conf *conf,
		   char *err, size_t errlen)
{
	char buf[LINE_MAX_LEN + 2];
	int lineno = 0;

	conf->count = 0;
	while (fgets(buf, sizeof(buf), f)) {
		size_t len = strlen(buf);
		const char *why;
		char *s = buf;

		lineno++;
		if (len > LINE_MAX_LEN && buf[len - 1] != '\n')
			return fail(err, errlen, name, lineno, "line longer than %d bytes",
				    LINE_MAX_LEN);
		s[strcspn(s, "#\r\n")] = '\0';
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			continue;
		if (conf->count == SDP_CONF_MAX_RULES)
			return fail(err, errlen, name, lineno, "more than %d rules",
				    SDP_CONF_MAX_RULES);
		if (parse_line(s, &conf->rules[conf->count], &why))
			return fail(err, errlen, name, lineno, "%s", why);
		conf->count++;
	}
	if (ferror(f))
		return fail(err, errlen, name, lineno, "read error");
	return 0;
}

static int catch_all(const struct sdp_policy_rule *r)
{
	return !r->family && r->port_lo == 0 && r->port_hi == 65535 &&
	       r->roles == (SDP_ROLE_LISTEN | SDP_ROLE_CONNECT);
}

int sdp_conf_select(const struct sdp_conf *conf, const char *prog,
		    struct sdp_conf_policy *pol)
{
	int may_sdp = -1;

	memset(pol, 0, sizeof(*pol));
	pol->hdr.dflt = SDP_USE_SDP;
	for (unsigned int i = 0; i < conf->count; i++) {
		const struct sdp_conf_rule *cr = &conf->rules[i];

		if (fnmatch(cr->prog, prog, 0))
			continue;
		pol->rules[pol->hdr.count++] = cr->rule;
		if (may_sdp >= 0)
			continue;
		if (cr->rule.use == SDP_USE_SDP)
			may_sdp = 1;
		else if (catch_all(&cr->rule))
			may_sdp = 0;	/* nothing after it can say SDP */
	}
	return may_sdp != 0;
}

size_t sdp_conf_policy_size(const struct sdp_conf_policy *pol)
{
	return sizeof(pol->hdr) + pol->hdr.count * sizeof(pol->rules[0]);
}
