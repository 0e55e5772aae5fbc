/* Reading a file by its data, not its length: a sandbox's `truncate -s
 * 15T` takes no space, and a walk that reads it byte for byte never ends. */
#ifndef WS_EXTENTS_H
#define WS_EXTENTS_H

#include <stdbool.h>
#include <sys/types.h>

#include "src/util/error.h"

/* The unit data is read and compared in. */
#define WS_CHUNK (64 * 1024)

/* The chunk (a multiple of WS_CHUNK) holding the first data at or after
 * off; size when only holes are left; off itself where the filesystem
 * cannot tell holes (it is all data then). A negative errno on failure. */
off_t ws_next_data(int fd, off_t off, off_t size);
/* Up to len bytes at off; fewer only at the end of the file. */
ssize_t ws_pread_full(int fd, void *buf, size_t len, off_t off);
/* Whether two regular files of one size hold the same bytes, reading
 * only where either has data. */
bool ws_same_content(int a, int b, off_t size);
/* A 40-hex id of fd's content (size bytes) that costs its data, not its
 * length: a chain of SHA-256 over the chunks that are not all zero, with
 * their index, after "cloister-sparse <size>". 0, or err names rel. */
int ws_sparse_id(int fd, off_t size, char oid[41], const char *rel, cl_error *err);

#endif
