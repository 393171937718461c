// SPDX-License-Identifier: GPL-2.0
/*
 * The preload shim's rules parser (userspace/sdp_config.c): good files give
 * exactly the rules written, bad lines are refused with their line number,
 * and a program gets the rules its name selects.
 */
#include <arpa/inet.h>
#include <sys/socket.h>

#include "kselftest_harness.h"
#include "sdp_proof.h"
#include "../../userspace/sdp_config.h"

static int parse(const char *text, struct sdp_conf *c, char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	if (!f)
		return -2;
	ret = sdp_conf_parse(f, "sdp.conf", c, err, errlen);
	fclose(f);
	return ret;
}

static struct sdp_conf conf;
static char err[512];

TEST(good_file)
{
	SDP_PROVE_LOCAL();
	static const char text[] =
		"# comment line\n"
		"\n"
		"   \t\n"
		"use sdp both * *:*   # trailing comment\n"
		"use tcp connect ssh* 198.18.0.0/15:22\n"
		"use sdp listen nginx [2001:db8::]/32:8000-8080\n"
		"\tuse  tcp\tlisten  *  10.1.2.3:*\r\n"
		"use sdp connect [a-c]x [2001:db8::1]:443";
	const struct sdp_policy_rule *r = &conf.rules[0].rule;
	unsigned char v6[16];

	ASSERT_EQ(0, parse(text, &conf, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(5, conf.count);

	EXPECT_EQ(SDP_USE_SDP, r[0].use);
	EXPECT_EQ(SDP_ROLE_LISTEN | SDP_ROLE_CONNECT, r[0].roles);
	EXPECT_EQ(0, r[0].family);
	EXPECT_EQ(0, r[0].port_lo);
	EXPECT_EQ(65535, r[0].port_hi);
	EXPECT_STREQ("*", conf.rules[0].prog);

	r = &conf.rules[1].rule;
	EXPECT_EQ(SDP_USE_TCP, r->use);
	EXPECT_EQ(SDP_ROLE_CONNECT, r->roles);
	EXPECT_EQ(AF_INET, r->family);
	EXPECT_EQ(15, r->prefix);
	EXPECT_EQ(0, memcmp(r->addr, "\xc6\x12\x00\x00", 4));
	EXPECT_EQ(22, r->port_lo);
	EXPECT_EQ(22, r->port_hi);
	EXPECT_STREQ("ssh*", conf.rules[1].prog);

	r = &conf.rules[2].rule;
	EXPECT_EQ(SDP_ROLE_LISTEN, r->roles);
	EXPECT_EQ(AF_INET6, r->family);
	EXPECT_EQ(32, r->prefix);
	inet_pton(AF_INET6, "2001:db8::", v6);
	EXPECT_EQ(0, memcmp(r->addr, v6, 16));
	EXPECT_EQ(8000, r->port_lo);
	EXPECT_EQ(8080, r->port_hi);

	/* tabs and a CR do not change a field */
	r = &conf.rules[3].rule;
	EXPECT_EQ(SDP_USE_TCP, r->use);
	EXPECT_EQ(SDP_ROLE_LISTEN, r->roles);
	EXPECT_EQ(AF_INET, r->family);
	EXPECT_EQ(32, r->prefix);	/* no prefix: the whole address */
	EXPECT_EQ(0, memcmp(r->addr, "\x0a\x01\x02\x03", 4));
	EXPECT_EQ(0, r->port_lo);
	EXPECT_EQ(65535, r->port_hi);
	EXPECT_STREQ("*", conf.rules[3].prog);

	r = &conf.rules[4].rule;
	EXPECT_EQ(SDP_USE_SDP, r->use);
	EXPECT_EQ(SDP_ROLE_CONNECT, r->roles);
	EXPECT_EQ(AF_INET6, r->family);
	EXPECT_EQ(128, r->prefix);
	inet_pton(AF_INET6, "2001:db8::1", v6);
	EXPECT_EQ(0, memcmp(r->addr, v6, 16));
	EXPECT_EQ(443, r->port_lo);
	EXPECT_EQ(443, r->port_hi);
	EXPECT_STREQ("[a-c]x", conf.rules[4].prog);
}

/* A rule written with a v4-mapped address is the IPv4 rule it means. */
TEST(v4_mapped_rule_is_ipv4)
{
	SDP_PROVE_LOCAL();
	const struct sdp_policy_rule *r = &conf.rules[0].rule;

	ASSERT_EQ(0, parse("use tcp both * [::ffff:10.1.0.0]/112:*\n", &conf, err,
			   sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(AF_INET, r->family);
	EXPECT_EQ(16, r->prefix);
	EXPECT_EQ(0, memcmp(r->addr, "\x0a\x01\x00\x00", 4));
	EXPECT_EQ(-1, parse("use tcp both * [::ffff:10.1.0.0]/64:*\n", &conf, err,
			    sizeof(err)));
	EXPECT_TRUE(strstr(err, "sdp.conf:1: a v4-mapped prefix") == err) TH_LOG("%s", err);
}

TEST(empty_file)
{
	SDP_PROVE_LOCAL();
	EXPECT_EQ(0, parse("", &conf, err, sizeof(err)));
	EXPECT_EQ(0, conf.count);
	EXPECT_EQ(0, parse("# nothing\n\n", &conf, err, sizeof(err)));
	EXPECT_EQ(0, conf.count);
}

/* Each bad line: refused, named with its line number, and why. */
TEST(malformed_lines)
{
	SDP_PROVE_LOCAL();
	static const struct {
		const char *line, *why;
	} bad[] = {
		{ "use sdp both *", "too few fields" },
		{ "use sdp both * *:* extra", "too many fields" },
		{ "allow sdp both * *:*", "starts with \"use\"" },
		{ "use rdma both * *:*", "\"sdp\" or \"tcp\"" },
		{ "use sdp accept * *:*", "\"listen\", \"connect\" or \"both\"" },
		{ "use sdp both * 1.2.3.4", "ADDRESS:PORTS" },
		{ "use sdp both * 1.2.3:80", "bad IPv4 address" },
		{ "use sdp both * 300.1.1.1:80", "bad IPv4 address" },
		{ "use sdp both * 1.2.3.4/33:80", "bad prefix length" },
		{ "use sdp both * 1.2.3.4/:80", "bad prefix length" },
		{ "use sdp both * 1.2.3.4/x:80", "bad prefix length" },
		{ "use sdp both * 2001:db8::1:80", "brackets" },
		{ "use sdp both * [2001:db8::1:80", "bad IPv6 address" },
		{ "use sdp both * [2001:zz8::1]:80", "bad IPv6 address" },
		{ "use sdp both * [2001:db8::]/129:80", "bad prefix length" },
		{ "use sdp both * *:65536", "bad port range" },
		{ "use sdp both * *:90-80", "bad port range" },
		{ "use sdp both * *:-80", "bad port range" },
		{ "use sdp both * *:80-", "bad port range" },
		{ "use sdp both * *:http", "bad port range" },
		{ "use sdp both * *:", "bad port range" },
	};
	char text[256], want[32];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* the bad line is line 3, after a good rule and a comment */
		snprintf(text, sizeof(text), "use sdp both * *:*\n# c\n%s\n", bad[i].line);
		err[0] = '\0';
		EXPECT_EQ(-1, parse(text, &conf, err, sizeof(err))) TH_LOG("%s", bad[i].line);
		EXPECT_TRUE(strstr(err, "sdp.conf:3: ") == err) TH_LOG("%s -> %s", bad[i].line, err);
		EXPECT_TRUE(strstr(err, bad[i].why) != NULL) TH_LOG("%s -> %s", bad[i].line, err);
	}
	snprintf(want, sizeof(want), "sdp.conf:1: ");
	EXPECT_EQ(-1, parse("use\n", &conf, err, sizeof(err)));
	EXPECT_TRUE(strstr(err, want) == err);
}

TEST(too_many_rules_and_long_lines)
{
	SDP_PROVE_LOCAL();
	static char text[64 * 1024];
	size_t n = 0;

	for (int i = 0; i <= SDP_CONF_MAX_RULES; i++)
		n += snprintf(text + n, sizeof(text) - n, "use sdp both * *:%d\n", i);
	EXPECT_EQ(-1, parse(text, &conf, err, sizeof(err)));
	EXPECT_STREQ("sdp.conf:65: more than 64 rules", err);

	memset(text, ' ', 2000);
	strcpy(text + 2000, "use sdp both * *:*\n");
	EXPECT_EQ(-1, parse(text, &conf, err, sizeof(err)));
	EXPECT_TRUE(strstr(err, "sdp.conf:1: line longer") == err) TH_LOG("%s", err);
}

TEST(select_by_program)
{
	SDP_PROVE_LOCAL();
	static const char text[] =
		"use tcp both ssh *:*\n"
		"use tcp connect curl *:22\n"
		"use sdp both curl *:*\n"
		"use tcp both * 10.0.0.0/8:*\n";
	struct sdp_conf_policy pol;

	ASSERT_EQ(0, parse(text, &conf, err, sizeof(err)));
	/* ssh: a catch-all TCP rule first: plain TCP sockets */
	EXPECT_EQ(0, sdp_conf_select(&conf, "ssh", &pol));
	/* curl: rules 2, 3 and 4, in order */
	EXPECT_EQ(1, sdp_conf_select(&conf, "curl", &pol));
	EXPECT_EQ(3, pol.hdr.count);
	EXPECT_EQ(SDP_USE_SDP, pol.hdr.dflt);
	EXPECT_EQ(22, pol.rules[0].port_lo);
	EXPECT_EQ(SDP_USE_SDP, pol.rules[1].use);
	EXPECT_EQ(AF_INET, pol.rules[2].family);
	EXPECT_EQ(sizeof(pol.hdr) + 3 * sizeof(pol.rules[0]), sdp_conf_policy_size(&pol));
	/* anyone else: the last rule only, SDP where it does not match */
	EXPECT_EQ(1, sdp_conf_select(&conf, "iperf3", &pol));
	EXPECT_EQ(1, pol.hdr.count);
	EXPECT_EQ(SDP_USE_SDP, pol.hdr.dflt);
	EXPECT_EQ(SDP_USE_TCP, pol.rules[0].use);
	EXPECT_EQ(SDP_ROLE_LISTEN | SDP_ROLE_CONNECT, pol.rules[0].roles);
	EXPECT_EQ(AF_INET, pol.rules[0].family);
	EXPECT_EQ(8, pol.rules[0].prefix);
	EXPECT_EQ(10, pol.rules[0].addr[0]);
	/* no rules: SDP everywhere, nothing to hand to the kernel */
	conf.count = 0;
	EXPECT_EQ(1, sdp_conf_select(&conf, "anything", &pol));
	EXPECT_EQ(0, pol.hdr.count);
}

TEST_HARNESS_MAIN
