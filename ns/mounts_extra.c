/* Mount operations bwrap has and `cloister run` does not use: data files
 * from fds, chmod, --perms directories, overlays, bind-fd, proc fallback. */
#define _GNU_SOURCE
#include "ns/mounts_extra.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ns/fsutil.h"
#include "src/util/cleanup.h"

/* chmod through an O_PATH fd (host /proc is still mounted here). */
static int chmod_fd(int fd, mode_t mode)
{
	char p[64];

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	return chmod(p, mode) < 0 ? -errno : 0;
}

static int copy_fd(int from, int to)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(from, buf, sizeof(buf)), w = 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : 0;
		while (w < n) {
			ssize_t k = write(to, buf + w, (size_t)(n - w));
			if (k < 0 && errno != EINTR)
				return -errno;
			w += k > 0 ? k : 0;
		}
	}
}

/* New file `name` in dirfd holding the fd's data, with exactly `mode`. */
static int make_data_file(int dirfd, const char *name, const struct cl_mount *m, cl_error *err)
{
	cl_autoclose int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
	                             O_CLOEXEC, 0600);
	int rc;

	if (fd < 0)
		return cl_fail_errno(err, "Can't create file %s", m->dest);
	rc = copy_fd(m->src_fd, fd);
	if (rc < 0)
		return cl_fail(err, -rc, "Can't write data to file %s", m->dest);
	if (fchmod(fd, m->mode == (mode_t)-1 ? 0666 : m->mode) < 0)
		return cl_fail_errno(err, "Can't set permissions of %s", m->dest);
	return 0;
}

int ns_mount_file(int rootfd, const struct cl_mount *m, const struct ns_create *how,
                  cl_error *err)
{
	const char *base;
	cl_autoclose int dirfd = ns_ensure_parent(rootfd, m->dest, &base, how, err);

	if (dirfd < 0)
		return dirfd;
	return make_data_file(dirfd, base, m, err);
}

static int attach_at(int tree, int rootfd, const char *dest, enum ns_node type,
                     const struct ns_create *how, cl_error *err)
{
	cl_autoclose int destfd = ns_ensure_mount_point(rootfd, dest, type, how, err);

	if (destfd < 0)
		return destfd;
	if (move_mount(tree, "", destfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return cl_fail_errno(err, "Can't mount on %s", dest);
	return 0;
}

static int private_tmpfs(const char *what, cl_error *err)
{
	cl_autoclose int fsfd = fsopen("tmpfs", FSOPEN_CLOEXEC);
	int mfd;

	if (fsfd < 0 || fsconfig(fsfd, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0 ||
	    fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return cl_fail_errno(err, "creating a tmpfs for %s", what);
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mfd < 0)
		return cl_fail_errno(err, "creating a tmpfs for %s", what);
	return mfd;
}

/* The data lives in a private tmpfs nobody else sees; only the file is
 * bound at dest, so the sandbox cannot reach anything beside it. */
int ns_mount_bind_data(int rootfd, const struct cl_mount *m, const struct ns_create *how,
                       cl_error *err)
{
	cl_autoclose int mfd = private_tmpfs(m->dest, err);
	cl_autoclose int tree = -1;
	uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

	if (mfd < 0)
		return mfd;
	if (make_data_file(mfd, "data", m, err) < 0)
		return cl_error_code(err);
	tree = open_tree(mfd, "data", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0)
		return cl_fail_errno(err, "Can't bind data on %s", m->dest);
	if (m->flags & CL_MF_RO)
		attrs |= MOUNT_ATTR_RDONLY;
	if (ns_set_attr(tree, 0, attrs, 0, m->dest, err) < 0)
		return cl_error_code(err);
	return attach_at(tree, rootfd, m->dest, NS_NODE_FILE, how, err);
}

int ns_mount_chmod(int rootfd, const struct cl_mount *m, cl_error *err)
{
	cl_autoclose int fd = ns_open_in_root(rootfd, m->dest, O_PATH);
	int rc;

	if (fd < 0)
		return cl_fail(err, -fd, "Can't chmod %#o %s", (unsigned)m->mode, m->dest);
	rc = chmod_fd(fd, m->mode);
	if (rc < 0)
		return cl_fail(err, -rc, "Can't chmod %#o %s", (unsigned)m->mode, m->dest);
	return 0;
}

/* --perms with --dir: a directory created now gets exactly that mode. */
int ns_mount_dir(int rootfd, const struct cl_mount *m, const struct ns_create *how,
                 cl_error *err)
{
	cl_autoclose int fd = ns_open_in_root(rootfd, m->dest, O_PATH);
	int rc;

	if (fd >= 0)
		return 0;   /* an existing directory keeps its mode, as in bwrap */
	fd = ns_ensure_path(rootfd, m->dest, NS_NODE_DIR, how, err);
	if (fd < 0)
		return fd;
	rc = chmod_fd(fd, m->mode);
	return rc < 0 ? cl_fail(err, -rc, "Can't set permissions of %s", m->dest) : 0;
}

/* overlayfs wants the top layer first; bwrap lists layers bottom-up. */
static char *lowerdir(char *const *lower)
{
	size_t n = cl_strv_len(lower), len = 1;
	char *s;

	for (size_t i = 0; i < n; i++)
		len += strlen(lower[i]) + 1;
	size_t at = 0;

	s = calloc(1, len);
	for (size_t i = n; s && i-- > 0;) {
		size_t l = strlen(lower[i]);
		memcpy(s + at, lower[i], l);
		at += l;
		if (i)
			s[at++] = ':';
	}
	return s;   /* calloc'd: NUL-terminated; len counted every byte */
}

static int ovl_set(int fsfd, const char *key, const char *val, const char *dest, cl_error *err)
{
	if (fsconfig(fsfd, FSCONFIG_SET_STRING, key, val, 0) < 0)
		return cl_fail_errno(err, "Can't make overlay mount on %s (%s=%s)", dest, key, val);
	return 0;
}

/* Overlay layers are host paths, but the host's /tmp is covered while the
 * root is built: every layer is opened first, used later by fd. */
int ns_overlay_open(const struct cl_mount *m, struct ns_ovl_fds *o, cl_error *err)
{
	size_t n = cl_strv_len(m->ovl_lower);

	o->upper = o->work = -1;
	o->lower = calloc(n + 1, sizeof(char *));
	if (!o->lower)
		return cl_fail(err, ENOMEM, "overlay layers");
	for (size_t i = 0; i < n; i++) {
		int fd = open(m->ovl_lower[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || asprintf(&o->lower[i], "/proc/self/fd/%d", fd) < 0)
			return cl_fail_errno(err, "Can't open overlay layer %s", m->ovl_lower[i]);
	}
	if (m->src && (o->upper = open(m->src, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return cl_fail_errno(err, "Can't open overlay upper dir %s", m->src);
	if (m->ovl_work && (o->work = open(m->ovl_work, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return cl_fail_errno(err, "Can't open overlay work dir %s", m->ovl_work);
	return 0;
}

int ns_mount_overlay(int rootfd, const struct cl_mount *m, const struct ns_ovl_fds *o,
                     bool in_userns, const struct ns_create *how, cl_error *err)
{
	cl_autoclose int fsfd = fsopen("overlay", FSOPEN_CLOEXEC);
	cl_autoclose int tmp = -1;
	cl_autoclose int mfd = -1;
	cl_autofree char *lower = lowerdir(o->lower);
	char up[64], work[64];
	const char *upper = m->src ? up : NULL, *wdir = m->ovl_work ? work : NULL;
	bool ro = !upper && (m->flags & CL_MF_RO);

	/* (lower is cl_autofree: the analyzer does not follow cleanup()) */
	if (fsfd < 0) /* NOLINTNEXTLINE(clang-analyzer-unix.Malloc) */
		return cl_fail_errno(err, "Can't make overlay mount on %s", m->dest);
	if (!lower)
		return cl_fail(err, ENOMEM, "overlay layers for %s", m->dest);
	snprintf(up, sizeof(up), "/proc/self/fd/%d", o->upper);
	snprintf(work, sizeof(work), "/proc/self/fd/%d", o->work);
	if (!upper && !ro) {
		/* --tmp-overlay: writes go to a tmpfs that disappears with the
		 * sandbox; reached through /proc/self/fd as it is detached. */
		tmp = private_tmpfs(m->dest, err);
		if (tmp < 0)
			return tmp;
		if (mkdirat(tmp, "upper", 0755) < 0 || mkdirat(tmp, "work", 0755) < 0)
			return cl_fail_errno(err, "preparing the overlay for %s", m->dest);
		snprintf(up, sizeof(up), "/proc/self/fd/%d/upper", tmp);
		snprintf(work, sizeof(work), "/proc/self/fd/%d/work", tmp);
		upper = up;
		wdir = work;
	}
	if (ovl_set(fsfd, "lowerdir", lower, m->dest, err) < 0 ||
	    (upper && ovl_set(fsfd, "upperdir", upper, m->dest, err) < 0) ||
	    (wdir && ovl_set(fsfd, "workdir", wdir, m->dest, err) < 0))
		return cl_error_code(err);
	/* In a user namespace trusted.* xattrs are out of reach: overlayfs
	 * keeps its metadata in user.* instead. */
	if (!ro && in_userns && fsconfig(fsfd, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0)
		return cl_fail_errno(err, "Can't make overlay mount on %s (userxattr)", m->dest);
	/* A workspace's upper dir is read once after the run and removed:
	 * syncing it at unmount would flush the whole host filesystem. */
	if ((m->flags & CL_MF_VOLATILE) && fsconfig(fsfd, FSCONFIG_SET_FLAG, "volatile", NULL, 0) < 0)
		return cl_fail_errno(err, "Can't make overlay mount on %s (volatile)", m->dest);
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return cl_fail_errno(err, "Can't make overlay mount on %s", m->dest);
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	              (ro ? MOUNT_ATTR_RDONLY : 0));
	if (mfd < 0)
		return cl_fail_errno(err, "Can't make overlay mount on %s", m->dest);
	return attach_at(mfd, rootfd, m->dest, NS_NODE_DIR, how, err);
}

/* overlayfs takes only attached layers (a detached tree's path gives
 * EPERM): both trees are stacked on DEST for the moment the overlay is
 * made, then detached again, so only the overlay stays, on top of DEST. */
static int stage_tree(int tree, int destfd, const char *what, cl_error *err)
{
	if (move_mount(tree, "", destfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return cl_fail_errno(err, "Can't stage the overlay's %s", what);
	return 0;
}

static int unstage_tree(int tree, const char *what, cl_error *err)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", tree);
	if (umount2(path, MNT_DETACH) < 0)
		return cl_fail_errno(err, "Can't detach the overlay's staged %s", what);
	return 0;
}

static int make_overlay_trees(const struct cl_mount *m, int upper_tree, int lower_tree, bool in_userns,
                              cl_error *err)
{
	cl_autoclose int fsfd = fsopen("overlay", FSOPEN_CLOEXEC);
	char lower[64], upper[4200], work[4200];
	int mfd;

	if (fsfd < 0)
		return cl_fail_errno(err, "Can't make overlay mount on %s", m->dest);
	snprintf(lower, sizeof(lower), "/proc/self/fd/%d", lower_tree);
	snprintf(upper, sizeof(upper), "/proc/self/fd/%d/%s", upper_tree, strrchr(m->src, '/') + 1);
	snprintf(work, sizeof(work), "/proc/self/fd/%d/%s", upper_tree, strrchr(m->ovl_work, '/') + 1);
	if (ovl_set(fsfd, "lowerdir", lower, m->dest, err) < 0 ||
	    ovl_set(fsfd, "upperdir", upper, m->dest, err) < 0 ||
	    ovl_set(fsfd, "workdir", work, m->dest, err) < 0)
		return cl_error_code(err);
	if (in_userns && fsconfig(fsfd, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0)
		return cl_fail_errno(err, "Can't make overlay mount on %s (userxattr)", m->dest);
	if ((m->flags & CL_MF_VOLATILE) && fsconfig(fsfd, FSCONFIG_SET_FLAG, "volatile", NULL, 0) < 0)
		return cl_fail_errno(err, "Can't make overlay mount on %s (volatile)", m->dest);
	if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return cl_fail_errno(err, "Can't make overlay mount on %s", m->dest);
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	return mfd < 0 ? cl_fail_errno(err, "Can't make overlay mount on %s", m->dest) : mfd;
}

int ns_mount_overlay_trees(int rootfd, const struct cl_mount *m, int upper_tree, int lower_tree,
                           bool in_userns, const struct ns_create *how, cl_error *err)
{
	cl_autoclose int destfd = ns_ensure_mount_point(rootfd, m->dest, NS_NODE_DIR, how, err);
	cl_autoclose int mfd = -1;

	if (destfd < 0)
		return destfd;
	if (stage_tree(lower_tree, destfd, "lower dir", err) < 0 ||
	    stage_tree(upper_tree, destfd, "upper dir", err) < 0)
		return cl_error_code(err);
	mfd = make_overlay_trees(m, upper_tree, lower_tree, in_userns, err);
	if (mfd < 0)
		return mfd;
	/* The upper one is on top: detached first. */
	if (unstage_tree(upper_tree, "upper dir", err) < 0 || unstage_tree(lower_tree, "lower dir", err) < 0)
		return cl_error_code(err);
	if (move_mount(mfd, "", destfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return cl_fail_errno(err, "Can't mount on %s", m->dest);
	return 0;
}

int ns_fd_source_path(int fd, char *buf, size_t len, cl_error *err)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, len - 1);
	if (n < 0)
		return cl_fail_errno(err, "Can't read bind source fd %d", fd);
	if ((size_t)n >= len - 1 || buf[0] != '/')
		return cl_fail(err, EINVAL, "bind source fd %d has no usable path", fd);
	buf[n] = '\0';
	return 0;
}

/* The path may have been replaced since: bind only if it is the same file. */
int ns_fd_same_file(int fd, int tree, cl_error *err)
{
	struct stat a, b;

	if (fstat(fd, &a) < 0 || fstat(tree, &b) < 0)
		return cl_fail_errno(err, "inspecting bind source fd %d", fd);
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return cl_fail(err, EXDEV, "bind source fd %d changed path while binding", fd);
	return 0;
}

int ns_mount_host_proc(int destfd, const struct cl_mount *m, cl_error *err)
{
	cl_autoclose int t = ns_clone_tree("/proc");

	if (t < 0)
		return cl_fail(err, -t, "binding the caller's /proc on %s", m->dest);
	if (ns_set_attr(t, AT_RECURSIVE, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0, m->dest, err) < 0)
		return cl_error_code(err);
	if (move_mount(t, "", destfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return cl_fail_errno(err, "Can't mount proc on %s", m->dest);
	return 0;
}
