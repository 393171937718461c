// SPDX-License-Identifier: GPL-2.0
/*
 * SDP's protocol layer (net/sdp/sdp_proto.c) in userspace, built from the
 * module's own source: the Hello and HelloAck it builds pass its checks and
 * each bad field is refused with its reason; two modelled ends that send
 * only on the credits sdp_proto gives them are never refused and never
 * overrun a receive buffer; each fault planted in such a conversation is
 * named by its counter; and for a bounded time (SDP_FUZZ_SECONDS, default
 * 2) random and mutated messages must never be accepted unless they obey
 * the protocol's invariants (built with ASan and UBSan).
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kselftest_harness.h"
#include "sdp_proto.h"

#define PROOF_LOCAL() fprintf(stderr, "# PROOF local\n")

/* Zero-copy neither offered nor under way. */
static const struct sdp_zc_rules no_zc;

/* One end of a modelled connection. */
struct end {
	struct sdp_seq seq;
	struct sdp_adv hist[SDP_HIST_SIZE];
	unsigned int posted;	/* receive buffers posted, the spare included */
	unsigned int unread;	/* data buffers received, not yet read */
	unsigned int ring;	/* posted + unread + in use: the ring's size */
};

/* Messages in flight one way, in order. */
#define FLIGHT 1024
struct wire {
	struct { struct sdp_bsdh h; u32 len; } m[FLIGHT];
	unsigned int head, tail;
};

static unsigned int rnd(unsigned int n)
{
	return (unsigned int)random() % n;
}

static void end_init(struct end *e, unsigned int ring)
{
	memset(e, 0, sizeof(*e));
	e->seq.hist = e->hist;
	e->posted = e->ring = ring;
}

/* Both Hellos exchanged, as sdp_cma.c and sdp_listen.c do. */
static void connect_ends(struct end *a, struct end *b)
{
	u16 abufs = sdp_seq_hello(&a->seq, a->posted);
	u16 bbufs = sdp_seq_hello(&b->seq, b->posted);

	sdp_seq_start(&a->seq, bbufs);
	sdp_seq_start(&b->seq, abufs);
}

/*
 * As if @n messages had gone each way, all acknowledged: the sequence
 * numbers start there (near 2^32, the run crosses their wrap).
 */
static void skip_ahead(struct end *a, struct end *b, u32 n)
{
	struct end *e[2] = { a, b };

	for (int i = 0; i < 2; i++) {
		struct sdp_seq *s = &e[i]->seq;

		s->tx_mseq = s->tx_mseq_acked = s->rx_mseq = s->rx_mseq_adv = n;
		s->hist[n & (SDP_HIST_SIZE - 1)] = (struct sdp_adv){ s->rx_adv, n };
	}
}

/* @from builds its next message (Data of @payload bytes, or @mid empty). */
static void build(struct end *from, struct sdp_bsdh *h, u8 mid, u32 payload, u8 flags)
{
	sdp_proto_bsdh(&from->seq, h, mid, flags, sizeof(*h) + payload, from->posted - 1);
}

static bool may_send(const struct end *from, bool ctrl)
{
	int credits = sdp_seq_tx_credits(&from->seq);

	return ctrl ? credits >= 0 : credits > SDP_CTRL_CREDITS;
}

static void send_msg(struct end *from, struct wire *w, u8 mid, u32 payload, u8 flags)
{
	unsigned int i = w->head++ % FLIGHT;

	build(from, &w->m[i].h, mid, payload, flags);
	w->m[i].len = sizeof(w->m[i].h) + payload;
	sdp_seq_sent(&from->seq, from->posted - 1);
}

/*
 * The oldest message on @w arrives at @to: the check's verdict (0 also when
 * nothing was in flight), or -1 if it found no posted buffer (an overrun).
 */
static int deliver(struct end *to, struct wire *w)
{
	unsigned int i = w->tail % FLIGHT;
	int verdict;

	if (w->head == w->tail)
		return 0;
	if (!to->posted)
		return -1;
	w->tail++;
	verdict = sdp_proto_check(&to->seq, &w->m[i].h, w->m[i].len, false, false, &no_zc);
	if (verdict)
		return verdict;
	sdp_seq_received(&to->seq, &w->m[i].h);
	to->posted--;
	if (w->m[i].len > sizeof(struct sdp_bsdh))
		to->unread++;
	else
		to->posted++;	/* reposted at once */
	return 0;
}

/*
 * A random step of a well-behaved conversation between @a and @b. Returns
 * the check's verdict on a delivered message (0 when none was delivered),
 * or -1 if a message found no posted buffer (an overrun).
 */
static int step(struct end *a, struct end *b, struct wire *ab, struct wire *ba)
{
	struct end *from = rnd(2) ? a : b, *to = from == a ? b : a;
	struct wire *w = from == a ? ab : ba;

	switch (rnd(6)) {
	case 0:		/* data, sometimes urgent */
		if (may_send(from, false) && w->head - w->tail < FLIGHT)
			send_msg(from, w, SDP_MID_DATA, 1 + rnd(1000),
				 rnd(8) ? 0 : SDP_OOB_PRES | (rnd(2) ? SDP_OOB_PEND : 0));
		return 0;
	case 1:		/* a credit update */
		if (may_send(from, true) && w->head - w->tail < FLIGHT)
			send_msg(from, w, SDP_MID_DATA, 0, 0);
		return 0;
	case 2:
	case 3:		/* the oldest message in flight arrives */
		return deliver(to, to == a ? ba : ab);
	case 4:		/* the reader frees a buffer */
		if (from->unread) {
			from->unread--;
			from->posted++;
		}
		return 0;
	default:	/* the ring grows */
		if (from->ring < 200) {
			from->ring++;
			from->posted++;
		}
		return 0;
	}
}

TEST(hello_and_hello_ack_built_pass_their_checks)
{
	static const u32 sizes[] = { SDP_MIN_BUF_SIZE, 32768, SDP_MAX_BUF_SIZE };
	struct sdp_hah hah;
	struct sdp_hh hh;

	for (unsigned int i = 0; i < 3; i++) {
		sdp_proto_hello(&hh, SDP_MIN_BUFS - 1, sizes[i], i & 1, i & 1,
				i ? SDP_CAP_SINKAVAIL : 0);
		EXPECT_EQ(0, sdp_proto_check_hello(&hh, sizeof(hh)));
		EXPECT_EQ(i & 1 ? SDP_IPV_CAP_IPV6 : SDP_IPV_CAP_IPV4, hh.ipv_cap);
		EXPECT_EQ(i & 1, hh.max_adverts);
		EXPECT_EQ(i ? SDP_CAP_SINKAVAIL : 0, hh.caps);
		sdp_proto_hello_ack(&hah, SDP_MAX_BUFS - 1, sizes[i], hh.ipv_cap, i & 1,
				    i == 1 ? SDP_CAP_SINKAVAIL : 0);
		EXPECT_EQ(i & 1, hah.ext_max_adverts);
		EXPECT_EQ(i == 1 ? SDP_CAP_SINKAVAIL : 0, hah.caps);
		EXPECT_EQ(0, sdp_proto_check_hello_ack(&hah, sizeof(hah)));
		EXPECT_EQ(hh.ipv_cap, hah.ipv_cap);
		/* rdma_cm may pad the private data */
		EXPECT_EQ(0, sdp_proto_check_hello_ack(&hah, SDP_REP_DATA_MAX));
	}
	PROOF_LOCAL();
}

/*
 * A reject's reason and, when busy, its retry hint: ours round trip (the
 * CM pads the private data), a peer's 2-byte reject has no hint, a
 * reject that is not SDP's has no reason.
 */
TEST(rejects_say_why_and_when)
{
	unsigned char data[148] = {};
	struct sdp_rej rej;
	u32 ms = 1;

	sdp_proto_rej(&rej, SDP_REJ_BUSY, 4321);
	memcpy(data, &rej, sizeof(rej));
	EXPECT_EQ(SDP_REJ_BUSY, sdp_proto_check_rej(data, sizeof(data), &ms));
	EXPECT_EQ(4321, ms);
	sdp_proto_rej(&rej, SDP_REJ_BUSY, 1 << 20);	/* clamped, not wrapped */
	EXPECT_EQ(SDP_REJ_BUSY, sdp_proto_check_rej(&rej, sizeof(rej), &ms));
	EXPECT_EQ(0xffff, ms);
	sdp_proto_rej(&rej, SDP_REJ_NOMEM, 4321);	/* a hint only when busy */
	EXPECT_EQ(SDP_REJ_NOMEM, sdp_proto_check_rej(&rej, sizeof(rej), &ms));
	EXPECT_EQ(0, ms);
	sdp_proto_rej(&rej, SDP_REJ_BUSY, 4321);
	EXPECT_EQ(SDP_REJ_BUSY, sdp_proto_check_rej(&rej, 2, &ms));
	EXPECT_EQ(0, ms);
	EXPECT_EQ(0, sdp_proto_check_rej(&rej, 1, &ms));
	EXPECT_EQ(0, sdp_proto_check_rej(NULL, 0, &ms));
	data[0] = SDP_MID_DATA;
	EXPECT_EQ(0, sdp_proto_check_rej(data, sizeof(data), &ms));
	PROOF_LOCAL();
}

TEST(each_bad_hello_field_refused_with_its_reason)
{
	struct sdp_hh good, h;

	sdp_proto_hello(&good, 15, 8192, false, SDP_ZC_ADVERTS, SDP_CAP_SINKAVAIL);
#define BAD_HELLO(reason, change, len) do {					\
	h = good; change;							\
	EXPECT_EQ(reason, sdp_proto_check_hello(&h, len)) TH_LOG(#change);	\
} while (0)
	BAD_HELLO(SDP_REJ_MALFORMED, (void)0, sizeof(h) - 1);
	BAD_HELLO(SDP_REJ_MALFORMED, h.bsdh.mid = SDP_MID_HELLO_ACK, sizeof(h));
	BAD_HELLO(SDP_REJ_MALFORMED, h.bsdh.len = htonl(sizeof(h) + 1), sizeof(h));
	BAD_HELLO(SDP_REJ_VERSION, h.majv_minv = 0x12, sizeof(h));
	BAD_HELLO(SDP_REJ_MALFORMED, h.localrcvsz = htonl(SDP_MIN_BUF_SIZE - 1), sizeof(h));
	BAD_HELLO(SDP_REJ_MALFORMED, h.localrcvsz = htonl(SDP_MAX_BUF_SIZE + 1), sizeof(h));
	BAD_HELLO(SDP_REJ_MALFORMED, h.bsdh.bufs = htons(SDP_CTRL_CREDITS + 1), sizeof(h));
	BAD_HELLO(SDP_REJ_MALFORMED, h.bsdh.bufs = htons(SDP_MAX_BUFS), sizeof(h));
	EXPECT_EQ(SDP_REJ_MALFORMED, sdp_proto_check_hello(NULL, 0));
	PROOF_LOCAL();
}

TEST(each_bad_hello_ack_field_refused)
{
	struct sdp_hah good, h;

	sdp_proto_hello_ack(&good, 15, 8192, SDP_IPV_CAP_IPV4, SDP_ZC_ADVERTS, SDP_CAP_SINKAVAIL);
#define BAD_HAH(change, len) do {						\
	h = good; change;							\
	EXPECT_EQ(SDP_MIB_BAD_HELLO, sdp_proto_check_hello_ack(&h, len)) TH_LOG(#change); \
} while (0)
	BAD_HAH((void)0, sizeof(h) - 1);
	BAD_HAH(h.bsdh.mid = SDP_MID_HELLO, sizeof(h));
	BAD_HAH(h.bsdh.len = htonl(sizeof(h) + 4), sizeof(h));
	BAD_HAH(h.majv_minv = 0x10, sizeof(h));
	BAD_HAH(h.actrcvsz = htonl(SDP_MIN_BUF_SIZE - 1), sizeof(h));
	BAD_HAH(h.actrcvsz = htonl(SDP_MAX_BUF_SIZE + 1), sizeof(h));
	BAD_HAH(h.bsdh.bufs = htons(1), sizeof(h));
	BAD_HAH(h.bsdh.bufs = htons(SDP_MAX_BUFS), sizeof(h));
	EXPECT_EQ(SDP_MIB_BAD_HELLO, sdp_proto_check_hello_ack(NULL, 0));
	PROOF_LOCAL();
}

/*
 * Two ends that send only when sdp_proto's credits allow: 200,000 random
 * steps (sends, arrivals, reads, rings growing); every message is accepted
 * and none arrives without a posted buffer.
 */
TEST(well_behaved_ends_are_never_refused_or_overrun)
{
	static const u32 starts[] = { 0, 0xffffff00 };
	static struct wire ab, ba;
	static struct end a, b;

	srandom(1);
	for (int k = 0; k < 2; k++) {
		unsigned long delivered = 0;

		memset(&ab, 0, sizeof(ab));
		memset(&ba, 0, sizeof(ba));
		end_init(&a, SDP_MIN_BUFS);
		end_init(&b, SDP_MIN_BUFS);
		connect_ends(&a, &b);
		skip_ahead(&a, &b, starts[k]);
		for (int i = 0; i < 100000; i++) {
			unsigned int before = ab.tail + ba.tail;
			int verdict = step(&a, &b, &ab, &ba);

			ASSERT_EQ(0, verdict) TH_LOG("from %#x, step %d: %s", starts[k], i,
						     verdict < 0 ? "a message found no buffer" :
						     "refused");
			delivered += ab.tail + ba.tail - before;
		}
		EXPECT_LT(25000, delivered);
		TH_LOG("from mseq %#x: %lu messages delivered, mseq now %#x and %#x",
		       starts[k], delivered, a.seq.tx_mseq, b.seq.tx_mseq);
	}
	PROOF_LOCAL();
}

/*
 * A conversation run to a random point, then settled: everything in flight
 * arrived and was read, and b has told a of its buffers. @h gets a's next
 * message, Data it has the credits for: 1. Or 0 if the point reached
 * leaves a no credits for Data (try another), -1 if a check failed.
 */
static int midway(struct end *a, struct end *b, struct sdp_bsdh *h, u32 *len)
{
	static struct wire ab, ba;

	memset(&ab, 0, sizeof(ab));
	memset(&ba, 0, sizeof(ba));
	end_init(a, SDP_MIN_BUFS);
	end_init(b, SDP_MIN_BUFS);
	connect_ends(a, b);
	for (unsigned int i = rnd(5000); i; i--)
		if (step(a, b, &ab, &ba))
			return -1;
	while (ab.head != ab.tail || ba.head != ba.tail)
		if (deliver(b, &ab) || deliver(a, &ba))
			return -1;
	a->posted += a->unread;
	b->posted += b->unread;
	a->unread = b->unread = 0;
	if (!may_send(b, true))
		return 0;
	send_msg(b, &ba, SDP_MID_DATA, 0, 0);
	if (deliver(a, &ba))
		return -1;
	if (!may_send(a, false))
		return 0;
	*len = sizeof(*h) + 1 + rnd(100);
	build(a, h, SDP_MID_DATA, *len - sizeof(*h), 0);
	return 1;
}

/* midway() until it reaches a point where a may send Data. */
static bool settled(struct end *a, struct end *b, struct sdp_bsdh *h, u32 *len)
{
	for (int tries = 0; tries < 100; tries++) {
		int r = midway(a, b, h, len);

		if (r)
			return r > 0;
	}
	return false;
}

/* Each fault, planted at 200 random points of a conversation, is named. */
TEST(each_planted_fault_is_named)
{
	static struct end a, b;
	struct sdp_bsdh good, h;
	u32 len;

	srandom(2);
	for (int i = 0; i < 200; i++) {
		int credits;

		ASSERT_TRUE(settled(&a, &b, &good, &len));
		ASSERT_EQ(0, sdp_proto_check(&b.seq, &good, len, false, false, &no_zc));
		/* with nothing in flight, b knows the credits a has */
		EXPECT_EQ(sdp_seq_tx_credits(&a.seq), sdp_seq_peer_credits(&b.seq));
#define FAULT(mib, change, got, disconn) do {					\
	h = good; change;							\
	EXPECT_EQ(mib, sdp_proto_check(&b.seq, &h, got, false, disconn, &no_zc)) TH_LOG("point %d: " #change, i); \
} while (0)
		FAULT(SDP_MIB_BAD_LEN, (void)0, len + 1, false);
		FAULT(SDP_MIB_BAD_LEN, h.len = htonl(8), 8, false);
		FAULT(SDP_MIB_BAD_MSEQ, h.mseq = htonl(ntohl(h.mseq) + 1), len, false);
		FAULT(SDP_MIB_BAD_MSEQ, h.mseq = htonl(ntohl(h.mseq) - 1), len, false);
		FAULT(SDP_MIB_BAD_MSEQ_ACK, h.mseq_ack = htonl(b.seq.tx_mseq + 1), len, false);
		if (b.seq.tx_mseq_acked)
			FAULT(SDP_MIB_BAD_MSEQ_ACK, h.mseq_ack = htonl(b.seq.tx_mseq_acked - 1),
			      len, false);
		FAULT(SDP_MIB_BAD_BUFS, h.bufs = htons(SDP_MAX_BUFS), len, false);
		FAULT(SDP_MIB_BAD_FLAGS, h.flags = 0x04, len, false);
		FAULT(SDP_MIB_BAD_FLAGS, (h.mid = SDP_MID_DISCONN, h.flags = SDP_OOB_PEND,
			h.len = htonl(16)), 16, false);
		FAULT(SDP_MIB_BAD_FLAGS, (h.flags = SDP_OOB_PRES, h.len = htonl(16)), 16, false);
		FAULT(SDP_MIB_BAD_MID, h.mid = 0x42, len, false);
		FAULT(SDP_MIB_UNEXPECTED_MID, h.mid = SDP_MID_SRCAVAIL, len, false);
		FAULT(SDP_MIB_UNEXPECTED_MID, h.mid = SDP_MID_HELLO, len, false);
		FAULT(SDP_MIB_BAD_LEN, h.mid = SDP_MID_DISCONN, len, false);
		FAULT(SDP_MIB_UNEXPECTED_MID, (void)0, len, true);
		FAULT(SDP_MIB_UNEXPECTED_MID, (h.mid = SDP_MID_DISCONN, h.len = htonl(16)), 16, true);
		/* a good message, but a Send with immediate data */
		EXPECT_EQ(SDP_MIB_BAD_MID, sdp_proto_check(&b.seq, &good, len, true, false, &no_zc));
		/*
		 * a uses every credit b gave it: one more Data is a lie, even
		 * if b has offered more since, in a message a has not seen...
		 */
		b.posted += 8;
		build(&b, &h, SDP_MID_DATA, 0, 0);
		sdp_seq_sent(&b.seq, b.posted - 1);
		credits = sdp_seq_tx_credits(&a.seq);
		for (int k = 0; k < credits; k++) {
			build(&a, &h, SDP_MID_DATA, 1, 0);
			ASSERT_EQ(0, sdp_proto_check(&b.seq, &h, sizeof(h) + 1, false, false, &no_zc))
				TH_LOG("point %d: credit %d of %d", i, k, credits);
			sdp_seq_sent(&a.seq, a.posted - 1);
			sdp_seq_received(&b.seq, &h);
		}
		build(&a, &h, SDP_MID_DATA, 1, 0);
		EXPECT_EQ(SDP_MIB_BAD_CREDITS, sdp_proto_check(&b.seq, &h, sizeof(h) + 1, false, false, &no_zc))
			TH_LOG("point %d, after %d credits", i, credits);
		/* ...but a credit update may take the spare */
		build(&a, &h, SDP_MID_DATA, 0, 0);
		EXPECT_EQ(0, sdp_proto_check(&b.seq, &h, sizeof(h), false, false, &no_zc));
	}
	PROOF_LOCAL();
}

/*
 * The zero-copy messages, at 50 random points of a conversation: built,
 * they pass where the rules allow them and read back what was built; each
 * bad field, and each message where it may not come, is named.
 */
TEST(each_zc_fault_is_named)
{
	static const struct sdp_zc_rules off, on = { .offered = true },
		reading = { .offered = true, .reading = true },
		out = { .offered = true, .src_left = 100 },
		sink = { .offered = true, .sink_offered = true },
		sink_held = { .offered = true, .sink_offered = true, .sink_held = true };
	struct sdp_zc_rules adv = { .offered = true, .adv_out = true, .adv_len = 1000 },
		crossed = { .offered = true, .adv_out = true, .adv_len = 1000, .adv_crossed = true };
	unsigned char good[64], m[64];
	struct sdp_bsdh *h = (void *)m, data;
	static struct end a, b;
	u64 vaddr;
	u32 len, rkey;

	srandom(3);
	for (int i = 0; i < 50; i++) {
		ASSERT_TRUE(settled(&a, &b, &data, &len));
#define ZC(mib, rules, change, got, disconn) do {				\
	memcpy(m, good, sizeof(m)); change;					\
	h->len = htonl(got);							\
	EXPECT_EQ(mib, sdp_proto_check(&b.seq, h, got, false, disconn, &rules))	\
		TH_LOG("point %d: " #rules ", " #change, i);			\
} while (0)
		build(&a, (void *)good, SDP_MID_SRCAVAIL, sizeof(struct sdp_srcah), 0);
		sdp_proto_avail((void *)good, 4096, 0x1234, 0xfeedface0000ULL);
		ZC(0, on, (void)0, SDP_SRCAVAIL_LEN, false);
		EXPECT_EQ(4096, sdp_proto_avail_get(h, &rkey, &vaddr));
		EXPECT_EQ(0x1234, rkey);
		EXPECT_EQ(0xfeedface0000ULL, vaddr);
		ZC(0, on, sdp_proto_avail(h, SDP_SRCAVAIL_MAX, 1, 1), SDP_SRCAVAIL_LEN, false);
		ZC(SDP_MIB_UNEXPECTED_MID, off, (void)0, SDP_SRCAVAIL_LEN, false);
		ZC(SDP_MIB_UNEXPECTED_MID, reading, (void)0, SDP_SRCAVAIL_LEN, false);
		ZC(SDP_MIB_UNEXPECTED_MID, on, (void)0, SDP_SRCAVAIL_LEN, true);
		ZC(SDP_MIB_BAD_LEN, on, (void)0, SDP_SRCAVAIL_LEN - 1, false);
		ZC(SDP_MIB_BAD_LEN, on, (void)0, SDP_SRCAVAIL_LEN + 1, false);
		ZC(SDP_MIB_BAD_SRCAVAIL, on, sdp_proto_avail(h, 0, 1, 1), SDP_SRCAVAIL_LEN, false);
		ZC(SDP_MIB_BAD_SRCAVAIL, on, sdp_proto_avail(h, SDP_SRCAVAIL_MAX + 1, 1, 1),
		   SDP_SRCAVAIL_LEN, false);
		ZC(SDP_MIB_BAD_FLAGS, on, h->flags = SDP_OOB_PEND, SDP_SRCAVAIL_LEN, false);

		build(&a, (void *)good, SDP_MID_RDMARDCOMPL, sizeof(struct sdp_rrch), 0);
		sdp_proto_compl((void *)good, 100);
		ZC(0, out, (void)0, SDP_RDMARDCOMPL_LEN, false);
		EXPECT_EQ(100, sdp_proto_compl_get(h));
		ZC(0, out, sdp_proto_compl(h, 1), SDP_RDMARDCOMPL_LEN, true);
		ZC(SDP_MIB_BAD_RDMARDCOMPL, out, sdp_proto_compl(h, 101),
		   SDP_RDMARDCOMPL_LEN, false);
		ZC(SDP_MIB_BAD_RDMARDCOMPL, out, sdp_proto_compl(h, 0),
		   SDP_RDMARDCOMPL_LEN, false);
		ZC(SDP_MIB_UNEXPECTED_MID, on, (void)0, SDP_RDMARDCOMPL_LEN, false);
		ZC(SDP_MIB_BAD_LEN, out, (void)0, SDP_RDMARDCOMPL_LEN + 1, false);

		build(&a, (void *)good, SDP_MID_SENDSM, 0, 0);
		ZC(0, out, (void)0, sizeof(*h), false);
		ZC(SDP_MIB_UNEXPECTED_MID, reading, (void)0, sizeof(*h), false);
		ZC(SDP_MIB_BAD_LEN, out, (void)0, sizeof(*h) + 4, false);

		build(&a, (void *)good, SDP_MID_SRCAVAIL_CANCEL, 0, 0);
		ZC(0, on, (void)0, sizeof(*h), false);
		ZC(0, reading, (void)0, sizeof(*h), false);
		ZC(SDP_MIB_UNEXPECTED_MID, off, (void)0, sizeof(*h), false);
		ZC(SDP_MIB_BAD_LEN, on, (void)0, sizeof(*h) + 4, false);

		/* while its SrcAvail is read, the peer's stream waits */
		build(&a, (void *)good, SDP_MID_DATA, 1, 0);
		ZC(0, on, (void)0, sizeof(*h) + 1, false);
		ZC(SDP_MIB_UNEXPECTED_MID, reading, (void)0, sizeof(*h) + 1, false);
		ZC(0, reading, (void)0, sizeof(*h), false);
		ZC(SDP_MIB_UNEXPECTED_MID, reading, h->mid = SDP_MID_DISCONN, sizeof(*h), false);
		ZC(0, reading, h->mid = SDP_MID_ABORT, sizeof(*h), false);
		ZC(SDP_MIB_UNEXPECTED_MID, on, h->mid = SDP_MID_SINKAVAIL, sizeof(*h), false);

		/* the peer's SinkAvail: one at a time, where our Hello took them */
		build(&a, (void *)good, SDP_MID_SINKAVAIL, sizeof(struct sdp_srcah), 0);
		sdp_proto_avail((void *)good, 65536, 0x4321, 0xbeef0000ULL);
		ZC(0, sink, (void)0, SDP_SRCAVAIL_LEN, false);
		ZC(0, sink, (void)0, SDP_SRCAVAIL_LEN, true);
		EXPECT_EQ(65536, sdp_proto_avail_get(h, &rkey, &vaddr));
		EXPECT_EQ(0x4321, rkey);
		EXPECT_EQ(0xbeef0000ULL, vaddr);
		ZC(SDP_MIB_UNEXPECTED_MID, on, (void)0, SDP_SRCAVAIL_LEN, false);
		ZC(SDP_MIB_UNEXPECTED_MID, sink_held, (void)0, SDP_SRCAVAIL_LEN, false);
		ZC(SDP_MIB_BAD_LEN, sink, (void)0, SDP_SRCAVAIL_LEN - 1, false);
		ZC(SDP_MIB_BAD_SINKAVAIL, sink, sdp_proto_avail(h, 0, 1, 1), SDP_SRCAVAIL_LEN, false);
		ZC(SDP_MIB_BAD_SINKAVAIL, sink, sdp_proto_avail(h, SDP_SRCAVAIL_MAX + 1, 1, 1),
		   SDP_SRCAVAIL_LEN, false);

		build(&a, (void *)good, SDP_MID_SINKAVAIL_CANCEL, 0, 0);
		ZC(0, sink, (void)0, sizeof(*h), false);
		ZC(0, sink_held, (void)0, sizeof(*h), false);
		ZC(SDP_MIB_UNEXPECTED_MID, on, (void)0, sizeof(*h), false);
		ZC(SDP_MIB_BAD_LEN, sink, (void)0, sizeof(*h) + 4, false);

		/* the answer to ours: no more than it offered, none after bytes crossed it */
		build(&a, (void *)good, SDP_MID_RDMAWRCOMPL, sizeof(struct sdp_rrch), 0);
		adv.adv_mseq = ntohl(h->mseq_ack);
		crossed.adv_mseq = adv.adv_mseq;
		sdp_proto_compl((void *)good, 1000);
		ZC(0, adv, (void)0, SDP_RDMARDCOMPL_LEN, false);
		ZC(0, adv, sdp_proto_compl(h, 0), SDP_RDMARDCOMPL_LEN, false);
		ZC(0, crossed, sdp_proto_compl(h, 0), SDP_RDMARDCOMPL_LEN, false);
		ZC(SDP_MIB_BAD_RDMAWRCOMPL, crossed, (void)0, SDP_RDMARDCOMPL_LEN, false);
		ZC(SDP_MIB_BAD_RDMAWRCOMPL, adv, sdp_proto_compl(h, 1001), SDP_RDMARDCOMPL_LEN, false);
		ZC(SDP_MIB_UNEXPECTED_MID, sink, (void)0, SDP_RDMARDCOMPL_LEN, false);
		ZC(SDP_MIB_BAD_LEN, adv, (void)0, SDP_RDMARDCOMPL_LEN - 1, false);

		/*
		 * Stream bytes while ours is out: those that crossed it pass;
		 * once the peer saw it (acknowledged its mseq), none till the answer.
		 */
		build(&a, (void *)good, SDP_MID_DATA, 1, 0);
		adv.adv_mseq = ntohl(h->mseq_ack) + 1;
		ZC(0, adv, (void)0, sizeof(*h) + 1, false);
		ZC(0, adv, h->mid = SDP_MID_DISCONN, sizeof(*h), false);
		adv.adv_mseq = ntohl(h->mseq_ack);
		ZC(SDP_MIB_UNEXPECTED_MID, adv, (void)0, sizeof(*h) + 1, false);
		ZC(0, adv, (void)0, sizeof(*h), false);
		ZC(SDP_MIB_UNEXPECTED_MID, adv, h->mid = SDP_MID_DISCONN, sizeof(*h), false);
		ZC(0, adv, h->mid = SDP_MID_ABORT, sizeof(*h), false);
		build(&a, (void *)good, SDP_MID_SRCAVAIL, sizeof(struct sdp_srcah), 0);
		sdp_proto_avail((void *)good, 4096, 1, 1);
		adv.adv_mseq = ntohl(h->mseq_ack);
		ZC(SDP_MIB_UNEXPECTED_MID, adv, (void)0, SDP_SRCAVAIL_LEN, false);
		adv.adv_mseq = ntohl(h->mseq_ack) + 1;
		ZC(0, adv, (void)0, SDP_SRCAVAIL_LEN, false);
	}
	PROOF_LOCAL();
}

/* The invariants any accepted message obeys, stated from the spec. */
static bool accepted_ok(const struct sdp_seq *s, const struct sdp_bsdh *h, u32 got, bool disconn,
			const struct sdp_zc_rules *z)
{
	u32 mseq_ack = ntohl(h->mseq_ack), zlen;
	/* our SinkAvail seen, unanswered: no stream bytes */
	bool seen = z->adv_out && (s32)(mseq_ack - z->adv_mseq) >= 0;

	if (got < sizeof(*h) || ntohl(h->len) != got || ntohl(h->mseq) != s->rx_mseq + 1 ||
	    ntohs(h->bufs) >= SDP_MAX_BUFS || (s32)(mseq_ack - s->tx_mseq_acked) < 0 ||
	    (s32)(s->tx_mseq - mseq_ack) < 0)
		return false;
	if (h->flags & ~(SDP_OOB_PRES | SDP_OOB_PEND) || (h->flags && h->mid != SDP_MID_DATA) ||
	    ((h->flags & SDP_OOB_PRES) && got == sizeof(*h)))
		return false;
	switch (h->mid) {
	case SDP_MID_ABORT:
		return true;
	case SDP_MID_DATA:
		return got == sizeof(*h) ? !disconn || !h->flags : !disconn && !z->reading && !seen;
	case SDP_MID_DISCONN:
		return got == sizeof(*h) && !disconn && !z->reading && !seen;
	case SDP_MID_SRCAVAIL:
		zlen = ntohl(*(const u32 *)(h + 1));
		return got == SDP_SRCAVAIL_LEN && z->offered && !z->reading && !disconn &&
		       !seen && zlen && zlen <= SDP_SRCAVAIL_MAX;
	case SDP_MID_SINKAVAIL:
		zlen = ntohl(*(const u32 *)(h + 1));
		return got == SDP_SRCAVAIL_LEN && z->sink_offered && !z->sink_held &&
		       zlen && zlen <= SDP_SRCAVAIL_MAX;
	case SDP_MID_RDMAWRCOMPL:
		zlen = ntohl(*(const u32 *)(h + 1));
		return got == SDP_RDMARDCOMPL_LEN && z->adv_out && zlen <= z->adv_len &&
		       !(zlen && z->adv_crossed);
	case SDP_MID_SINKAVAIL_CANCEL:
		return got == sizeof(*h) && z->sink_offered;
	case SDP_MID_RDMARDCOMPL:
		zlen = ntohl(*(const u32 *)(h + 1));
		return got == SDP_RDMARDCOMPL_LEN && zlen && zlen <= z->src_left;
	case SDP_MID_SENDSM:
		return got == sizeof(*h) && z->src_left;
	case SDP_MID_SRCAVAIL_CANCEL:
		return got == sizeof(*h) && z->offered;
	}
	return false;
}

/* SDP_FUZZ_SECONDS bounds the next case, not a TEST()'s 30 s */
FIXTURE(fuzz) {};
FIXTURE_SETUP(fuzz) {}
FIXTURE_TEARDOWN(fuzz) {}

/*
 * For SDP_FUZZ_SECONDS: mutated good messages and random bytes at random
 * points of conversations, random Hellos and HelloAcks. Nothing accepted
 * breaks an invariant; ASan and UBSan watch every access.
 */
TEST_F_TIMEOUT(fuzz, for_a_bounded_time, 24 * 3600)
{
	static const u8 zc_mids[] = { SDP_MID_SRCAVAIL, SDP_MID_RDMARDCOMPL, SDP_MID_SENDSM,
				      SDP_MID_SRCAVAIL_CANCEL, SDP_MID_SINKAVAIL,
				      SDP_MID_RDMAWRCOMPL, SDP_MID_SINKAVAIL_CANCEL };
	const char *env = getenv("SDP_FUZZ_SECONDS");
	time_t end = time(NULL) + (env ? atoi(env) : 2);
	static struct end a, b;
	unsigned long tried = 0, accepted = 0, zc_accepted = 0;
	unsigned char raw[64], m[64];

	srandom(time(NULL));
	while (time(NULL) < end) {
		struct sdp_bsdh h;
		u32 len;

		ASSERT_TRUE(settled(&a, &b, &h, &len));
		for (int i = 0; i < 1000; i++, tried++) {
			bool disconn = rnd(4) == 0, imm = rnd(16) == 0;
			struct sdp_zc_rules z = {
				.offered = rnd(2), .reading = rnd(2),
				.src_left = rnd(2) ? rnd(SDP_SRCAVAIL_MAX + 2) : 0,
				.sink_offered = rnd(2), .sink_held = rnd(2),
				.adv_out = rnd(2), .adv_crossed = rnd(2),
				.adv_len = rnd(SDP_SRCAVAIL_MAX + 2),
				/* around the acknowledgement the messages carry */
				.adv_mseq = b.seq.tx_mseq - rnd(3),
			};
			u32 got = rnd(4) ? len : rnd(70000);

			for (unsigned int k = 0; k < sizeof(m); k++)
				m[k] = random();
			memcpy(m, &h, sizeof(h));
			/* a zero-copy message of its own length, now and then */
			if (!rnd(3)) {
				m[0] = zc_mids[rnd(sizeof(zc_mids))];
				got = m[0] == SDP_MID_SRCAVAIL || m[0] == SDP_MID_SINKAVAIL ?
				      SDP_SRCAVAIL_LEN :
				      m[0] == SDP_MID_RDMARDCOMPL || m[0] == SDP_MID_RDMAWRCOMPL ?
				      SDP_RDMARDCOMPL_LEN : sizeof(h);
				if (rnd(2))
					m[16] = m[17] = m[18] = 0;
				((struct sdp_bsdh *)m)->len = htonl(got);
			}
			for (int k = rnd(4); k >= 0; k--)
				m[rnd(sizeof(h) + 8)] ^= 1 << rnd(8);
			if (!sdp_proto_check(&b.seq, (void *)m, got, imm, disconn, &z)) {
				accepted++;
				zc_accepted += m[0] != SDP_MID_DATA && m[0] != SDP_MID_DISCONN &&
					       m[0] != SDP_MID_ABORT;
				ASSERT_FALSE(imm);
				ASSERT_TRUE(accepted_ok(&b.seq, (void *)m, got, disconn, &z));
			}
			for (unsigned int k = 0; k < sizeof(raw); k++)
				raw[k] = random();
			if (!sdp_proto_check(&b.seq, (void *)raw, got, false, disconn, &z))
				ASSERT_TRUE(accepted_ok(&b.seq, (void *)raw, got, disconn, &z));
			if (!sdp_proto_check_hello(raw, rnd(sizeof(raw)))) {
				const struct sdp_hh *hh = (void *)raw;

				ASSERT_EQ(SDP_MID_HELLO, hh->bsdh.mid);
				ASSERT_TRUE(sdp_size_ok(ntohl(hh->localrcvsz)));
			}
			if (!sdp_proto_check_hello_ack(raw, rnd(sizeof(raw))))
				ASSERT_EQ(SDP_MID_HELLO_ACK, raw[0]);
		}
	}
	EXPECT_LT(0, accepted);
	EXPECT_LT(0, zc_accepted);
	TH_LOG("%lu messages tried, %lu mutated ones accepted, %lu of them zero-copy's",
	       tried, accepted, zc_accepted);
	PROOF_LOCAL();
}

TEST_HARNESS_MAIN
