/* The workspace fallback where overlayfs cannot be mounted: DIR is copied
 * into the run dir (reflinked where the filesystem allows) and the copy is
 * bound at DIR's path. Regular files, directories and symlinks (as links,
 * never followed); fifos, sockets and devices are left out, or refused
 * (strict: a snapshot). Also builds snapshots (src/workspace/snapshot.c). */
#define _GNU_SOURCE
#include "src/workspace/copy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/cleanup.h"
#include "src/fdio.h"

/* The whole of in, to EOF (a size that changed since the stat is copied
 * as it is now). */
static int copy_rw(int in, int out, const struct stat *st)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || cl_write_all(out, buf, (size_t)n) < 0)
			return -errno;
	}
	return fchmod(out, st->st_mode & 0777) < 0 ? -errno : 0;
}

static int copy_file(int sdir, int ddir, const char *name, const struct stat *st)
{
	cl_autoclose int in = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	cl_autoclose int out = -1;
	off_t left = st->st_size;

	if (in < 0)
		return -errno;
	out = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -errno;
	/* A reflink costs nothing; otherwise the kernel copies, or (across
	 * filesystems: a snapshot's overlay view) read and write do. */
	if (ioctl(out, FICLONE, in) < 0) {
		while (left > 0) {
			ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && left == st->st_size && (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP))
				return copy_rw(in, out, st);
			if (n <= 0)
				return n < 0 ? -errno : -EIO;
			left -= n;
		}
	}
	return fchmod(out, st->st_mode & 0777) < 0 ? -errno : 0;
}

struct copy {
	const struct ws_copy_opts *o;
	const char *top;
	cl_error *err;
};

static int copy_dir(int sdir, int ddir, int depth, const struct copy *c, const char *rel);

static int copy_entry(int sdir, int ddir, const char *name, int depth, const struct copy *c,
                      const char *rel)
{
	char sub[4096];
	struct stat st;
	cl_error *err = c->err;
	const char *top = c->top;

	if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", name) >= sizeof(sub))
		return cl_fail(err, ENAMETOOLONG, "copying workspace %s: %s/%s", top, rel, name);
	if (fstatat(sdir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return cl_fail_errno(err, "copying workspace %s: %s", top, sub);
	if (S_ISDIR(st.st_mode)) {
		cl_autoclose int s = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		cl_autoclose int t = -1;
		int rc;
		if (s < 0 || mkdirat(ddir, name, 0700) < 0 ||
		    (t = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			return cl_fail_errno(err, "copying workspace %s: %s", top, sub);
		/* The mode last: a 0500 directory is filled before it closes. */
		if ((rc = copy_dir(s, t, depth + 1, c, sub)) == 0 && fchmod(t, st.st_mode & 0777) < 0)
			rc = cl_fail_errno(err, "copying workspace %s: %s", top, sub);
		return rc;
	}
	if (S_ISREG(st.st_mode)) {
		int r = copy_file(sdir, ddir, name, &st);
		return r < 0 ? cl_fail(err, -r, "copying workspace %s: %s", top, sub) : 0;
	}
	if (S_ISLNK(st.st_mode)) {
		char t[4096];
		ssize_t n = readlinkat(sdir, name, t, sizeof(t) - 1);
		if (n < 0 || (t[n] = '\0', symlinkat(t, ddir, name) < 0))
			return cl_fail_errno(err, "copying workspace %s: %s", top, sub);
		return 0;
	}
	if (c->o && c->o->strict)
		return cl_fail(err, 0, "copying workspace %s: %s is a special file (fifo, socket or device), "
		               "which is not copied", top, sub);
	return 0;
}

static int copy_dir(int sdir, int ddir, int depth, const struct copy *c, const char *rel)
{
	int fd = dup(sdir), rc = 0;
	DIR *d;
	struct dirent *de;

	if (depth > 256)
		return cl_fail(c->err, ELOOP, "copying workspace %s: %s is too deep", c->top, rel);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return cl_fail_errno(c->err, "copying workspace %s", c->top);
	}
	/* A dup shares the directory offset: start at the top whoever read it. */
	rewinddir(d);
	/* errno tells the end of the list from a failed read: a copy must
	 * never come out short without saying so. */
	while (rc == 0 && (errno = 0, de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    !(depth == 0 && c->o && c->o->skip && !strcmp(de->d_name, c->o->skip)))
			rc = copy_entry(dirfd(d), ddir, de->d_name, depth, c, rel);
	if (rc == 0 && errno)
		rc = cl_fail_errno(c->err, "copying workspace %s: reading %s", c->top, *rel ? rel : ".");
	closedir(d);
	return rc;
}

int ws_copy_tree(int src_fd, int dst_fd, const char *shown, const struct ws_copy_opts *o,
                 cl_error *err)
{
	struct copy c = {.o = o, .top = shown, .err = err};

	return copy_dir(src_fd, dst_fd, 0, &c, "");
}
