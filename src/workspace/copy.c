/* The workspace fallback where overlayfs cannot be mounted: DIR is copied
 * into the run dir (reflinked where the filesystem allows) and the copy is
 * bound at DIR's path. Regular files, directories and symlinks (as links,
 * never followed); fifos, sockets and devices are not copied. */
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
	/* A reflink costs nothing; otherwise the kernel copies. */
	if (ioctl(out, FICLONE, in) < 0) {
		while (left > 0) {
			ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return n < 0 ? -errno : -EIO;
			left -= n;
		}
	}
	return fchmod(out, st->st_mode & 0777) < 0 ? -errno : 0;
}

static int copy_dir(int sdir, int ddir, int depth, cl_error *err, const char *top)
{
	int fd = dup(sdir), rc = 0;
	DIR *d;
	struct dirent *de;

	if (depth > 256)
		return cl_fail(err, ELOOP, "copying workspace %s: too deep", top);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return cl_fail_errno(err, "copying workspace %s", top);
	}
	/* A dup shares the directory offset: start at the top whoever read it. */
	rewinddir(d);
	while (rc == 0 && (de = readdir(d))) {
		struct stat st;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = cl_fail_errno(err, "copying workspace %s: %s", top, de->d_name);
		} else if (S_ISDIR(st.st_mode)) {
			cl_autoclose int s = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			cl_autoclose int t = -1;
			if (s < 0 || mkdirat(ddir, de->d_name, 0700) < 0 ||
			    (t = openat(ddir, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
				rc = cl_fail_errno(err, "copying workspace %s: %s", top, de->d_name);
			else if ((rc = copy_dir(s, t, depth + 1, err, top)) == 0 && fchmod(t, st.st_mode & 0777) < 0)
				rc = cl_fail_errno(err, "copying workspace %s: %s", top, de->d_name);
		} else if (S_ISREG(st.st_mode)) {
			int r = copy_file(dirfd(d), ddir, de->d_name, &st);
			if (r < 0)
				rc = cl_fail(err, -r, "copying workspace %s: %s", top, de->d_name);
		} else if (S_ISLNK(st.st_mode)) {
			char t[4096];
			ssize_t n = readlinkat(dirfd(d), de->d_name, t, sizeof(t) - 1);
			if (n < 0 || (t[n] = '\0', symlinkat(t, ddir, de->d_name) < 0))
				rc = cl_fail_errno(err, "copying workspace %s: %s", top, de->d_name);
		}
	}
	closedir(d);
	return rc;
}

int ws_copy_tree(int src_fd, int dst_fd, const char *shown, cl_error *err)
{
	return copy_dir(src_fd, dst_fd, 0, err, shown);
}
