/* Safe path resolution and creation inside the sandbox root under
 * construction (openat2 RESOLVE_IN_ROOT, mkdirat/openat on parent fds). */
#define _GNU_SOURCE
#include "ns/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "src/util/cleanup.h"

int ns_open_in_root(int rootfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	while (*path == '/')
		path++;
	if (!*path)
		path = ".";
	do
		fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN);
	return fd < 0 ? -errno : (int)fd;
}

static int ensure_path(int rootfd, const char *path, enum ns_node type, mode_t last,
                       const struct ns_create *how, cl_error *err);

/* Creates name in dirfd as type: 0 made, 1 already there, or -errno. */
static int create_node(int dirfd, const char *name, enum ns_node type, mode_t dirs)
{
	if (type == NS_NODE_DIR) {
		if (mkdirat(dirfd, name, dirs) < 0)
			return errno == EEXIST ? 1 : -errno;
		return 0;
	}
	/* A file made as a mount point is read-only, as bwrap makes it. */
	int fd = openat(dirfd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0)
		return errno == EEXIST ? 1 : -errno;
	close(fd);
	return 0;
}

mode_t ns_parent_mode(mode_t perms)
{
	if (perms == (mode_t)-1)
		return 0755;
	return 0700 | ((perms & 0070) ? 0050 : 0) | ((perms & 0007) ? 0005 : 0);
}

int ns_ensure_parent(int rootfd, const char *path, const char **base,
                     const struct ns_create *how, cl_error *err)
{
	const char *slash = strrchr(path, '/');
	char parent[4096];
	size_t plen;
	int fd;

	if (!slash || !slash[1])
		return cl_fail(err, EINVAL, "resolving '%s'", path);
	plen = (size_t)(slash - path);
	if (plen >= sizeof(parent))
		return cl_fail(err, ENAMETOOLONG, "resolving '%s'", path);
	memcpy(parent, path, plen);
	parent[plen] = '\0';
	*base = slash + 1;
	fd = ensure_path(rootfd, plen ? parent : "/", NS_NODE_DIR, how->dirs, how, err);
	/* bwrap words any failure on the way as its mkdir -p step, naming the
	 * operation's DEST (the outermost call here is the one for DEST). */
	if (fd < 0 && how->bwrap_msgs && err->errnum)
		return cl_fail(err, err->errnum, "Can't mkdir parents for %s", path);
	return fd;
}

/* An existing mount point of the other kind fails before any mount is
 * tried (mounting a directory on a file, or a file on a directory, is
 * EINVAL from the kernel), with bwrap's words where asked for: bwrap
 * tries to create the node and reports what that creation says. */
static int check_kind(int fd, const char *path, enum ns_node type, const struct ns_create *how,
                      cl_error *err)
{
	struct stat st;
	bool dir;

	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return cl_fail(err, e, "inspecting %s", path);
	}
	dir = S_ISDIR(st.st_mode);
	if (dir == (type == NS_NODE_DIR))
		return fd;
	close(fd);
	if (how->bwrap_msgs)
		return type == NS_NODE_DIR ? cl_fail(err, ENOTDIR, "Can't mkdir %s", path)
		                           : cl_fail(err, EISDIR, "Can't create file at %s", path);
	return cl_fail(err, dir ? EISDIR : ENOTDIR, "mount point %s exists and is not a %s", path,
	               type == NS_NODE_DIR ? "directory" : "file");
}

/* last: the mode of path itself when it is made as a directory. */
static int ensure_path(int rootfd, const char *path, enum ns_node type, mode_t last,
                       const struct ns_create *how, cl_error *err)
{
	cl_autoclose int dirfd = -1;
	const char *base;
	int fd, rc;

	fd = ns_open_in_root(rootfd, path, O_PATH);
	if (fd >= 0)
		return check_kind(fd, path, type, how, err);
	/* Anything but "absent" is about the way there (a parent that is a
	 * file, a link loop, no search permission). */
	if (fd != -ENOENT)
		return cl_fail(err, -fd, how->bwrap_msgs ? "Can't mkdir parents for %s" : "resolving '%s'",
		               path);
	dirfd = ns_ensure_parent(rootfd, path, &base, how, err);
	if (dirfd < 0)
		return dirfd;
	rc = create_node(dirfd, base, type, last);
	/* A directory that "exists" although it did not resolve is a
	 * dangling symlink: mkdir does not follow it, and neither do we
	 * (what it names is not there: ENOENT, as mkdir -p says). */
	if (rc == 1 && type == NS_NODE_DIR)
		rc = -ENOENT;
	if (rc < 0 && !how->bwrap_msgs)
		return cl_fail(err, -rc, "creating mount point %s", path);
	if (rc < 0)
		return cl_fail(err, -rc, type == NS_NODE_DIR ? "Can't mkdir %s" : "Can't create file at %s",
		               path);
	/* Re-resolve from the parent without following anything new. */
	fd = openat(dirfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return cl_fail_errno(err, "opening %s", path);
	return fd;
}

/* bwrap 0.12's rules for where a mount lands: the parents of DEST are
 * resolved in the new root (as everywhere here), DEST itself is never
 * followed: a symlink there is refused, and an existing DEST of the
 * other kind is refused before anything is mounted. */
static int bwrap_mount_point(int rootfd, const char *path, enum ns_node type,
                             const struct ns_create *how, cl_error *err)
{
	struct stat st;
	int fd = ns_open_in_root(rootfd, path, O_PATH | O_NOFOLLOW);

	if (fd == -ENOENT)
		return ns_ensure_path(rootfd, path, type, how, err);
	if (fd < 0)
		return cl_fail(err, -fd, "Can't mkdir parents for %s", path);
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return cl_fail(err, e, "inspecting %s", path);
	}
	if (S_ISLNK(st.st_mode) || S_ISDIR(st.st_mode) != (type == NS_NODE_DIR)) {
		close(fd);
		if (S_ISLNK(st.st_mode))
			return cl_fail(err, 0, "Can't mount on symlink destination %s", path);
		return cl_fail(err, 0, "Destination is not a %s %s",
		               type == NS_NODE_DIR ? "directory" : "file", path);
	}
	return fd;
}

int ns_ensure_mount_point(int rootfd, const char *path, enum ns_node type,
                          const struct ns_create *how, cl_error *err)
{
	if (how->bwrap_msgs)
		return bwrap_mount_point(rootfd, path, type, how, err);
	return ns_ensure_path(rootfd, path, type, how, err);
}

int ns_ensure_path(int rootfd, const char *path, enum ns_node type,
                   const struct ns_create *how, cl_error *err)
{
	/* bwrap makes DEST itself 0755 (ensure_dir), only its parents get
	 * the mode derived from the operation's. */
	return ensure_path(rootfd, path, type, how->bwrap_msgs ? 0755 : how->dirs, how, err);
}

int ns_set_attr(int fd, unsigned int flags, uint64_t set, uint64_t clr, const char *what,
                cl_error *err)
{
	struct mount_attr attr = {.attr_set = set, .attr_clr = clr};

	if (mount_setattr(fd, "", AT_EMPTY_PATH | flags, &attr, sizeof(attr)) < 0)
		return cl_fail_errno(err, "setting mount flags on %s", what);
	return 0;
}

int ns_clone_tree(const char *path)
{
	int fd = open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);

	return fd < 0 ? -errno : fd;
}
