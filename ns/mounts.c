/* The sandbox filesystem, built with the new mount API: sources are cloned as
 * detached trees first (so nothing we attach can shadow a source), flagged
 * nosuid/nodev/ro while detached, then attached under a fresh root whose
 * destinations are resolved with RESOLVE_IN_ROOT; finally pivot_root. */
#define _GNU_SOURCE
#include "ns/mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ns/fsutil.h"
#include "ns/mounts_extra.h"
#include "src/util/cleanup.h"

/* Where the new root is attached while it is built. Sources were opened
 * before, so shadowing the host's /tmp here hides nothing we need. */
#define STAGING_DIR "/tmp"

static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};
#define N_DEV_NODES (sizeof(dev_nodes) / sizeof(*dev_nodes))

/* /proc entries that leak host state or allow host-wide actions. */
static const char *const proc_mask_files[] = {"kcore", "keys", "timer_list", "sched_debug",
                                              "latency_stats", "timer_stats", "kallsyms",
                                              "kpagecount", "kpageflags", "kpagecgroup"};
static const char *const proc_mask_dirs[] = {"acpi", "scsi", "asound", "driver"};
static const char *const proc_ro[] = {"sys", "sysrq-trigger", "irq", "bus", "fs"};

struct mount_ctx {
	const struct cl_policy *p;
	int *trees;        /* per mount: detached source tree, or -1 */
	char **links;      /* per mount: symlink target when KEEP_SYMLINK hit */
	int devnull;       /* detached /dev/null for masking, or -1 */
	int dev[N_DEV_NODES];
	int console;       /* bwrap: the caller's terminal for DEV/console, or -1 */
	struct ns_create how;  /* for the mount being made: parents' mode, wording */
	int rootfd;        /* the new root while it is built */
	struct ns_ovl_fds *ovl;  /* per mount: overlay layers opened early */
	const int *pre;    /* per mount: source tree opened by the parent, or -1 (may be NULL) */
	int pre_root;      /* --rootfs tree opened by the parent, or -1 */
};

uint64_t ns_bind_attrs(unsigned flags)
{
	uint64_t a = MOUNT_ATTR_NOSUID;

	if (!(flags & CL_MF_DEV))
		a |= MOUNT_ATTR_NODEV;
	if (flags & CL_MF_RO)
		a |= MOUNT_ATTR_RDONLY;
	return a;
}

static bool pre_overlay(const struct mount_ctx *c, size_t i)
{
	return c->pre && c->pre[i] >= 0 && c->pre[c->p->n_mounts + i] >= 0;
}

/* Clones one bind source; *tree stays -1 for an absent optional source. */
static int open_source(const struct cl_mount *m, bool bwrap_msgs, int *tree, char **link,
                       cl_error *err)
{
	const char *what = m->src ? m->src : "(fd)";
	const char *path = m->src;
	char fdpath[PATH_MAX];

	/* An fd source belongs to the caller's mount namespace, which
	 * open_tree refuses to clone from here: bind its path instead. */
	if (m->src_fd >= 0 && ns_fd_source_path(m->src_fd, fdpath, sizeof(fdpath), err) < 0)
		return cl_error_code(err);
	if (m->src_fd >= 0)
		path = fdpath;
	/* (Only the default system binds keep symlinks: they have a path.) */
	if ((m->flags & CL_MF_KEEP_SYMLINK) && m->src) {
		char buf[PATH_MAX];
		ssize_t n = readlink(m->src, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = '\0';
			*link = strdup(buf);
			return *link ? 0 : cl_fail(err, ENOMEM, "reading link %s", what);
		}
	}
	*tree = ns_clone_tree(path);
	if (*tree < 0) {
		int e = -*tree;
		*tree = -1;
		if (e == ENOENT && (m->flags & CL_MF_TRY))
			return 0;
		return cl_fail(err, e, bwrap_msgs ? "Can't find source path %s" : "bind source %s",
		               what);
	}
	if (m->src_fd >= 0 && ns_fd_same_file(m->src_fd, *tree, err) < 0)
		return cl_error_code(err);
	return ns_set_attr(*tree, AT_RECURSIVE, ns_bind_attrs(m->flags), 0, what, err);
}

/* A host device node, nosuid; noexec unless `exec` (bwrap's device binds
 * keep exec even where the host's /dev is noexec): one mount_setattr. */
static int clone_host_node(const char *path, bool exec, int *out, cl_error *err)
{
	*out = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (*out < 0) {
		if (errno == ENOENT || errno == ENXIO)
			return 0;
		return cl_fail_errno(err, "cloning %s", path);
	}
	return ns_set_attr(*out, 0, MOUNT_ATTR_NOSUID | (exec ? 0 : MOUNT_ATTR_NOEXEC),
	                   exec ? MOUNT_ATTR_NOEXEC : 0, path, err);
}

/* Step 1: every host-side source is captured before the host view changes. */
static int open_sources(struct mount_ctx *c, cl_error *err)
{
	const struct cl_policy *p = c->p;
	bool need_dev = false, need_proc = false;
	int rc;

	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct cl_mount *m = &p->mounts[i];
		need_dev |= m->kind == CL_MNT_DEV;
		need_proc |= m->kind == CL_MNT_PROC;
		/* An overlay the parent opened is reached through its trees (the
		 * child may not open the caller's directories itself). */
		if (m->kind == CL_MNT_OVERLAY && !pre_overlay(c, i) &&
		    (rc = ns_overlay_open(m, &c->ovl[i], err)) < 0)
			return rc;
		if (m->kind != CL_MNT_BIND)
			continue;
		if (c->pre && c->pre[i] >= 0) {
			c->trees[i] = c->pre[i];   /* flags already set by the parent */
			continue;
		}
		rc = open_source(m, p->hooks.bwrap_msgs, &c->trees[i], &c->links[i], err);
		if (rc < 0)
			return rc;
	}
	for (size_t i = 0; need_dev && i < N_DEV_NODES; i++) {
		char path[32];
		snprintf(path, sizeof(path), "/dev/%s", dev_nodes[i]);
		rc = clone_host_node(path, p->hooks.bwrap_mounts, &c->dev[i], err);
		if (rc < 0)
			return rc;
	}
	if (need_dev && p->hooks.console_tty[0] &&
	    (rc = clone_host_node(p->hooks.console_tty, true, &c->console, err)) < 0)
		return rc;
	if (need_proc && (!p->hooks.bwrap_mounts || p->hooks.proc_masks))
		return clone_host_node("/dev/null", false, &c->devnull, err);
	return 0;
}

static int new_fs(const struct mount_ctx *c, const char *type, const char *mode, uint64_t size,
                  uint64_t attrs, const char *what, cl_error *err)
{
	cl_autoclose int fsfd = fsopen(type, FSOPEN_CLOEXEC);
	char sz[32];
	int mfd;

	if (fsfd < 0)
		return cl_fail_errno(err, "creating %s for %s", type, what);
	/* bwrap mode names the source after the type, as mount(8) and bwrap
	 * do (clients compare mountinfo); cloister run saves the syscall: its
	 * mountinfo says "none". */
	if (c->p->hooks.bwrap_mounts && fsconfig(fsfd, FSCONFIG_SET_STRING, "source", type, 0) < 0)
		return cl_fail_errno(err, "naming %s for %s", type, what);
	if (mode && fsconfig(fsfd, FSCONFIG_SET_STRING, "mode", mode, 0) < 0)
		return cl_fail_errno(err, "setting mode of %s", what);
	if (size) {
		snprintf(sz, sizeof(sz), "%llu", (unsigned long long)size);
		if (fsconfig(fsfd, FSCONFIG_SET_STRING, "size", sz, 0) < 0)
			return cl_fail_errno(err, "setting size of %s", what);
	}
	if (strcmp(type, "devpts") == 0 &&
	    (fsconfig(fsfd, FSCONFIG_SET_FLAG, "newinstance", NULL, 0) < 0 ||
	     fsconfig(fsfd, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) < 0))
		return cl_fail_errno(err, "configuring %s", what);
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return cl_fail_errno(err, "mounting %s on %s", type, what);
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, (unsigned int)attrs);
	if (mfd < 0)
		return cl_fail_errno(err, "mounting %s on %s", type, what);
	return mfd;
}

/* Attaches detached tree `tree` at path (relative to dirfd; "" = dirfd). */
static int attach(int tree, int dirfd, const char *path, const char *what, cl_error *err)
{
	unsigned int fl = MOVE_MOUNT_F_EMPTY_PATH | (*path ? 0 : MOVE_MOUNT_T_EMPTY_PATH);

	if (move_mount(tree, "", dirfd, path, fl) < 0)
		return cl_fail_errno(err, "mounting %s", what);
	return 0;
}

static int mode_str(mode_t mode, mode_t dflt, char *buf, size_t len)
{
	return snprintf(buf, len, "%o", (unsigned)(mode == (mode_t)-1 ? dflt : mode));
}

static int do_tmpfs(struct mount_ctx *c, const struct cl_mount *m, int destfd, cl_error *err)
{
	char mode[16];
	cl_autoclose int mfd = -1;

	mode_str(m->mode, 0755, mode, sizeof(mode));
	mfd = new_fs(c, "tmpfs", mode, m->size, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, m->dest, err);
	if (mfd < 0)
		return mfd;
	return attach(mfd, destfd, "", m->dest, err);
}

/* The first mask of each kind is a new mount (the captured /dev/null, or an
 * empty read-only tmpfs); later ones clone that first one once attached: one
 * superblock for all directory masks, and cloning an attached mount works
 * even on kernels that cannot clone a detached tree. */
static int mask_entry(struct mount_ctx *c, int procfd, const char *name, bool dir,
                      const char **first, cl_error *err)
{
	cl_autoclose int t = -1;
	struct stat st;
	int rc;

	if (fstatat(procfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;   /* absent on this kernel: nothing to hide */
	if (*first) {
		t = open_tree(procfd, *first, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (t < 0)
			return cl_fail_errno(err, "masking /proc/%s", name);
	} else if (dir) {
		t = new_fs(c, "tmpfs", "0555", 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
		           MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, name, err);
		if (t < 0)
			return t;
	} else if (c->devnull >= 0) {
		t = c->devnull;   /* attached below; the fd is ours to close */
		c->devnull = -1;
	} else {
		return cl_fail(err, ENOENT, "masking /proc/%s: no /dev/null to mask with", name);
	}
	rc = attach(t, procfd, name, name, err);
	if (rc == 0)
		*first = name;
	return rc;
}

static int readonly_entry(int procfd, const char *name, cl_error *err)
{
	cl_autoclose int t = open_tree(procfd, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
	                               AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);

	if (t < 0)
		return errno == ENOENT ? 0 : cl_fail_errno(err, "making /proc/%s read-only", name);
	if (ns_set_attr(t, AT_RECURSIVE, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
	                0, name, err) < 0)
		return cl_error_code(err);
	return attach(t, procfd, name, name, err);
}

/* What bwrap does to a new /proc and nothing more (masks would make every
 * nested procfs mount fail: the kernel refuses a proc mount where parts of
 * the existing one are covered): the host-wide knobs that are writable
 * here become read-only binds. */
static int proc_bwrap_covers(int procfd, cl_error *err)
{
	static const char *const covers[] = {"sys", "sysrq-trigger", "irq", "bus"};
	int rc;

	for (size_t i = 0; i < sizeof(covers) / sizeof(*covers); i++) {
		if (faccessat(procfd, covers[i], W_OK, 0) < 0) {
			if (errno == EACCES || errno == ENOENT || errno == EROFS)
				continue;   /* read-only already, or absent */
			return cl_fail_errno(err, "Can't access /proc/%s", covers[i]);
		}
		if ((rc = readonly_entry(procfd, covers[i], err)) < 0)
			return rc;
	}
	return 0;
}

static int do_proc(struct mount_ctx *c, const struct cl_mount *m, int destfd, cl_error *err)
{
	cl_autoclose int mfd = -1;
	cl_autoclose int procfd = -1;
	const char *first_file = NULL, *first_dir = NULL;
	int rc;

	mfd = new_fs(c, "proc", NULL, 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
	             m->dest, err);
	/* Sharing the caller's pid namespace, a new proc is refused without
	 * privilege over it; like bwrap, show the caller's /proc then. */
	if (mfd == -EPERM && !(c->p->ns_flags & CLONE_NEWPID))
		return ns_mount_host_proc(destfd, m, err);
	if (mfd < 0)
		return mfd;
	rc = attach(mfd, destfd, "", m->dest, err);
	if (rc < 0)
		return rc;
	/* Masks go on the attached proc (mounting needs an attached target). */
	procfd = ns_open_in_root(c->rootfd, m->dest, O_PATH | O_DIRECTORY);
	if (procfd < 0)
		return cl_fail(err, -procfd, "opening %s", m->dest);
	if (c->p->hooks.bwrap_mounts && !c->p->hooks.proc_masks)
		return proc_bwrap_covers(procfd, err);
	for (size_t i = 0; i < sizeof(proc_mask_files) / sizeof(*proc_mask_files); i++)
		if ((rc = mask_entry(c, procfd, proc_mask_files[i], false, &first_file, err)) < 0)
			return rc;
	for (size_t i = 0; i < sizeof(proc_mask_dirs) / sizeof(*proc_mask_dirs); i++)
		if ((rc = mask_entry(c, procfd, proc_mask_dirs[i], true, &first_dir, err)) < 0)
			return rc;
	for (size_t i = 0; i < sizeof(proc_ro) / sizeof(*proc_ro); i++)
		if ((rc = readonly_entry(procfd, proc_ro[i], err)) < 0)
			return rc;
	return 0;
}

static int dev_symlinks(int devfd, cl_error *err)
{
	static const char *const links[][2] = {
		{"pts/ptmx", "ptmx"}, {"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"},
		{"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"},
		{"/proc/kcore", "core"},
	};

	for (size_t i = 0; i < sizeof(links) / sizeof(*links); i++)
		if (symlinkat(links[i][0], devfd, links[i][1]) < 0 && errno != EEXIST)
			return cl_fail_errno(err, "creating /dev/%s", links[i][1]);
	return 0;
}

static int dev_subfs(const struct mount_ctx *c, int devfd, const char *name, const char *type,
                     const char *mode, cl_error *err)
{
	cl_autoclose int mfd = -1;

	if (mkdirat(devfd, name, 0755) < 0 && errno != EEXIST)
		return cl_fail_errno(err, "creating /dev/%s", name);
	mfd = new_fs(c, type, mode, 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC |
	             (strcmp(type, "devpts") ? MOUNT_ATTR_NODEV : 0), name, err);
	if (mfd < 0)
		return mfd;
	return attach(mfd, devfd, name, name, err);
}

/* bwrap: the caller's terminal (stdout's) is DEV/console, so ttyname()
 * works inside; it grants nothing stdout does not already. */
static int dev_console(struct mount_ctx *c, int devfd, cl_error *err)
{
	int fd = openat(devfd, "console", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);
	int rc;

	if (fd < 0)
		return cl_fail_errno(err, "creating /dev/console");
	close(fd);
	/* A second --dev gets its own clone (the first one's was attached);
	 * the host's tree is still reachable: pivot_root comes last. */
	if (c->console < 0 &&
	    (rc = clone_host_node(c->p->hooks.console_tty, true, &c->console, err)) < 0)
		return rc;
	if (c->console < 0)
		return 0;   /* the terminal went away */
	rc = attach(c->console, devfd, "console", "console", err);
	if (rc == 0)
		c->console = -1;   /* attached: no longer ours to close */
	return rc;
}

static int do_dev(struct mount_ctx *c, const struct cl_mount *m, int destfd, cl_error *err)
{
	cl_autoclose int mfd = -1;
	cl_autoclose int devfd = -1;
	bool bw = c->p->hooks.bwrap_mounts;
	int rc;

	/* nodev on the tmpfs itself: the device nodes are bind mounts of
	 * their own, checked against their own flags. bwrap's /dev allows
	 * exec (and its nodes too); cloister run's does not. */
	mfd = new_fs(c, "tmpfs", "0755", m->size, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	             (bw ? 0 : MOUNT_ATTR_NOEXEC), m->dest, err);
	if (mfd < 0)
		return mfd;
	/* Populate while detached and private to us: a fresh tmpfs holds no
	 * links, so plain *at() calls on its root fd are safe. */
	devfd = openat(mfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (devfd < 0)
		return cl_fail_errno(err, "opening new %s", m->dest);
	for (size_t i = 0; i < N_DEV_NODES; i++) {
		int fd;
		if (c->dev[i] < 0)
			continue;
		fd = openat(devfd, dev_nodes[i], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444);
		if (fd < 0)
			return cl_fail_errno(err, "creating /dev/%s", dev_nodes[i]);
		close(fd);
	}
	rc = attach(mfd, destfd, "", m->dest, err);
	for (size_t i = 0; rc == 0 && i < N_DEV_NODES; i++)
		if (c->dev[i] >= 0)
			rc = attach(c->dev[i], devfd, dev_nodes[i], dev_nodes[i], err);
	if (rc == 0)
		rc = dev_subfs(c, devfd, "pts", "devpts", "0620", err);
	/* /dev/shm is a directory on the /dev tmpfs (as bwrap does): one
	 * superblock less per launch. bwrap's is 0755; cloister run's sticky
	 * and world-writable (fchmodat: mkdir's mode is umasked). */
	if (rc == 0 && ((mkdirat(devfd, "shm", bw ? 0755 : 0700) < 0 && errno != EEXIST) ||
	                (!bw && fchmodat(devfd, "shm", 01777, 0) < 0)))
		rc = cl_fail_errno(err, "creating /dev/shm");
	if (rc == 0 && c->p->hooks.console_tty[0])
		rc = dev_console(c, devfd, err);
	if (rc == 0)
		rc = dev_symlinks(devfd, err);
	return rc;
}

static int do_bind(struct mount_ctx *c, size_t i, cl_error *err)
{
	const struct cl_mount *m = &c->p->mounts[i];
	cl_autoclose int destfd = -1;
	struct stat st;
	const char *base;

	if (c->links[i]) {
		cl_autoclose int dirfd = ns_ensure_parent(c->rootfd, m->dest, &base, &c->how, err);
		if (dirfd < 0)
			return dirfd;
		if (symlinkat(c->links[i], dirfd, base) < 0 && errno != EEXIST)
			return cl_fail_errno(err, "creating symlink %s", m->dest);
		return 0;
	}
	if (c->trees[i] < 0)
		return 0;   /* optional source that does not exist */
	if (fstat(c->trees[i], &st) < 0)
		return cl_fail_errno(err, "inspecting bind source %s", m->src ? m->src : "(fd)");
	destfd = ns_ensure_mount_point(c->rootfd, m->dest,
	                               S_ISDIR(st.st_mode) ? NS_NODE_DIR : NS_NODE_FILE, &c->how, err);
	if (destfd < 0)
		return destfd;
	if (attach(c->trees[i], destfd, "", m->dest, err) < 0)
		return cl_wrap(err, "binding %s", m->src ? m->src : "(fd)");
	return 0;
}

/* DEST exists: bwrap 0.11 accepts a symlink with the same target (two
 * layers of a client's argv may ask for the same link) and refuses
 * anything else, saying what is there. */
static int symlink_exists(int dirfd, const char *base, const struct cl_mount *m, cl_error *err)
{
	char have[PATH_MAX];
	ssize_t n = readlinkat(dirfd, base, have, sizeof(have) - 1);

	if (n < 0 && errno == EINVAL)
		return cl_fail(err, 0, "Can't make symlink at %s: destination exists and is not a "
		               "symlink", m->dest);
	if (n < 0)
		return cl_fail_errno(err, "Can't make symlink at %s: destination exists, and cannot "
		                     "read symlink target", m->dest);
	have[n] = '\0';
	if (strcmp(have, m->src) == 0)
		return 0;
	return cl_fail(err, 0, "Can't make symlink at %s: existing destination is %s", m->dest,
	               have);
}

static int do_symlink(struct mount_ctx *c, const struct cl_mount *m, cl_error *err)
{
	const char *base;
	cl_autoclose int dirfd = ns_ensure_parent(c->rootfd, m->dest, &base, &c->how, err);

	if (dirfd < 0)
		return dirfd;
	if (symlinkat(m->src, dirfd, base) == 0)
		return 0;
	if (errno == EEXIST)
		return symlink_exists(dirfd, base, m, err);
	return cl_fail_errno(err, c->how.bwrap_msgs ? "Can't make symlink at %s" :
	                     "creating symlink %s", m->dest);
}

static int do_remount_ro(struct mount_ctx *c, const struct cl_mount *m, cl_error *err)
{
	cl_autoclose int fd = ns_open_in_root(c->rootfd, m->dest, O_PATH);
	cl_autoclose int t = -1;

	if (fd < 0)
		return cl_fail(err, -fd, "remounting %s read-only", m->dest);
	/* Bind the path over itself so a non-mount-root path works too. */
	t = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
	if (t < 0)
		return cl_fail_errno(err, "remounting %s read-only", m->dest);
	if (ns_set_attr(t, AT_RECURSIVE, MOUNT_ATTR_RDONLY, 0, m->dest, err) < 0)
		return cl_error_code(err);
	return attach(t, fd, "", m->dest, err);
}

static int do_mount(struct mount_ctx *c, size_t i, cl_error *err)
{
	const struct cl_mount *m = &c->p->mounts[i];
	cl_autoclose int destfd = -1;

	switch (m->kind) {
	case CL_MNT_BIND:
		return do_bind(c, i, err);
	case CL_MNT_SYMLINK:
		return do_symlink(c, m, err);
	case CL_MNT_REMOUNT_RO:
		return do_remount_ro(c, m, err);
	case CL_MNT_FILE:
		return ns_mount_file(c->rootfd, m, &c->how, err);
	case CL_MNT_BIND_DATA:
		return ns_mount_bind_data(c->rootfd, m, &c->how, err);
	case CL_MNT_CHMOD:
		return ns_mount_chmod(c->rootfd, m, err);
	case CL_MNT_OVERLAY:
		if (pre_overlay(c, i))
			return ns_mount_overlay_trees(c->rootfd, m, c->pre[i], c->pre[c->p->n_mounts + i],
			                              c->p->ns_flags & CLONE_NEWUSER, &c->how, err);
		return ns_mount_overlay(c->rootfd, m, &c->ovl[i], c->p->ns_flags & CLONE_NEWUSER,
		                        &c->how, err);
	case CL_MNT_DIR:
		if (m->mode != (mode_t)-1)
			return ns_mount_dir(c->rootfd, m, &c->how, err);
		destfd = ns_ensure_path(c->rootfd, m->dest, NS_NODE_DIR, &c->how, err);
		return destfd < 0 ? destfd : 0;
	case CL_MNT_TMPFS:
	case CL_MNT_PROC:
	case CL_MNT_DEV:
	case CL_MNT_MQUEUE:
		destfd = ns_ensure_mount_point(c->rootfd, m->dest, NS_NODE_DIR, &c->how, err);
		if (destfd < 0)
			return destfd;
		if (m->kind == CL_MNT_TMPFS)
			return do_tmpfs(c, m, destfd, err);
		if (m->kind == CL_MNT_PROC)
			return do_proc(c, m, destfd, err);
		if (m->kind == CL_MNT_DEV)
			return do_dev(c, m, destfd, err);
		{
			cl_autoclose int mfd = new_fs(c, "mqueue", NULL, 0, MOUNT_ATTR_NOSUID |
			                              MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, m->dest, err);
			return mfd < 0 ? mfd : attach(mfd, destfd, "", m->dest, err);
		}
	default:
		return cl_fail(err, ENOTSUP, "mount operation %d for %s is not supported",
		               (int)m->kind, m->dest);
	}
}

/* The new root: a fresh tmpfs, or the --rootfs tree. Attached at STAGING_DIR
 * because pivot_root needs an attached mount. */
static int make_root(struct mount_ctx *c, cl_error *err)
{
	const struct cl_policy *p = c->p;
	cl_autoclose int mfd = -1;
	int rc;

	if (c->pre_root >= 0) {
		mfd = c->pre_root;   /* opened and flagged by the parent */
	} else if (p->rootfs) {
		mfd = ns_clone_tree(p->rootfs);
		if (mfd < 0)
			return cl_fail(err, -mfd, "opening --rootfs %s", p->rootfs);
		if (ns_set_attr(mfd, AT_RECURSIVE, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0, p->rootfs,
		                err) < 0)
			return cl_error_code(err);
	} else {
		mfd = new_fs(c, "tmpfs", "0755", 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "/", err);
		if (mfd < 0)
			return mfd;
	}
	rc = attach(mfd, AT_FDCWD, STAGING_DIR, "the new root", err);
	if (rc < 0)
		return rc;
	c->rootfd = open(STAGING_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->rootfd < 0)
		return cl_fail_errno(err, "opening the new root");
	return 0;
}

/* A mount on "/" itself (bwrap's --ro-bind / /) covers the root we hold:
 * later paths and pivot_root must see the new top mount, so reopen it. */
static int refresh_root(struct mount_ctx *c, const char *dest, cl_error *err)
{
	if (!dest || dest[strspn(dest, "/")] != '\0')
		return 0;
	close(c->rootfd);
	c->rootfd = open(STAGING_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->rootfd < 0)
		return cl_fail_errno(err, "reopening the new root");
	return 0;
}

/* Step last: the new root becomes "/" and the host's tree is detached. */
static int pivot(struct mount_ctx *c, cl_error *err)
{
	if (c->p->root_readonly &&
	    ns_set_attr(c->rootfd, 0, MOUNT_ATTR_RDONLY, 0, "/", err) < 0)
		return cl_error_code(err);
	if (fchdir(c->rootfd) < 0)
		return cl_fail_errno(err, "entering the new root");
	/* pivot_root(".", ".") stacks the old root on top of the new one;
	 * detaching it leaves only the sandbox tree. */
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return cl_fail_errno(err, "pivot_root into the new root");
	if (umount2(".", MNT_DETACH) < 0)
		return cl_fail_errno(err, "detaching the host's root");
	if (chdir("/") < 0)
		return cl_fail_errno(err, "entering /");
	return 0;
}

/* The --perms value the parents of m's DEST are made from. bwrap gives
 * every operation a mode, and 0 to those --perms cannot precede (binds,
 * symlinks, proc, dev, mqueue, overlays): their parents come out 0700.
 * cloister run makes them 0755. */
static mode_t parent_perms(const struct cl_policy *p, const struct cl_mount *m)
{
	if (m->mode != (mode_t)-1 || !p->hooks.bwrap_mounts)
		return m->mode;
	return m->kind == CL_MNT_TMPFS || m->kind == CL_MNT_DIR ? (mode_t)-1 : 0;
}

int ns_mounts_setup(const struct cl_policy *p, const int *pre, int pre_root, cl_error *err)
{
	struct mount_ctx c = {.p = p, .devnull = -1, .rootfd = -1, .console = -1, .pre = pre,
	                      .pre_root = pre_root};
	mode_t old_umask;
	int rc;

	/* Propagation first: nothing done below may reach the host's mounts. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return cl_fail_errno(err, "making mount propagation private");
	c.trees = calloc(p->n_mounts + 1, sizeof(int));
	c.links = calloc(p->n_mounts + 1, sizeof(char *));
	c.ovl = calloc(p->n_mounts + 1, sizeof(*c.ovl));
	if (!c.trees || !c.links || !c.ovl) {
		free(c.trees);
		free(c.links);
		free(c.ovl);
		return cl_fail(err, ENOMEM, "preparing mounts");
	}
	for (size_t i = 0; i < p->n_mounts; i++)
		c.trees[i] = -1;
	for (size_t i = 0; i < N_DEV_NODES; i++)
		c.dev[i] = -1;
	/* Nodes made here get exactly the modes asked for (bwrap's 0755
	 * parents, 0444 mount-point files), whatever the caller's umask; the
	 * command gets that umask back before anything else is created. */
	old_umask = umask(0);
	/* Sources before the root: binds see the caller's view of the host. */
	rc = open_sources(&c, err);
	if (rc == 0)
		rc = make_root(&c, err);
	for (size_t i = 0; rc == 0 && i < p->n_mounts; i++) {
		c.how.dirs = ns_parent_mode(parent_perms(p, &p->mounts[i]));
		c.how.bwrap_msgs = p->hooks.bwrap_msgs;
		rc = do_mount(&c, i, err);
		if (rc == 0)
			rc = refresh_root(&c, p->mounts[i].dest, err);
	}
	if (rc == 0)
		rc = pivot(&c, err);
	umask(old_umask);
	/* The child execs soon; fds are CLOEXEC, memory goes with the exec. */
	return rc;
}
