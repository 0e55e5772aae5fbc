/* The mount kinds bwrap needs beyond `cloister run`'s: --file, --bind-data,
 * --chmod, --dir with --perms, overlays. Called from ns/mounts.c while the
 * new root (rootfd) is built, before pivot_root. */
#ifndef NS_MOUNTS_EXTRA_H
#define NS_MOUNTS_EXTRA_H

#include <stdbool.h>
#include <stddef.h>

#include "ns/fsutil.h"
#include "src/util/error.h"
#include "src/policy/policy.h"

int ns_mount_file(int rootfd, const struct cl_mount *m, const struct ns_create *how,
                  cl_error *err);
int ns_mount_bind_data(int rootfd, const struct cl_mount *m, const struct ns_create *how,
                       cl_error *err);
int ns_mount_chmod(int rootfd, const struct cl_mount *m, cl_error *err);
int ns_mount_dir(int rootfd, const struct cl_mount *m, const struct ns_create *how,
                 cl_error *err);
/* Host-side overlay directories, opened before the host's view changes. */
struct ns_ovl_fds {
	char **lower;         /* "/proc/self/fd/N" per layer, bottom first */
	int upper, work;      /* -1 for --tmp-overlay / --ro-overlay */
};
int ns_overlay_open(const struct cl_mount *m, struct ns_ovl_fds *o, cl_error *err);
/* The same from trees the parent opened and idmapped (ns/idmap.h): the
 * parent of upper and work, and the lower dir. */
int ns_mount_overlay_trees(int rootfd, const struct cl_mount *m, int upper_tree, int lower_tree,
                           bool in_userns, const struct ns_create *how, cl_error *err);
int ns_mount_overlay(int rootfd, const struct cl_mount *m, const struct ns_ovl_fds *o,
                     bool in_userns, const struct ns_create *how, cl_error *err);

/* --proc without a pid namespace of our own, unprivileged: the caller's
 * /proc is bound instead (bwrap does the same). */
int ns_mount_host_proc(int destfd, const struct cl_mount *m, cl_error *err);
/* --bind-fd: the fd's path (bound by name in our mount namespace), and
 * the check that the cloned tree is the fd's file. */
int ns_fd_source_path(int fd, char *buf, size_t len, cl_error *err);
int ns_fd_same_file(int fd, int tree, cl_error *err);

#endif
