/* A root caller's sandbox as an unprivileged host identity: the parent maps
 * the sandbox's ids to an unused host id and idmaps the caller's own binds,
 * so files written there still belong to the caller on the host. */
#ifndef NS_IDMAP_H
#define NS_IDMAP_H

#include <stdbool.h>
#include <sys/types.h>

#include "src/util/error.h"
#include "src/policy/policy.h"

/* Maps the child's ids differently from its own euid (only a privileged
 * parent can write such maps): the child must wait for them. */
bool ns_idmap_by_parent(const struct cl_policy *p);

/* ---- parent, caller's privileges ---- */

/* Before clone: opens every CL_MF_CALLER_OPEN bind source and --rootfs as
 * detached trees (with the caller's rights); trees[i] per mount, *root for
 * --rootfs, -1 where none. trees has 2 * n_mounts entries: a CL_MF_CALLER_OPEN
 * overlay has the parent of its upper and work dirs at i and its lower dir
 * at n_mounts + i. The child inherits the fds. */
int ns_idmap_open_trees(const struct cl_policy *p, int *trees, int *root, cl_error *err);
/* After clone: writes the child's uid/gid maps, flags the trees (idmapped
 * with its user namespace when CL_MF_IDMAP), then tells it to go on
 * (NS_MSG_MAPS). */
int ns_idmap_after_clone(const struct cl_policy *p, pid_t pid, const int *trees, int root,
                         int sync_fd, cl_error *err);

/* ---- child, before the mounts ---- */

/* Waits for the parent's maps, then becomes p->uid/p->gid of the new user
 * namespace (the unprivileged host ids) with no supplementary groups. */
int ns_idmap_child_wait(const struct cl_policy *p, int sync_fd, cl_error *err);

#endif
