/* Symlink-safe path helpers for building the sandbox root: every path inside
 * the new root is resolved with openat2(RESOLVE_IN_ROOT), so a symlink planted
 * in a bound directory can never point a mount outside the sandbox. */
#ifndef NS_FSUTIL_H
#define NS_FSUTIL_H

#include <stdbool.h>

#include "src/error.h"

enum ns_node { NS_NODE_DIR, NS_NODE_FILE };

/* O_PATH fd of path under rootfd (resolved as if rootfd were "/"). */
int ns_open_in_root(int rootfd, const char *path, int flags);
/* Like ns_open_in_root, creating path (and missing parents as directories)
 * as `type` when absent. Returns an O_PATH fd or -errno with err set. */
int ns_ensure_path(int rootfd, const char *path, enum ns_node type, cl_error *err);
/* Returns the fd of the parent directory of path and points *base at the
 * last component (inside path). Parents are created. */
int ns_ensure_parent(int rootfd, const char *path, const char **base, cl_error *err);

#endif
