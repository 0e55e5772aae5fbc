/* Identity for a root caller (docs/security.md, "Root callers"): the sandbox's
 * ids map to an unprivileged host id, and the caller's binds are idmapped. */
#define _GNU_SOURCE
#include "ns/idmap.h"
#include "ns/mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/mount.h>
#include <linux/securebits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ns/fsutil.h"
#include "ns/sync.h"
#include "src/util/cleanup.h"
#include "src/util/fdio.h"
#include "src/policy/parse.h"

bool ns_idmap_by_parent(const struct cl_policy *p)
{
	return p->host_uid != getuid() || p->host_gid != getgid();
}

static int open_tree_of(const char *path, const char *what, cl_error *err)
{
	int fd = ns_clone_tree(path);

	return fd < 0 ? cl_fail(err, -fd, "%s %s", what, path) : fd;
}

/* The directory holding an overlay's upper and work dirs (one mount must
 * hold both: overlayfs wants them on one filesystem, and the child reaches
 * them below this one tree). */
static int overlay_parent(const struct cl_mount *m, char *buf, size_t len, cl_error *err)
{
	const char *slash = strrchr(m->src, '/');
	size_t n = slash ? (size_t)(slash - m->src) : 0;

	if (!slash || n == 0 || n >= len || !m->ovl_work || strncmp(m->ovl_work, m->src, n + 1) ||
	    strchr(m->ovl_work + n + 1, '/') || !m->ovl_lower || !m->ovl_lower[0] || m->ovl_lower[1])
		return cl_fail(err, EINVAL, "overlay on %s: a root caller's idmapped overlay needs one lower "
		               "dir and its upper and work dirs side by side", m->dest);
	memcpy(buf, m->src, n);
	buf[n] = '\0';
	return 0;
}

/* An idmapped overlay (a root caller's workspace): its upper dirs' parent
 * at trees[i], its lower dir at trees[n_mounts + i]; the child stacks the
 * overlay on them (ns_mount_overlay_trees). */
static int open_overlay_trees(const struct cl_policy *p, size_t i, int *trees, cl_error *err)
{
	const struct cl_mount *m = &p->mounts[i];
	char parent[4096];
	int rc;

	if ((rc = overlay_parent(m, parent, sizeof(parent), err)) < 0)
		return rc;
	if ((trees[i] = open_tree_of(parent, "overlay upper dir", err)) < 0)
		return trees[i];
	trees[p->n_mounts + i] = open_tree_of(m->ovl_lower[0], "overlay lower dir", err);
	return trees[p->n_mounts + i] < 0 ? trees[p->n_mounts + i] : 0;
}

int ns_idmap_open_trees(const struct cl_policy *p, int *trees, int *root, cl_error *err)
{
	*root = -1;
	for (size_t i = 0; i < 2 * p->n_mounts; i++)
		trees[i] = -1;
	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct cl_mount *m = &p->mounts[i];
		if (!(m->flags & CL_MF_CALLER_OPEN) || !m->src)
			continue;
		if (m->kind == CL_MNT_OVERLAY) {
			if (open_overlay_trees(p, i, trees, err) < 0)
				return cl_error_code(err);
			continue;
		}
		if (m->kind != CL_MNT_BIND)
			continue;
		trees[i] = open_tree_of(m->src, "bind source", err);
		if (trees[i] < 0)
			return trees[i];
	}
	if (p->rootfs && (*root = open_tree_of(p->rootfs, "opening --rootfs", err)) < 0)
		return *root;
	return 0;
}

static int write_map(pid_t pid, const char *file, unsigned inside, unsigned outside, cl_error *err)
{
	char path[64], line[64];
	int rc;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	cl_format_idmap(line, sizeof(line), inside, outside);
	rc = cl_write_file_at(AT_FDCWD, path, line);
	return rc < 0 ? cl_fail(err, -rc, "writing %s of the sandbox", file) : 0;
}

/* The flags the child would set on a bind, plus the idmapping (userns >=
 * 0): the tree belongs to our (host) mount namespace, so we set them all.
 * A filesystem without idmapped mounts (overlayfs, tmpfs before 6.3, NFS,
 * FUSE, or a submount of one) fails the launch: a plain bind would leave
 * the sandbox unable to write there, and host root would reopen the hole,
 * so the caller decides. */
static int idmap_tree(int tree, uint64_t attrs, int userns, const char *what, cl_error *err)
{
	struct mount_attr a = {.attr_set = attrs | MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};

	if (userns < 0)
		a.attr_set = attrs;   /* read-only: flags only, no idmapping */
	if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) == 0)
		return 0;
	if (userns >= 0 && (errno == EINVAL || errno == EOPNOTSUPP))
		return cl_fail_errno(err, "%s: its filesystem cannot be idmapped, which a root caller's "
		                     "sandbox needs to write there as root (bind a directory on ext4, "
		                     "xfs or btrfs, or pass --host-root)", what);
	return cl_fail_errno(err, "setting mount flags on %s", what);
}

int ns_idmap_after_clone(const struct cl_policy *p, pid_t pid, const int *trees, int root,
                         int sync_fd, cl_error *err)
{
	cl_autoclose int userns = -1;
	char path[64];

	/* setgroups stays "allow": the child clears its (host root's)
	 * supplementary groups itself, which "deny" would forbid. */
	if (write_map(pid, "uid_map", p->uid, p->host_uid, err) < 0 ||
	    write_map(pid, "gid_map", p->gid, p->host_gid, err) < 0)
		return cl_error_code(err);
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	userns = open(path, O_RDONLY | O_CLOEXEC);
	if (userns < 0)
		return cl_fail_errno(err, "opening the sandbox's user namespace");
	/* The child holds the same trees (inherited at clone): the idmapping
	 * set here is what it attaches. */
	for (size_t j = 0; p->n_mounts > 0 && j < 2 * p->n_mounts; j++) {
		const struct cl_mount *m = &p->mounts[j % p->n_mounts];
		if (trees[j] >= 0 && idmap_tree(trees[j], ns_bind_attrs(m->flags),
		                                m->flags & CL_MF_IDMAP ? userns : -1,
		                                j < p->n_mounts ? m->src : m->ovl_lower[0], err) < 0)
			return cl_error_code(err);
	}
	/* --rootfs is idmapped where it can be (the sandbox may create its
	 * mount points in it, as root could); it is read-only in `cloister
	 * run`, so where it cannot (an image on overlayfs) the plain tree is
	 * safe: root's files are then nobody's, mount points must exist. */
	if (root >= 0 && idmap_tree(root, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, userns, p->rootfs,
	                            err) < 0 &&
	    idmap_tree(root, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, -1, p->rootfs, err) < 0)
		return cl_error_code(err);
	if (ns_msg_send(sync_fd, NS_MSG_MAPS, 0, 0, "maps", "") < 0)
		return cl_fail(err, EPIPE, "releasing the sandbox after its id maps");
	return 0;
}

int ns_idmap_child_wait(const struct cl_policy *p, int sync_fd, cl_error *err)
{
	struct ns_msg m;
	int rc = ns_msg_recv(sync_fd, &m);

	if (rc <= 0 || m.type != NS_MSG_MAPS)
		return cl_fail(err, rc < 0 ? -rc : EPIPE, "waiting for the id maps");
	/* Until now we were host root (kuid 0, unmapped here) with host root's
	 * groups: groups first (setgroups needs our capabilities), then gid,
	 * then uid. NO_SETUID_FIXUP keeps our capabilities in this namespace
	 * across a change to a non-zero uid; they are still needed for the
	 * mounts and are dropped before exec. */
	if (setgroups(0, NULL) < 0)
		return cl_fail_errno(err, "dropping supplementary groups");
	if (prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP, 0, 0, 0) < 0)
		return cl_fail_errno(err, "keeping capabilities across setuid");
	if (setresgid(p->gid, p->gid, p->gid) < 0 || setresuid(p->uid, p->uid, p->uid) < 0)
		return cl_fail_errno(err, "becoming uid %u gid %u of the sandbox", (unsigned)p->uid,
		                     (unsigned)p->gid);
	if (prctl(PR_SET_SECUREBITS, 0, 0, 0, 0) < 0)
		return cl_fail_errno(err, "resetting securebits");
	return 0;
}
