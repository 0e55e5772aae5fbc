/* Copying a request tree into a sandbox and walking hostile directories,
 * with Smithers' error codes; never following a link. */
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
#include "src/util/fsafe.h"
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
