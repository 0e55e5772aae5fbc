/* File-system steps on hostile trees: copy, remove and write without ever
 * following a symlink (openat with O_NOFOLLOW, fstatat without following). */
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
/* openat2 beneath dirfd: no symlink anywhere on rel, no "..", no magic
 * links ("" opens dirfd itself). For paths a sandbox could have written.
 * Returns the fd or -errno (-ELOOP: a symlink on the way). */
int sb_open_beneath(int dirfd, const char *rel, int flags);
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
/* Removes the tree name in dirfd (no error if it does not exist), never
 * following a symlink; a directory the caller owns but cannot read or
 * search (a sandbox made it 0500) is made 0700 first. Iterative, with
 * a bounded number of fds whatever the depth; 0 or -errno of the first
 * failure (what could not go stays, and the caller must report it). */
int sb_remove_tree_at(int dirfd, const char *name);
/* sb_remove_tree_at, and on failure one line on stderr: "cloister: could
 * not remove WHAT: <reason>" (what names the tree and who retries). */
int sb_remove_tree_or_say(int dirfd, const char *name, const char *what);
/* Directories sb_remove_tree_at holds open at once: any depth is removed
 * (deeper parts are moved up into dirfd and removed next). */
#define SB_RM_MAX_DEPTH 64
/* A directory stream of dirfd itself, on an open file description of its
 * own (its offset is not dirfd's); NULL with errno set. The caller
 * closedir()s it; dirfd stays open. */
DIR *sb_opendir_fd(int dirfd);
/* Removes everything in dirfd (sb_remove_tree_at on each entry), best
 * effort: what cannot be removed stays. */
void sb_empty_dir(int dirfd);
/* Opens (creating, mode 0755) each directory of rel below dirfd with
 * O_NOFOLLOW; returns an fd of the last one, or -errno (-ELOOP: a symlink). */
int sb_mkdirs_at(int dirfd, const char *rel);
/* Writes data to rel below dirfd (parents created), replacing a regular
 * file; never through a symlink (-ELOOP) or a hard-linked file (-EMLINK).
 * 0 or -errno. */
int sb_write_at(int dirfd, const char *rel, const void *data, size_t len, int mode);

#endif
