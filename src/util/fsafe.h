/* File-system primitives on hostile trees: open, remove, make dirs and
 * write without ever following a symlink. Each returns -errno. */
#ifndef CL_FSAFE_H
#define CL_FSAFE_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>

/* openat2 beneath dirfd: no symlink anywhere on rel, no "..", no magic
 * links ("" opens dirfd itself). For paths a sandbox could have written.
 * Returns the fd or -errno (-ELOOP: a symlink on the way). */
int cl_open_beneath(int dirfd, const char *rel, int flags);
/* Removes the tree name in dirfd (no error if it does not exist), never
 * following a symlink; a directory the caller owns but cannot read or
 * search (a sandbox made it 0500) is made 0700 first. Iterative, with
 * a bounded number of fds whatever the depth; 0 or -errno of the first
 * failure (what could not go stays, and the caller must report it). */
int cl_remove_tree_at(int dirfd, const char *name);
/* cl_remove_tree_at, and on failure one line on stderr: "cloister: could
 * not remove WHAT: <reason>" (what names the tree and who retries). */
int cl_remove_tree_or_say(int dirfd, const char *name, const char *what);
/* Directories cl_remove_tree_at holds open at once: any depth is removed
 * (deeper parts are moved up into dirfd and removed next). */
#define CL_RM_MAX_DEPTH 64
/* A directory stream of dirfd itself, on an open file description of its
 * own (its offset is not dirfd's); NULL with errno set. The caller
 * closedir()s it; dirfd stays open. */
DIR *cl_opendir_fd(int dirfd);
/* Removes everything in dirfd (cl_remove_tree_at on each entry), best
 * effort: what cannot be removed stays. */
void cl_empty_dir(int dirfd);
/* Opens (creating, mode 0755) each directory of rel below dirfd with
 * O_NOFOLLOW; returns an fd of the last one, or -errno (-ELOOP: a symlink). */
int cl_mkdirs_at(int dirfd, const char *rel);
/* Writes data to rel below dirfd (parents created), replacing a regular
 * file; never through a symlink (-ELOOP) or a hard-linked file (-EMLINK).
 * 0 or -errno. */
int cl_write_at(int dirfd, const char *rel, const void *data, size_t len, int mode);

#endif
