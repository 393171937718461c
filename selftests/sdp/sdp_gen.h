/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Keyed byte streams for integrity checks: any byte of stream @key at any
 * offset can be produced or checked without keeping what was sent, so a
 * lost, duplicated, reordered or corrupted byte is found at its offset.
 */
#ifndef SDP_GEN_H
#define SDP_GEN_H

#include <stdbool.h>
#include <stdlib.h>

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

#endif
