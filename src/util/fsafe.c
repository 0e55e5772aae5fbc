/* The -errno file-system primitives for trees someone hostile may have
 * written: open beneath a dir fd, remove, make dirs, write; never through
 * a symlink. */
#define _GNU_SOURCE
#include "src/util/fsafe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/fdio.h"

/* The last component of a walk: opened without following, a link at it
 * being ELOOP as openat2's RESOLVE_NO_SYMLINKS says (O_PATH opens the
 * link itself, O_DIRECTORY says ENOTDIR). */
static int walk_last(int cur, const char *name, int flags)
{
	struct stat st;
	int fd = openat(cur, name, flags | O_NOFOLLOW | O_CLOEXEC), e = errno;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
		close(fd);
		return -ELOOP;
	}
	if (fd < 0 && e == ENOTDIR && fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		return -ELOOP;
	return fd < 0 ? -e : fd;
}

/* Where openat2 is missing (before Linux 5.6, or filtered): the same
 * answer from a walk, one component at a time, none followed; any ".."
 * is refused (EXDEV) rather than resolved. */
static int open_beneath_walk(int dirfd, const char *rel, int flags)
{
	char buf[PATH_MAX], *save = NULL, *comp, *next;
	int cur, fd;

	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	cur = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	comp = strtok_r(buf, "/", &save);
	while (comp && !strcmp(comp, "."))
		comp = strtok_r(NULL, "/", &save);
	if (!comp) {
		fd = walk_last(cur, ".", flags);
		close(cur);
		return fd;
	}
	for (; comp; comp = next) {
		next = strtok_r(NULL, "/", &save);
		while (next && !strcmp(next, "."))
			next = strtok_r(NULL, "/", &save);
		fd = !strcmp(comp, "..") ? -EXDEV : walk_last(cur, comp, next ? O_PATH | O_DIRECTORY : flags);
		close(cur);
		if (fd < 0 || !next)
			return fd;
		cur = fd;
	}
	return -ENOENT;   /* (not reached: the loop returns at its last component) */
}

int cl_open_beneath(int dirfd, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	do
		fd = syscall(SYS_openat2, dirfd, *rel ? rel : ".", &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN);
	if (fd < 0 && errno == ENOSYS)
		return open_beneath_walk(dirfd, rel, flags);
	return fd < 0 ? -errno : (int)fd;
}

/* A directory of name in parent, for removal: opened without following a
 * link, made searchable first when the caller owns it but may not
 * (a sandbox made it 0500). NULL with errno; ENOTDIR: not a directory. */
static DIR *open_for_removal(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;

	if (fd < 0 && errno == EACCES && fchmodat(parent, name, 0700, AT_SYMLINK_NOFOLLOW) == 0)
		fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	/* Ours (or, for root, anyone's): entries of a read-only dir go too. */
	fchmod(fd, 0700);
	if (!(d = fdopendir(fd)))
		close(fd);
	return d;
}

struct rm_level {
	DIR *d;
	char name[NAME_MAX + 1]; /* its name in the level above (or top) */
};

/* One subtree, iteratively: at most CL_RM_MAX_DEPTH directories open at
 * once, whatever its depth. A directory found at the bound is renamed
 * into top under a fresh name (*n_moved counts them, for the caller to
 * remove next), which cuts the chain without following "..". */
static int remove_one(int top, const char *name, unsigned *n_moved)
{
	struct rm_level *st = calloc(CL_RM_MAX_DEPTH, sizeof(*st));
	int rc = 0, depth = 0;
	struct dirent *de;

	if (!st)
		return -ENOMEM;
	if (!(st[0].d = open_for_removal(top, name))) {
		free(st);
		return errno == ENOTDIR || errno == ENOENT ? 0 : -errno;
	}
	snprintf(st[0].name, sizeof(st[0].name), "%s", name);
	while (depth >= 0) {
		struct rm_level *cur = &st[depth];
		int fd = dirfd(cur->d);

		errno = 0;
		if (!(de = readdir(cur->d))) {
			int above = depth ? dirfd(st[depth - 1].d) : top;
			if (errno && rc == 0)
				rc = -errno;
			/* After its entries, before the level above goes on. */
			closedir(cur->d);
			if (unlinkat(above, cur->name, AT_REMOVEDIR) < 0 && errno != ENOENT && rc == 0)
				rc = -errno;
			depth--;
			continue;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(fd, de->d_name, 0) == 0 || errno == ENOENT)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			if (rc == 0)
				rc = -errno;
			continue;
		}
		if (depth + 1 == CL_RM_MAX_DEPTH) {
			char moved[64];
			snprintf(moved, sizeof(moved), ".cloister-rm-%ld-%u", (long)getpid(), *n_moved);
			if (renameat(fd, de->d_name, top, moved) == 0)
				(*n_moved)++;
			else if (rc == 0)
				rc = -errno;
			continue;
		}
		if (!(st[depth + 1].d = open_for_removal(fd, de->d_name))) {
			if (errno != ENOTDIR && errno != ENOENT && rc == 0)
				rc = -errno;
			continue;
		}
		snprintf(st[depth + 1].name, sizeof(st[depth + 1].name), "%s", de->d_name);
		depth++;
	}
	free(st);
	return rc;
}

int cl_remove_tree_at(int parent, const char *name)
{
	unsigned n_moved = 0;
	int rc;

	if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	rc = remove_one(parent, name, &n_moved);
	/* The parts cut off at the depth bound, each a tree of its own (which
	 * may cut off more: n_moved grows until the last is done). */
	for (unsigned i = 0; i < n_moved; i++) {
		char moved[64];
		int r;
		snprintf(moved, sizeof(moved), ".cloister-rm-%ld-%u", (long)getpid(), i);
		r = remove_one(parent, moved, &n_moved);
		if (r < 0 && rc == 0)
			rc = r;
	}
	return rc;
}

int cl_remove_tree_or_say(int dirfd, const char *name, const char *what)
{
	int rc = cl_remove_tree_at(dirfd, name);

	/* Never silent: what stays is the user's to know of. */
	if (rc < 0)
		fprintf(stderr, "cloister: could not remove %s: %s\n", what, strerror(-rc));
	return rc;
}

DIR *cl_opendir_fd(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d && fd >= 0) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return d;
}

void cl_empty_dir(int dirfd)
{
	DIR *d = cl_opendir_fd(dirfd);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			cl_remove_tree_at(dirfd, de->d_name);
	closedir(d);
}

int cl_mkdirs_at(int parent, const char *rel)
{
	char buf[PATH_MAX];
	char *save = NULL, *part;
	int cur = openat(parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (cur < 0)
		return -errno;
	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf)) {
		close(cur);
		return -ENAMETOOLONG;
	}
	for (part = strtok_r(buf, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		int next;
		if (strcmp(part, ".") == 0)
			continue;
		if (strcmp(part, "..") == 0) {
			close(cur);
			return -EXDEV;
		}
		if (mkdirat(cur, part, 0755) < 0 && errno != EEXIST) {
			int saved = errno;
			close(cur);
			return -saved;
		}
		next = openat(cur, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		if (next < 0)
			return errno == ENOTDIR ? -ELOOP : -errno;
		cur = next;
	}
	return cur;
}

int cl_write_at(int parent, const char *rel, const void *data, size_t len, int mode)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(rel, '/');
	const char *base = slash ? slash + 1 : rel;
	int dfd, fd, rc;
	struct stat st;

	if (!*base || strcmp(base, "..") == 0 || strcmp(base, ".") == 0)
		return -EINVAL;
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - rel) : 1, slash ? rel : ".");
	dfd = cl_mkdirs_at(parent, dir);
	if (dfd < 0)
		return dfd;
	fd = openat(dfd, base, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode);
	rc = fd < 0 ? -errno : 0;
	if (rc == 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)))
		rc = -EINVAL;
	/* A second name for the inode may live outside the tree: writing
	 * through it would reach that file. */
	if (rc == 0 && st.st_nlink > 1)
		rc = -EMLINK;
	if (rc == 0 && ftruncate(fd, 0) < 0)
		rc = -errno;
	if (rc == 0)
		rc = cl_write_all(fd, data, len);
	if (fd >= 0)
		close(fd);
	close(dfd);
	return rc;
}
