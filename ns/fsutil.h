/* Symlink-safe path helpers for building the sandbox root: every path inside
 * the new root is resolved with openat2(RESOLVE_IN_ROOT), so a symlink planted
 * in a bound directory can never point a mount outside the sandbox. */
#ifndef NS_FSUTIL_H
#define NS_FSUTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/util/error.h"

enum ns_node { NS_NODE_DIR, NS_NODE_FILE };

/* How missing parts of a path are created: the mode of new directories,
 * and whether failures are worded as bwrap words them. */
struct ns_create {
	mode_t dirs;
	bool bwrap_msgs;
};

/* O_PATH fd of path under rootfd (resolved as if rootfd were "/"). */
int ns_open_in_root(int rootfd, const char *path, int flags);
/* Like ns_open_in_root, creating path (and missing parents as directories)
 * as `type` when absent. Returns an O_PATH fd or -errno with err set. */
int ns_ensure_path(int rootfd, const char *path, enum ns_node type,
                   const struct ns_create *how, cl_error *err);
/* ns_ensure_path for the place a mount lands. With how->bwrap_msgs these
 * are bwrap 0.12's rules: a symlink at path is refused ("Can't mount on
 * symlink destination PATH"), and so is an existing path of the other
 * kind ("Destination is not a directory|file PATH"); cloister run follows
 * a symlink at path (inside the root) as before. */
int ns_ensure_mount_point(int rootfd, const char *path, enum ns_node type,
                          const struct ns_create *how, cl_error *err);
/* Returns the fd of the parent directory of path and points *base at the
 * last component (inside path). Parents are created as `how` says. */
int ns_ensure_parent(int rootfd, const char *path, const char **base,
                     const struct ns_create *how, cl_error *err);
/* bwrap's mode for directories made on the way to an operation's DEST:
 * 0755, without the group or other bits when --perms PERMS has none of
 * that class ((mode_t)-1: no --perms). */
mode_t ns_parent_mode(mode_t perms);
/* mount_setattr on the mount fd itself: sets `set` and clears `clr`
 * (MOUNT_ATTR_*), flags adds AT_RECURSIVE. On failure: "setting mount
 * flags on WHAT". */
int ns_set_attr(int fd, unsigned int flags, uint64_t set, uint64_t clr, const char *what,
                cl_error *err);
/* A detached recursive clone of the tree at path (open_tree), or -errno. */
int ns_clone_tree(const char *path);

#endif
