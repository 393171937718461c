// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: the user buffers of a connection's zero-copy
 * sends and receives, pinned, mapped for the device and mapped into an MR.
 * Each of the connection's slots makes its MR, in the connection's own PD,
 * at its first use and keeps it for the buffers it holds after (no
 * registration in it between them), till the connection's resources go
 * or its kept buffer ages out: a connection that sends and reads nothing
 * in place holds none.
 * A blocking send's buffer is kept for the next send of the same bytes
 * (LibRIPC's registration cache), and a reader's for the next receive into
 * them: a program that sends from one buffer again, or reads into one
 * again, pays for none of that, only for the registration, which still
 * lives one send or receive (the peer reads or writes the buffer only while
 * a SrcAvail or SinkAvail offers it).
 *
 * An MMU interval notifier says when the address no longer maps those
 * pages (munmap, mremap, fork's copy-on-write, madvise, exit): the buffer
 * is stale, never lent again, and dropped by a work item (a notifier
 * cannot be removed from its own callback), so that memory a program gave
 * back is not held pinned. The same work drops a buffer no send used for
 * SDP_ZBUF_LINGER, and the end of the connection drops them all.
 *
 * A kept buffer counts in its mm's pinned_vm, against RLIMIT_MEMLOCK: it is
 * kept only while the mm is within half of it (or CAP_IPC_LOCK), and the
 * connection's idle ones go first when a send would go over. MSG_ZEROCOPY's
 * pages, counted by their notification as TCP's, are never kept: they may
 * go back in softirq, where a notifier cannot be removed. A connection has
 * as many buffers as sends it may queue and one for its reader, allocated
 * at its first zero-copy send or read (an idle connection pays nothing);
 * its resources' release takes them all but a blocking sender's or a
 * reader's, whose pages are its own again when it returns
 * (sdp_conn_zc_end(), sdp_conn_zr_end()).
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>

#include "sdp_rdma.h"

/* A kept buffer no send used for this long goes. */
#define SDP_ZBUF_LINGER		(5 * HZ)

/* A connection's buffers: a send's, or kept for the next. */
struct sdp_zc_bufs {
	struct sdp_conn		*conn;
	struct mutex		lock;		/* which are kept, and which a send takes */
	spinlock_t		seq_lock;	/* the notifiers' sequence numbers */
	struct delayed_work	gc;		/* drops the stale (not from their notifier), the unused */
	struct sdp_zc_buf	b[SDP_ZBUFS];
};

#ifdef CONFIG_MMU_NOTIFIER
/* The address maps other pages now, or will: this buffer is not to be lent again. */
static bool sdp_zbuf_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range, unsigned long cur_seq)
{
	struct sdp_zc_buf *b = container_of(mni, struct sdp_zc_buf, mni);
	struct sdp_zc_bufs *set = b->set;

	spin_lock(&set->seq_lock);
	mmu_interval_set_seq(mni, cur_seq);
	WRITE_ONCE(b->stale, true);
	spin_unlock(&set->seq_lock);
	mod_delayed_work(system_wq, &set->gc, 0);
	return true;
}

static const struct mmu_interval_notifier_ops sdp_zbuf_mni_ops = {
	.invalidate = sdp_zbuf_invalidate,
};

/* Watch the pages' addresses; *@seq for sdp_zbuf_watched(). */
static bool sdp_zbuf_watch(struct sdp_zc_buf *b, unsigned long start, unsigned long len,
			   unsigned long *seq)
{
	if (mmu_interval_notifier_insert(&b->mni, current->mm, start, len, &sdp_zbuf_mni_ops))
		return false;
	*seq = mmu_interval_read_begin(&b->mni);
	return true;
}

/* Pinned since sdp_zbuf_watch(): if the mapping changed meanwhile, the buffer is stale. */
static void sdp_zbuf_watched(struct sdp_conn *c, struct sdp_zc_buf *b, unsigned long seq)
{
	spin_lock(&c->zbufs->seq_lock);
	if (mmu_interval_read_retry(&b->mni, seq))
		WRITE_ONCE(b->stale, true);
	spin_unlock(&c->zbufs->seq_lock);
}

static void sdp_zbuf_unwatch(struct sdp_zc_buf *b)
{
	mmu_interval_notifier_remove(&b->mni);
}
#else
/* (no MMU notifiers: nothing is kept) */
static bool sdp_zbuf_watch(struct sdp_zc_buf *b, unsigned long start, unsigned long len,
			   unsigned long *seq)
{
	return false;
}

static void sdp_zbuf_watched(struct sdp_conn *c, struct sdp_zc_buf *b, unsigned long seq)
{
}

static void sdp_zbuf_unwatch(struct sdp_zc_buf *b)
{
}
#endif

static enum dma_data_direction sdp_zbuf_dir(const struct sdp_zc_buf *b)
{
	return b->write ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
}

/*
 * The device's part: the mapping (in any context). The slot keeps its MR,
 * with no registration in it, for the next buffer it holds.
 */
static void sdp_zbuf_undma(struct sdp_conn *c, struct sdp_zc_buf *b)
{
	if (b->mapped)
		ib_dma_unmap_sgtable_attrs(b->ibdev, &b->sgt, sdp_zbuf_dir(b), 0);
	b->mapped = false;
}

/* An empty slot's MR goes (process context). */
static void sdp_zbuf_unmr(struct sdp_zc_buf *b)
{
	if (b->mr)
		ib_dereg_mr(b->mr);
	b->mr = NULL;
}

/*
 * The pages go back (in any context: a MSG_ZEROCOPY send's end is the
 * engine's; a reader's, which the device wrote, are dirty, in process
 * context).
 */
static void sdp_zbuf_unpin(struct sdp_zc_buf *b)
{
	if (b->npages)
		unpin_user_pages_dirty_lock(b->pages, b->npages, b->write);
	sg_free_table(&b->sgt);
	kvfree(b->pages);
	b->pages = NULL;
	b->npages = 0;
	if (b->mm) {
		atomic64_sub(b->pinned_vm, &b->mm->pinned_vm);
		mmdrop(b->mm);
		b->mm = NULL;
	}
	b->pinned_vm = 0;
	b->stale = false;
}

/* In process context, holding the set's lock (kept) or the buffer (a send's). */
static void sdp_zbuf_unkeep(struct sdp_zc_buf *b)
{
	if (b->kept)
		sdp_zbuf_unwatch(b);
	b->kept = false;
}

static void sdp_zbuf_drop(struct sdp_conn *c, struct sdp_zc_buf *b)
{
	sdp_zbuf_unkeep(b);
	sdp_zbuf_undma(c, b);
	sdp_zbuf_unpin(b);
}

/*
 * The stale ones no send holds go (holding the set's lock), and, with @aged,
 * those no send used for SDP_ZBUF_LINGER. Whether any is still kept.
 */
static bool sdp_zbuf_drop_stale(struct sdp_conn *c, bool aged)
{
	bool left = false;
	u32 i;

	for (i = 0; i < SDP_ZBUFS; i++) {
		struct sdp_zc_buf *b = &c->zbufs->b[i];

		if (!b->kept || smp_load_acquire(&b->busy))
			continue;
		if (READ_ONCE(b->stale)) {
			SDP_INC_STATS(sock_net(c->sk), SDP_MIB_ZC_CACHE_STALE);
			sdp_zbuf_drop(c, b);
		} else if (aged && time_after_eq(jiffies, b->used + SDP_ZBUF_LINGER)) {
			sdp_zbuf_drop(c, b);
			sdp_zbuf_unmr(b);
		} else {
			left = true;
		}
	}
	return left;
}

static void sdp_zbuf_gc(struct work_struct *work)
{
	struct sdp_zc_bufs *set = container_of(to_delayed_work(work), struct sdp_zc_bufs, gc);

	mutex_lock(&set->lock);
	if (sdp_zbuf_drop_stale(set->conn, true))
		queue_delayed_work(system_wq, &set->gc, SDP_ZBUF_LINGER);
	mutex_unlock(&set->lock);
}

/*
 * Current's idle kept ones go (holding the set's lock): a send needs their
 * share of RLIMIT_MEMLOCK, or the connection ended (@mm NULL: anyone's).
 */
static bool sdp_zbuf_shed(struct sdp_conn *c, struct mm_struct *mm)
{
	bool shed = false;
	u32 i;

	for (i = 0; i < SDP_ZBUFS; i++) {
		struct sdp_zc_buf *b = &c->zbufs->b[i];

		if (b->pages && !smp_load_acquire(&b->busy) && (!mm || b->mm == mm)) {
			sdp_zbuf_drop(c, b);
			shed = true;
		}
	}
	return shed;
}

/* The connection ended: its idle buffers go now (process context). */
void sdp_zbuf_shed_all(struct sdp_conn *c)
{
	if (!c->zbufs)
		return;
	mutex_lock(&c->zbufs->lock);
	sdp_zbuf_shed(c, NULL);
	mutex_unlock(&c->zbufs->lock);
}

/*
 * RLIMIT_MEMLOCK bounds what a process pins, as for RDMA memory regions;
 * the connection's idle buffers make room first. *@keep: the mm stays
 * within half of it, room for other connections' sends.
 */
static bool sdp_zbuf_account(struct sdp_conn *c, u32 npages, bool *keep)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	atomic64_t *pinned = &current->mm->pinned_vm;
	s64 now;

	do {
		now = atomic64_add_return(npages, pinned);
		if (now <= limit) {
			*keep = now <= limit / 2 || ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK);
			return true;
		}
		if (capable(CAP_IPC_LOCK)) {
			*keep = true;
			return true;
		}
		atomic64_sub(npages, pinned);
	} while (sdp_zbuf_shed(c, current->mm));
	return false;
}

/*
 * The slot's MR (made in the connection's PD at its first use), the pages
 * mapped in. Each send gives it a new key (sdp_zc.c).
 */
static int sdp_zbuf_mr(struct sdp_conn *c, struct sdp_zc_buf *b)
{
	int nents = b->sgt.nents;
	bool reused = b->mr;

	if (!b->mr) {
		b->mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, SDP_ZC_PAGES);
		if (IS_ERR(b->mr)) {
			b->mr = NULL;
			return -ENOMEM;
		}
	}
	SDP_INC_STATS(sock_net(c->sk), reused ? SDP_MIB_ZC_MR_REUSED : SDP_MIB_ZC_MR_ALLOCS);
	if (ib_map_mr_sg(b->mr, b->sgt.sgl, nents, NULL, PAGE_SIZE) != nents)
		return -EINVAL;
	return 0;
}

/*
 * Pin @len bytes at @addr (into @b, empty), for the device to write (a
 * reader's) or read, map them for the device and into an MR. A blocking
 * send's or a reader's count in its mm's pinned_vm till they go back, and
 * are kept if the mm has room; MSG_ZEROCOPY's (@async), which may go back
 * in the engine, away from their process, are counted by their
 * notification against the same RLIMIT_MEMLOCK, as TCP's
 * (msg_zerocopy_realloc()).
 */
static int sdp_zbuf_pin(struct sdp_conn *c, struct sdp_zc_buf *b, unsigned long addr,
			u32 len, bool async, bool write)
{
	struct ib_device *ibdev = c->sdev->ibdev;
	u32 off = offset_in_page(addr);
	u32 npages = DIV_ROUND_UP(off + len, PAGE_SIZE);
	unsigned int gup = write ? FOLL_WRITE : 0;
	unsigned long seq = 0;
	bool keep = false;
	int n;

	if (!async) {
		if (!sdp_zbuf_account(c, npages, &keep))
			return -ENOBUFS;
		b->mm = current->mm;
		mmgrab(b->mm);
		b->pinned_vm = npages;
	}
	b->pages = kvmalloc_array(npages, sizeof(*b->pages), GFP_KERNEL);
	if (!b->pages)
		goto fail;
	/* watched before pinned: a change meanwhile makes it stale */
	b->kept = keep && sdp_zbuf_watch(b, addr - off, (unsigned long)npages << PAGE_SHIFT, &seq);
	b->write = write;
	n = pin_user_pages_fast(addr - off, npages, gup | (b->kept ? FOLL_LONGTERM : 0), b->pages);
	if (n != npages && b->kept) {
		/* (pages that cannot be pinned for long, fsdax, unmovable: pinned for the send) */
		if (n > 0)
			unpin_user_pages(b->pages, n);
		sdp_zbuf_unkeep(b);
		n = pin_user_pages_fast(addr - off, npages, gup, b->pages);
	}
	if (n > 0)
		b->npages = n;
	if (n != npages)
		goto fail;
	if (sg_alloc_table_from_pages(&b->sgt, b->pages, npages, off, len, GFP_KERNEL))
		goto fail;
	/* (an IOMMU may merge the pages: sgt.nents says into how many) */
	if (ib_dma_map_sgtable_attrs(ibdev, &b->sgt, sdp_zbuf_dir(b), 0))
		goto fail;
	b->ibdev = ibdev;
	b->mapped = true;
	if (sdp_zbuf_mr(c, b))
		goto fail;
	if (b->kept)
		sdp_zbuf_watched(c, b, seq);
	b->addr = addr;
	b->len = len;
	b->off = off;
	return 0;

fail:
	sdp_zbuf_drop(c, b);
	return -ENOMEM;
}

/* In process context, at the first zero-copy send. */
static int sdp_zbuf_alloc(struct sdp_conn *c)
{
	struct sdp_zc_bufs *set = kzalloc(sizeof(*set), GFP_KERNEL_ACCOUNT);
	u32 i;

	if (!set)
		return -ENOMEM;
	set->conn = c;
	mutex_init(&set->lock);
	spin_lock_init(&set->seq_lock);
	INIT_DELAYED_WORK(&set->gc, sdp_zbuf_gc);
	for (i = 0; i < SDP_ZBUFS; i++)
		set->b[i].set = set;
	c->zbufs = set;
	return 0;
}

/*
 * A kept buffer lent again: what the CPU wrote since the pages were
 * mapped seen by the device, or (a reader's) no line of them cached over
 * what the device will write.
 */
static void sdp_zbuf_sync(struct sdp_zc_buf *b)
{
	if (!ib_uses_virt_dma(b->ibdev))
		dma_sync_sgtable_for_device(b->ibdev->dma_device, &b->sgt, sdp_zbuf_dir(b));
}

/* A reader's buffer the device wrote, for the CPU to read (before it is put back). */
void sdp_zbuf_written(struct sdp_zc_buf *b)
{
	if (b->mapped && !ib_uses_virt_dma(b->ibdev))
		dma_sync_sgtable_for_cpu(b->ibdev->dma_device, &b->sgt, DMA_FROM_DEVICE);
}

/* Which slot a new buffer takes first: an empty one with an MR, an empty one, the oldest kept. */
static int sdp_zbuf_rank(const struct sdp_zc_buf *b)
{
	return b->pages ? 2 : b->mr ? 0 : 1;
}

/*
 * The buffer of a send of @len bytes at @addr of current's memory, or
 * (@write) of a receive into them (in sendmsg() or recvmsg(), under the
 * socket's lock): a kept one of the same bytes, the same way
 * (ZcopyCacheHits), or made in the least recently used of those no one
 * holds. There is one: sends queued are fewer than the buffers, and a
 * connection has one reader's at a time. The stale go first (the work
 * item may not have run yet), their slots and MRs free for this one.
 * NULL: the bytes cannot be pinned or mapped, and are copied.
 */
struct sdp_zc_buf *sdp_zbuf_get(struct sdp_conn *c, unsigned long addr, u32 len, bool async,
				bool write)
{
	struct sdp_zc_buf *b, *lru = NULL;
	u32 i;

	if (!c->zbufs && sdp_zbuf_alloc(c))
		return NULL;
	mutex_lock(&c->zbufs->lock);
	sdp_zbuf_drop_stale(c, false);
	for (i = 0; i < SDP_ZBUFS; i++) {
		b = &c->zbufs->b[i];
		if (smp_load_acquire(&b->busy))
			continue;
		if (!async && b->kept && !READ_ONCE(b->stale) && b->mm == current->mm &&
		    b->addr == addr && b->len == len && b->write == write) {
			sdp_zbuf_sync(b);
			SDP_INC_STATS(sock_net(c->sk), SDP_MIB_ZC_CACHE_HITS);
			goto lend;
		}
		if (!lru || sdp_zbuf_rank(b) < sdp_zbuf_rank(lru) ||
		    (b->pages && lru->pages && time_before(b->used, lru->used)))
			lru = b;
	}
	b = lru;
	if (WARN_ON_ONCE(!b))
		goto none;
	if (b->pages)
		sdp_zbuf_drop(c, b);
	if (sdp_zbuf_pin(c, b, addr, len, async, write))
		goto none;
	if (!async)
		SDP_INC_STATS(sock_net(c->sk), SDP_MIB_ZC_CACHE_MISSES);
lend:
	WRITE_ONCE(b->busy, true);
	mutex_unlock(&c->zbufs->lock);
	return b;
none:
	mutex_unlock(&c->zbufs->lock);
	return NULL;
}

/*
 * The send is over: its MR holds no registration (invalidated, never
 * made, or destroyed with it: sdp_zbuf_revoke()). A kept buffer waits for
 * the next send, unless the send or the connection ended (!@keep); the
 * others go. MSG_ZEROCOPY's may end in softirq.
 */
void sdp_zbuf_put(struct sdp_conn *c, struct sdp_zc_buf *b, bool keep)
{
	if (!b->mm) {
		sdp_zbuf_undma(c, b);
		sdp_zbuf_unpin(b);
		smp_store_release(&b->busy, false);
		return;
	}
	mutex_lock(&c->zbufs->lock);
	if (keep && b->kept && b->mr && c->v.live && !c->failed) {
		b->used = jiffies;
		smp_store_release(&b->busy, false);
		/* (the stale go now, the others once unused for SDP_ZBUF_LINGER) */
		queue_delayed_work(system_wq, &c->zbufs->gc,
				   READ_ONCE(b->stale) ? 0 : SDP_ZBUF_LINGER);
	} else {
		sdp_zbuf_drop(c, b);
		smp_store_release(&b->busy, false);
	}
	mutex_unlock(&c->zbufs->lock);
}

/* A registration that may be live dies with its MR (the connection is over). */
void sdp_zbuf_revoke(struct sdp_conn *c, struct sdp_zc_buf *b)
{
	ib_dereg_mr(b->mr);
	b->mr = NULL;
}

/*
 * The connection's RDMA resources go (process context): every buffer with
 * them, but a blocking sender's, whose pages go back when it returns; the
 * MRs before the PD (no registration is left in them: the QP is drained).
 */
void sdp_zbuf_release(struct sdp_conn *c)
{
	u32 i;

	if (!c->zbufs)
		return;
	mutex_lock(&c->zbufs->lock);
	for (i = 0; i < SDP_ZBUFS; i++) {
		struct sdp_zc_buf *b = &c->zbufs->b[i];

		if (b->pages && smp_load_acquire(&b->busy)) {
			sdp_zbuf_unkeep(b);
			sdp_zbuf_undma(c, b);
		} else if (b->pages) {
			sdp_zbuf_drop(c, b);
		}
		sdp_zbuf_unmr(b);
	}
	mutex_unlock(&c->zbufs->lock);
	/* (no notifier or kept buffer is left to queue it again) */
	cancel_delayed_work_sync(&c->zbufs->gc);
}

/*
 * The connection's end (any context): every buffer went with its
 * resources, or with its sender; no notifier or work is left.
 */
void sdp_zbuf_exit(struct sdp_conn *c)
{
	u32 i;

	if (!c->zbufs)
		return;
	/* (one left: its notifier may still fire, so the set is leaked, not freed) */
	for (i = 0; i < SDP_ZBUFS; i++)
		if (WARN_ON_ONCE(c->zbufs->b[i].pages || c->zbufs->b[i].kept ||
				 c->zbufs->b[i].mr))
			return;
	mutex_destroy(&c->zbufs->lock);
	kfree(c->zbufs);
	c->zbufs = NULL;
}
