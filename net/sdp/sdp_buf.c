// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol: the rings' buffers and the memory they charge.
 *
 * Ring buffers are socket memory, charged as TCP charges its queues: to all
 * SDP sockets' total (net.sdp.mem, in pages, as /proc/net/protocols shows
 * it) and to the socket's memory cgroup; receive buffers also to
 * sk_rmem_alloc, and send buffers filled and not yet completed to
 * sk_wmem_queued (the two kept for reuse are not in flight, as TCP's queue
 * is empty once all is acknowledged). The peer's use makes the receive ring
 * grow; past the hard limit, or the cgroup's, it does not, and a new
 * connection cannot start. A sender waits, as TCP's, while its bytes in
 * flight reach SO_SNDBUF, or for memory. The control ring, a few bytes per
 * connection like the socket itself, is kernel memory of the cgroup.
 */
#include <linux/mm.h>
#include <linux/percpu_counter.h>
#include <linux/slab.h>

#include "sdp_rdma.h"

atomic_long_t sdp_memory_allocated;
DEFINE_PER_CPU(int, sdp_memory_per_cpu_fw_alloc);
unsigned long sdp_memory_pressure;
struct percpu_counter sdp_sockets_allocated;
long sdp_sysctl_mem[3];
/* [0]: what a socket may hold under memory pressure (the core reads no more) */
int sdp_sysctl_rmem[3] = { SDP_RX_START_BUFS * SDP_BUF_SIZE };
int sdp_sysctl_wmem[3] = { SDP_TX_KEEP_BUFS * SDP_BUF_SIZE };

/*
 * Past the pressure limit a socket's charge is refused beyond its share of
 * the high limit (its sockets_allocated fraction), as TCP's.
 */
void sdp_enter_memory_pressure(struct sock *sk)
{
	WRITE_ONCE(sdp_memory_pressure, 1);
}

void sdp_leave_memory_pressure(struct sock *sk)
{
	WRITE_ONCE(sdp_memory_pressure, 0);
}

/* TCP's defaults (tcp_init_mem()): a sixteenth of memory before the limits. */
int sdp_mem_init(void)
{
	unsigned long limit = max(nr_free_buffer_pages() / 16, 128UL);

	sdp_sysctl_mem[0] = limit / 4 * 3;
	sdp_sysctl_mem[1] = limit;
	sdp_sysctl_mem[2] = sdp_sysctl_mem[0] * 2;
	return percpu_counter_init(&sdp_sockets_allocated, 0, GFP_KERNEL);
}

void sdp_mem_exit(void)
{
	percpu_counter_destroy(&sdp_sockets_allocated);
}

static enum dma_data_direction sdp_mem_dir(enum sdp_mem mem)
{
	return mem == SDP_MEM_RX || mem == SDP_MEM_RX_KERNEL ?
	       DMA_FROM_DEVICE : DMA_TO_DEVICE;
}

/* The cgroup's, not the socket's. */
static bool sdp_mem_kernel(enum sdp_mem mem)
{
	return mem == SDP_MEM_KERNEL || mem == SDP_MEM_RX_KERNEL;
}

static bool sdp_mem_charge(struct sock *sk, u32 size, enum sdp_mem mem)
{
	if (sdp_mem_kernel(mem))
		return true;
	if ((int)size > sk->sk_forward_alloc &&
	    !__sk_mem_schedule(sk, size, mem == SDP_MEM_RX ? SK_MEM_RECV : SK_MEM_SEND))
		return false;
	sk_mem_charge(sk, size);
	if (mem == SDP_MEM_RX)
		atomic_add(size, &sk->sk_rmem_alloc);
	return true;
}

static void sdp_mem_uncharge(struct sock *sk, u32 size, enum sdp_mem mem)
{
	if (sdp_mem_kernel(mem))
		return;
	if (mem == SDP_MEM_RX)
		atomic_sub(size, &sk->sk_rmem_alloc);
	sk_mem_uncharge(sk, size);
}

/* A receive buffer the SRQ filled, now the connection's: charged if the socket may. */
bool sdp_buf_adopt(struct sdp_conn *c, u32 size)
{
	return sdp_mem_charge(c->sk, size, SDP_MEM_RX);
}

/*
 * On an SRQ a promise holds no memory until a message lands in it, but it
 * lets the peer send one: made only while the socket could be charged the
 * @size bytes it will take (net.sdp.mem, the memory cgroup), as a ring's
 * buffer is charged when made.
 */
bool sdp_buf_could_charge(struct sdp_conn *c, u32 size)
{
	if (!sdp_mem_charge(c->sk, size, SDP_MEM_RX))
		return false;
	sdp_mem_uncharge(c->sk, size, SDP_MEM_RX);
	return true;
}

/* A buffer of @size bytes for the device, charged as @mem says. */
int sdp_buf_map(struct sdp_conn *c, void **buf, u64 *dma, u32 size,
		enum sdp_mem mem, gfp_t gfp)
{
	struct ib_device *dev = c->sdev->ibdev;
	struct sock *sk = c->sk;

	static const enum sdp_fault site[] = {
		[SDP_MEM_RX] = SDP_FAULT_RX_BUF, [SDP_MEM_TX] = SDP_FAULT_TX_BUF,
		[SDP_MEM_KERNEL] = SDP_FAULT_KMEM_BUF,
		[SDP_MEM_RX_KERNEL] = SDP_FAULT_KMEM_BUF,
	};

	if (sdp_fault(site[mem]) || !sdp_mem_charge(sk, size, mem))
		return -ENOMEM;
	/*
	 * An atomic allocation is the engine's, which may run in a task that
	 * busy polls another connection's CQ: charged to nobody, as in softirq.
	 */
	*buf = kmalloc(size, sdp_mem_kernel(mem) && gfpflags_allow_blocking(gfp) ?
			     gfp | __GFP_ACCOUNT : gfp);
	if (*buf) {
		*dma = ib_dma_map_single(dev, *buf, size, sdp_mem_dir(mem));
		if (!ib_dma_mapping_error(dev, *dma))
			return 0;
		kfree(*buf);
		*buf = NULL;
	}
	sdp_mem_uncharge(sk, size, mem);
	return -ENOMEM;
}

void sdp_buf_unmap(struct sdp_conn *c, void *buf, u64 dma, u32 size,
		   enum sdp_mem mem)
{
	if (!buf)
		return;
	ib_dma_unmap_single(c->sdev->ibdev, dma, size, sdp_mem_dir(mem));
	kfree(buf);
	sdp_mem_uncharge(c->sk, size, mem);
}

/* Every buffer of the rings, and the rings. */
void sdp_bufs_free(struct sdp_conn *c)
{
	u32 i;

	for (i = 0; c->rx && i < c->rx_count; i++)
		sdp_buf_unmap(c, c->rx[i].buf, c->rx[i].dma, c->rcv_size,
			      c->rx[i].kmem ? SDP_MEM_RX_KERNEL : SDP_MEM_RX);
	/* what was in flight is not queued any more */
	sk_wmem_queued_add(c->sk, -(int)((c->tx_head - c->tx_tail) * c->snd_size));
	for (i = 0; c->tx && i < c->tx_count; i++)
		sdp_buf_unmap(c, c->tx[i].buf, c->tx[i].dma, c->snd_size,
			      c->tx[i].kmem ? SDP_MEM_KERNEL : SDP_MEM_TX);
	sdp_tx_keep_drop(c);
	sdp_buf_unmap(c, c->ctrl_buf, c->ctrl_dma, SDP_CTRL_SLOTS * SDP_CTRL_MSG_MAX,
		      SDP_MEM_KERNEL);
	kfree(c->rx);
	kfree(c->tx);
	kfree(c->seq.hist);
}

/*
 * A buffer for a send slot about to be filled (process context), with the
 * socket's sk_allocation: a block driver's GFP_NOIO must not recurse into
 * its own I/O. With @force, a buffer the socket's limits refuse is taken
 * as kernel memory of the cgroup: a socket with nothing in flight must not
 * wait for memory only others can free, as TCP forces its first skb
 * (sk_forced_mem_schedule(), whose cgroup charge is not exported).
 */
int sdp_tx_buf_get(struct sdp_conn *c, struct sdp_tx_slot *s, gfp_t gfp, bool force)
{
	int err;

	s->kmem = false;
	if (c->tx_kept) {
		c->tx_kept--;
		s->buf = c->tx_keep[c->tx_kept].buf;
		s->dma = c->tx_keep[c->tx_kept].dma;
		return 0;
	}
	err = sdp_buf_map(c, &s->buf, &s->dma, c->snd_size, SDP_MEM_TX, gfp);
	if (err && force) {
		err = sdp_buf_map(c, &s->buf, &s->dma, c->snd_size, SDP_MEM_KERNEL, gfp);
		s->kmem = !err;
	}
	return err;
}

/* The kept send buffers go: idle, a connection holds none, as TCP none once all is acknowledged. */
void sdp_tx_keep_drop(struct sdp_conn *c)
{
	while (c->tx_kept) {
		c->tx_kept--;
		sdp_buf_unmap(c, c->tx_keep[c->tx_kept].buf, c->tx_keep[c->tx_kept].dma,
			      c->snd_size, SDP_MEM_TX);
	}
}

/* A completed send slot's buffer: kept for the next message, or freed. */
void sdp_tx_buf_put(struct sdp_conn *c, struct sdp_tx_slot *s)
{
	if (s->kmem) {
		sdp_buf_unmap(c, s->buf, s->dma, c->snd_size, SDP_MEM_KERNEL);
	} else if (c->tx_kept < SDP_TX_KEEP_BUFS) {
		c->tx_keep[c->tx_kept].buf = s->buf;
		c->tx_keep[c->tx_kept].dma = s->dma;
		c->tx_kept++;
	} else {
		sdp_buf_unmap(c, s->buf, s->dma, c->snd_size, SDP_MEM_TX);
	}
	s->buf = NULL;
}
