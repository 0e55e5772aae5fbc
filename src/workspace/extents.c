/* Files read by their data extents (SEEK_DATA), a chunk at a time, so a
 * sparse file costs what it holds: the copy walker's comparison and the
 * base tree's id of a file too big to hash whole. */
#define _GNU_SOURCE
#include "src/workspace/extents.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "src/workspace/wsdl.h"

off_t ws_next_data(int fd, off_t off, off_t size)
{
	off_t d = lseek(fd, off, SEEK_DATA);

	if (d < 0 && errno == ENXIO)
		return size;
	if (d < 0)
		return errno == EINVAL ? off : -errno;
	if (d >= size)
		return size;
	/* The chunk holding d, never before off (off is where the last
	 * chunk ended, so a multiple of WS_CHUNK). */
	d -= d % WS_CHUNK;
	return d < off ? off : d;
}

ssize_t ws_pread_full(int fd, void *buf, size_t len, off_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, off + (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static size_t chunk_len(off_t at, off_t size)
{
	return size - at < WS_CHUNK ? (size_t)(size - at) : WS_CHUNK;
}

bool ws_same_content(int a, int b, off_t size)
{
	/* On the stack, as copy.c's buffer: 128 KiB, in the caller's process. */
	char x[WS_CHUNK], y[WS_CHUNK];
	off_t off = 0;

	while (off < size) {
		off_t da = ws_next_data(a, off, size), db = ws_next_data(b, off, size);
		off_t at = da < db ? da : db;
		if (da < 0 || db < 0)
			return false;
		if (at >= size)
			return true;   /* holes in both to the end */
		/* A hole in one and data in the other reads as zeros there. */
		size_t len = chunk_len(at, size);
		if (ws_pread_full(a, x, len, at) != (ssize_t)len || ws_pread_full(b, y, len, at) != (ssize_t)len ||
		    memcmp(x, y, len))
			return false;
		off = at + (off_t)len;
	}
	return true;
}

static bool all_zero(const char *p, size_t len)
{
	return len == 0 || (p[0] == 0 && memcmp(p, p + 1, len - 1) == 0);
}

/* buf holds [32 bytes: the chain so far][8: the chunk's index][data]. */
int ws_sparse_id(int fd, off_t size, char oid[41], const char *rel, cl_error *err)
{
	unsigned char buf[40 + WS_CHUNK], h[32];
	char head[64];
	off_t off = 0;

	ws_sha256(head, (size_t)snprintf(head, sizeof(head), "cloister-sparse %lld", (long long)size), h);
	while (off < size) {
		off_t at = ws_next_data(fd, off, size);
		ssize_t n;
		if (at < 0)
			return cl_fail(err, (int)-at, "reading %s", rel);
		if (at >= size)
			break;
		size_t len = chunk_len(at, size);
		if ((n = ws_pread_full(fd, buf + 40, len, at)) < 0)
			return cl_fail(err, (int)-n, "reading %s", rel);
		if (n != (ssize_t)len)
			return cl_fail(err, EIO, "reading %s: it shrank while it was hashed", rel);
		/* Zero chunks are left out, holes or not: the id is the
		 * content's, whatever the filesystem made holes of. */
		if (!all_zero((char *)buf + 40, len)) {
			uint64_t idx = (uint64_t)(at / WS_CHUNK);
			memcpy(buf, h, 32);
			for (int i = 0; i < 8; i++)   /* little-endian: the same id on every host */
				buf[32 + i] = (unsigned char)(idx >> (8 * i));
			ws_sha256(buf, 40 + len, h);
		}
		off = at + (off_t)len;
	}
	for (int i = 0; i < 20; i++)
		snprintf(oid + 2 * i, 3, "%02x", h[i]);
	return 0;
}
