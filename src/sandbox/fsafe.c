/* Copy, remove and write inside trees a sandbox (or its caller) controls:
 * every step is relative to a directory fd and refuses to follow links. */
#define _GNU_SOURCE
#include "src/sandbox/fsafe.h"

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
#include "src/sandbox/bundle.h"

#define COPY_MAX_DEPTH 64

struct copy {
	const char *src;      /* the requestBundlePath, for messages */
	uint64_t bytes;       /* copied so far, at most SB_MAX_BUNDLE_BYTES */
	int ddir;             /* the copy of the directory being read */
	int depth;            /* of that directory below the request's root */
};

/* Smithers' bundle limit, applied to the request copy as it grows (a
 * file may grow after its fstat). */
static int over_limit(const struct copy *c, uint64_t more, struct sb_error *e)
{
	if (more <= SB_MAX_BUNDLE_BYTES - c->bytes)
		return 0;
	return sb_fail(e, SB_INVALID_INPUT, 0,
	               json_pack("{s:s,s:I}", "bundlePath", c->src, "maxBytes",
	                         (json_int_t)SB_MAX_BUNDLE_BYTES),
	               "Sandbox bundle exceeds %llu bytes", SB_MAX_BUNDLE_BYTES);
}

static int copy_file(int sfd, int ddir, const char *name, const char *rel, struct copy *c,
                     struct sb_error *e)
{
	cl_autoclose int out = -1;
	char buf[65536];
	struct stat st;
	ssize_t n;
	int rc;

	/* Check the opened fd, not the earlier fstatat: the entry may have
	 * been swapped for a fifo or device in between. */
	if (fstat(sfd, &st) < 0)
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, errno, NULL, "shipping %s", rel);
	if (!S_ISREG(st.st_mode))
		return sb_fail(e, SB_TOOL_PATH_INVALID, 0, json_pack("{s:s}", "path", rel),
		               "Sandbox request bundle may only contain regular files and directories: %s", rel);
	if ((rc = over_limit(c, (uint64_t)st.st_size, e)) < 0)
		return rc;
	out = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	             (st.st_mode & 0755) | 0600);
	if (out < 0)
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, errno, NULL, "shipping %s", rel);
	while ((n = read(sfd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return sb_fail(e, SB_PROCESS_SPAWN_FAILED, errno, NULL, "reading %s", rel);
		}
		if ((rc = over_limit(c, (uint64_t)n, e)) < 0)
			return rc;
		if ((rc = cl_write_all(out, buf, (size_t)n)) < 0)
			return sb_fail(e, SB_PROCESS_SPAWN_FAILED, -rc, NULL, "writing %s", rel);
		c->bytes += (uint64_t)n;
	}
	return 0;
}

int sb_each_entry(int dfd, const char *dir_rel, enum sb_code code, const char *what,
                  sb_entry_fn fn, void *ctx, struct sb_error *e)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		rc = sb_fail(e, code, errno, NULL, "reading %s %s", what, *dir_rel ? dir_rel : ".");
		close(dfd);
		return rc;
	}
	while (rc == 0 && (errno = 0, de = readdir(d))) {
		char rel[PATH_MAX];

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(rel, sizeof(rel), "%s%s%s", dir_rel, *dir_rel ? "/" : "",
		                     de->d_name) >= sizeof(rel))
			rc = sb_fail(e, SB_TOOL_PATH_INVALID, 0, NULL, "Sandbox bundle path is too long.");
		else
			rc = fn(dirfd(d), de->d_name, rel, ctx, e);
	}
	/* readdir's NULL with errno set: the listing itself failed. */
	if (rc == 0 && errno)
		rc = sb_fail(e, code, errno, NULL, "reading %s %s", what, *dir_rel ? dir_rel : ".");
	closedir(d);
	return rc;
}

static int copy_entry(int sdir, const char *name, const char *rel, void *ctx, struct sb_error *e);

/* A directory of the request: made in the copy, then filled. */
static int copy_subdir(struct copy *c, int sdir, const char *name, const char *rel,
                       struct sb_error *e)
{
	int sub = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int ddir = c->ddir, rc;
	cl_autoclose int dsub = -1;

	if (sub < 0)
		return sb_fail(e, SB_TOOL_PATH_ESCAPE, errno == ELOOP ? 0 : errno,
		               json_pack("{s:s}", "path", rel),
		               "Sandbox request bundle changed while shipping: %s", rel);
	if (c->depth >= COPY_MAX_DEPTH) {
		close(sub);
		return sb_invalid(e, "requestBundlePath",
		                  "Sandbox request bundle is nested deeper than %d directories.",
		                  COPY_MAX_DEPTH);
	}
	if (mkdirat(ddir, name, 0755) < 0 ||
	    (dsub = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		rc = sb_fail(e, SB_PROCESS_SPAWN_FAILED, errno, NULL, "shipping %s", rel);
		close(sub);
		return rc;
	}
	c->ddir = dsub;
	c->depth++;
	rc = sb_each_entry(sub, rel, SB_PROCESS_SPAWN_FAILED, "request directory", copy_entry, c, e);
	c->depth--;
	c->ddir = ddir;
	return rc;
}

static int copy_entry(int sdir, const char *name, const char *rel, void *ctx, struct sb_error *e)
{
	struct copy *c = ctx;
	/* O_PATH first: opening a fifo for reading would block. */
	cl_autoclose int fd = openat(sdir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	cl_autoclose int rfd = -1;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, errno, NULL, "shipping %s", rel);
	if (S_ISLNK(st.st_mode))
		return sb_fail(e, SB_TOOL_PATH_ESCAPE, 0, json_pack("{s:s}", "path", rel),
		               "Sandbox request bundle may not contain symlinks: %s", rel);
	if (S_ISDIR(st.st_mode))
		return copy_subdir(c, sdir, name, rel, e);
	if (!S_ISREG(st.st_mode))
		return sb_fail(e, SB_TOOL_PATH_INVALID, 0, json_pack("{s:s}", "path", rel),
		               "Sandbox request bundle may only contain regular files and directories: %s",
		               rel);
	rfd = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (rfd < 0)
		return sb_fail(e, errno == ELOOP ? SB_TOOL_PATH_ESCAPE : SB_PROCESS_SPAWN_FAILED,
		               errno == ELOOP ? 0 : errno, json_pack("{s:s}", "path", rel),
		               "shipping %s", rel);
	return copy_file(rfd, c->ddir, name, rel, c, e);
}

int sb_open_beneath(int dirfd, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	do
		fd = syscall(SYS_openat2, dirfd, *rel ? rel : ".", &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN);
	return fd < 0 ? -errno : (int)fd;
}

int sb_copy_tree(const char *src, int dst_fd, uint64_t *bytes, struct sb_error *e)
{
	int sfd, dfd;

	*bytes = 0;
	sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0) {
		struct stat st;
		/* O_NOFOLLOW|O_DIRECTORY on a link says ENOTDIR or ELOOP. */
		if (errno == ELOOP || (errno == ENOTDIR && lstat(src, &st) == 0 && S_ISLNK(st.st_mode)))
			return sb_fail(e, SB_TOOL_PATH_ESCAPE, 0, json_pack("{s:s}", "path", src),
			               "Sandbox request bundle may not be a symlink: %s", src);
		return sb_fail(e, SB_INVALID_INPUT, errno, json_pack("{s:s}", "field", "requestBundlePath"),
		               "requestBundlePath %s must be a readable directory", src);
	}
	dfd = dup(dst_fd);
	if (dfd < 0) {
		close(sfd);
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, errno, NULL, "shipping");
	}
	{
		struct copy c = {.src = src, .ddir = dfd};
		int rc = sb_each_entry(sfd, "", SB_PROCESS_SPAWN_FAILED, "request directory", copy_entry,
		                       &c, e);
		*bytes = c.bytes;
		close(dfd);
		return rc;
	}
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

/* One subtree, iteratively: at most SB_RM_MAX_DEPTH directories open at
 * once, whatever its depth. A directory found at the bound is renamed
 * into top under a fresh name (*n_moved counts them, for the caller to
 * remove next), which cuts the chain without following "..". */
static int remove_one(int top, const char *name, unsigned *n_moved)
{
	struct rm_level *st = calloc(SB_RM_MAX_DEPTH, sizeof(*st));
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
		if (depth + 1 == SB_RM_MAX_DEPTH) {
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

int sb_remove_tree_at(int parent, const char *name)
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

int sb_remove_tree_or_say(int dirfd, const char *name, const char *what)
{
	int rc = sb_remove_tree_at(dirfd, name);

	/* Never silent: what stays is the user's to know of. */
	if (rc < 0)
		fprintf(stderr, "cloister: could not remove %s: %s\n", what, strerror(-rc));
	return rc;
}

DIR *sb_opendir_fd(int dirfd)
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

void sb_empty_dir(int dirfd)
{
	DIR *d = sb_opendir_fd(dirfd);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			sb_remove_tree_at(dirfd, de->d_name);
	closedir(d);
}

int sb_mkdirs_at(int parent, const char *rel)
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

int sb_write_at(int parent, const char *rel, const void *data, size_t len, int mode)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(rel, '/');
	const char *base = slash ? slash + 1 : rel;
	int dfd, fd, rc;
	struct stat st;

	if (!*base || strcmp(base, "..") == 0 || strcmp(base, ".") == 0)
		return -EINVAL;
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - rel) : 1, slash ? rel : ".");
	dfd = sb_mkdirs_at(parent, dir);
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
