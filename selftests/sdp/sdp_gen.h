/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Keyed byte streams for integrity checks: any byte of stream @key at any
 * offset can be produced or checked without keeping what was sent, so a
 * lost, duplicated, reordered or corrupted byte is found at its offset.
 */
#ifndef SDP_GEN_H
#define SDP_GEN_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

/* Eight bytes of stream @key starting at @word * 8. */
static inline unsigned long long stream_word(unsigned long long key,
					     unsigned long long word)
{
	unsigned long long x = word * 0x9e3779b97f4a7c15ULL + key;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Bytes @off.. of stream @key into @buf (check: compare instead). */
static inline long long stream_walk(unsigned long long key, unsigned long long off,
			     unsigned char *buf, size_t len, bool check)
{
	unsigned long long w = stream_word(key, off >> 3);
	size_t i;

	for (i = 0; i < len; i++, off++) {
		unsigned char b;

		if (!(off & 7))
			w = stream_word(key, off >> 3);
		b = w >> ((off & 7) * 8);
		if (!check)
			buf[i] = b;
		else if (buf[i] != b)
			return off;
	}
	return -1;
}

static inline void stream_fill(unsigned long long key, unsigned long long off,
			unsigned char *buf, size_t len)
{
	stream_walk(key, off, buf, len, false);
}

/* Offset of the first wrong byte in @buf, or -1. */
static inline long long stream_check(unsigned long long key, unsigned long long off,
			      const unsigned char *buf, size_t len)
{
	return stream_walk(key, off, (unsigned char *)buf, len, true);
}

/* Sizes spread evenly over the powers of two from 1 B to @max. */
static inline size_t random_size(unsigned int *seed, size_t max)
{
	int bits = 0;
	size_t size;

	while ((1ULL << bits) < max)
		bits++;
	size = 1ULL << (rand_r(seed) % (bits + 1));
	size += rand_r(seed) % size;
	return size > max ? max : size;
}

/*
 * One end of a stream on @fd, in a thread of its own (stream_io()): it
 * sends stream @key, or receives it (and with @check checks it), blocking,
 * until a call fails or the stream ends. What a test that makes the other
 * end go away reads afterwards.
 */
struct stream_io {
	int fd;
	bool sends, check;
	unsigned long long key;
	unsigned long long bytes;	/* moved so far */
	long long bad;			/* the first wrong byte's offset, or -1 */
	ssize_t last;			/* the last call's return */
	int err;			/* and its errno */
	atomic_int done;
};

#define STREAM_IO_CHUNK	(256 << 10)

static inline void *stream_io(void *arg)
{
	struct stream_io *s = arg;
	unsigned char *buf = malloc(STREAM_IO_CHUNK);
	ssize_t n = -1;

	s->bad = -1;
	errno = ENOMEM;
	while (buf) {
		if (s->sends) {
			stream_fill(s->key, s->bytes, buf, STREAM_IO_CHUNK);
			n = send(s->fd, buf, STREAM_IO_CHUNK, MSG_NOSIGNAL);
		} else {
			n = recv(s->fd, buf, STREAM_IO_CHUNK, 0);
			if (n > 0 && s->check && s->bad < 0)
				s->bad = stream_check(s->key, s->bytes, buf, n);
		}
		if (n <= 0)
			break;
		s->bytes += n;
	}
	s->last = n;
	s->err = n < 0 ? errno : 0;
	free(buf);
	atomic_store(&s->done, 1);
	return NULL;
}

/* Up to @secs for the thread to end; true if it did. */
static inline bool stream_io_ended(struct stream_io *s, int secs)
{
	for (int i = 0; i < secs * 100 && !atomic_load(&s->done); i++)
		usleep(10000);
	return atomic_load(&s->done);
}

#endif
