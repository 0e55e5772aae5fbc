/* The sandbox's steps on hostile trees: copy a request tree and walk one
 * directory level, with Smithers' error codes (primitives: src/util/fsafe.h). */
#ifndef SB_FSAFE_H
#define SB_FSAFE_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>

#include "src/sandbox/sberror.h"

/* Copies the tree at src into the existing empty directory dst_fd: regular
 * files and directories only; a symlink or special file anywhere fails with
 * TOOL_PATH_ESCAPE / TOOL_PATH_INVALID naming it. Counts bytes copied; more
 * than SB_MAX_BUNDLE_BYTES in all is INVALID_INPUT, as in Smithers. */
int sb_copy_tree(const char *src, int dst_fd, uint64_t *bytes, struct sb_error *e);
/* One directory level of a hostile tree: fn(dirfd, name, rel, ctx, e) for
 * each entry but "." and "..", rel being DIR_REL/name (name at the top,
 * where dir_rel is ""); stops at fn's first error. Takes dfd over. Failing
 * to list the directory is `code`, "reading WHAT DIR_REL"; a rel longer
 * than PATH_MAX is TOOL_PATH_INVALID. Recursion is fn's. */
typedef int (*sb_entry_fn)(int dirfd, const char *name, const char *rel, void *ctx,
                           struct sb_error *e);
int sb_each_entry(int dfd, const char *dir_rel, enum sb_code code, const char *what,
                  sb_entry_fn fn, void *ctx, struct sb_error *e);

#endif
