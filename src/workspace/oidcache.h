/* A stat cache of git blob ids for baseRef (git's index idea): a base
 * file whose inode, size, mode, mtime and ctime are unchanged since it was
 * hashed keeps its id, so a capture reads only files that changed. */
#ifndef WS_OIDCACHE_H
#define WS_OIDCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "src/workspace/patch.h"

struct ws_oid_ent;

struct ws_oidcache {
	struct ws_oid_ent *v;
	size_t n, cap;
	size_t *slots;        /* open addressing over v, (size_t)-1 = empty */
	size_t n_slots;
	bool dirty;
	int dir_fd;           /* <state>/oidcache, or -1 (no cache: all hashed) */
	char key[65];
	struct timespec now;
};

/* Opens the cache of the tree whose root is dir_fd (keyed by its resolved
 * path and skip). Never fails: without a usable cache every file is
 * hashed. */
void ws_oidcache_open(struct ws_oidcache *c, int dir_fd, const char *skip);
/* The cached id of path if st still matches, else NULL. */
const char *ws_oidcache_get(const struct ws_oidcache *c, const char *path, const struct stat *st);
/* Records path's id (not for a file changed in the last 2 s: its next
 * change could keep the same timestamps). */
void ws_oidcache_put(struct ws_oidcache *c, const char *path, const struct stat *st,
                     const char oid[WS_OID_HEX + 1]);
/* Writes the cache back if it changed (a temporary file renamed over it)
 * and frees it. */
void ws_oidcache_close(struct ws_oidcache *c);

#endif
