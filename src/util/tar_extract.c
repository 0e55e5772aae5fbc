/* Extraction of a result tar: every name is checked before anything is
 * made, directories are made one component at a time without following
 * links (cl_mkdirs_at), files are created exclusively (O_EXCL|O_NOFOLLOW):
 * nothing of the stream can land outside the directory it is given. */
#define _GNU_SOURCE
#include "src/util/tar_extract.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "src/util/fdio.h"
#include "src/util/fsafe.h"

static int __attribute__((format(printf, 3, 4))) why(struct cl_tar_dest *d, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->why, sizeof(d->why), fmt, ap);
	va_end(ap);
	return rc;
}

int cl_tar_result_rel(const char *name, char *rel, size_t len)
{
	size_t n;
	const char *c;

	if (name[0] == '/')
		return -EXDEV;
	if (strcmp(name, ".") == 0 || strcmp(name, "./") == 0) {
		rel[0] = '\0';
		return 0;
	}
	if (strncmp(name, "./", 2) != 0)
		return -EINVAL;
	name += 2;
	n = strlen(name);
	while (n && name[n - 1] == '/')   /* tar writes directories as "d/" */
		n--;
	if (n == 0 || n >= len)
		return -EINVAL;
	memcpy(rel, name, n);
	rel[n] = '\0';
	/* Each component: not empty, not "." (tar never writes them), not "..". */
	for (c = rel; c; c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL) {
		size_t cl = strcspn(c, "/");
		if (cl == 2 && c[0] == '.' && c[1] == '.')
			return -EXDEV;
		if (cl == 0 || (cl == 1 && c[0] == '.'))
			return -EINVAL;
	}
	return 0;
}

/* The parent directory of rel (made as needed, no link followed) and the
 * last component. */
static int open_parent(int root, char *rel, const char **base)
{
	char *slash = strrchr(rel, '/');
	int fd;

	if (!slash) {
		*base = rel;
		fd = dup(root);
		return fd < 0 ? -errno : fd;
	}
	*slash = '\0';
	*base = slash + 1;
	fd = cl_mkdirs_at(root, rel);
	*slash = '/';
	return fd;
}

static int create_file(struct cl_tar_dest *d, int dirfd, const char *base, const char *shown,
                       unsigned mode)
{
	d->out_fd = openat(dirfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	                   (mode & 0755) | 0600);
	if (d->out_fd >= 0)
		return 0;
	if (errno == EEXIST)
		return why(d, -EINVAL, "'%.200s' is in the archive twice or is a directory", shown);
	if (errno == ELOOP)
		return why(d, -EXDEV, "'%.200s' would be written through a symlink", shown);
	return why(d, -errno, "creating '%.200s': %s", shown, strerror(errno));
}

static int on_begin(void *ctx, const struct cl_tar_member *m)
{
	struct cl_tar_dest *d = ctx;
	char rel[CL_TAR_NAME_MAX];
	const char *base;
	int rc, pfd;

	if (++d->members > CL_TAR_MAX_MEMBERS)
		return why(d, -EFBIG, "more than %d members", CL_TAR_MAX_MEMBERS);
	if (m->type == '1' || m->type == '2')
		return why(d, -EXDEV, "'%.200s' is a %s link (links are refused)", m->name,
		           m->type == '2' ? "symbolic" : "hard");
	if (m->type != '0' && m->type != '5')
		return why(d, -EINVAL, "'%.200s' is a device node or fifo", m->name);
	if (m->size > d->max_bytes - d->bytes)
		return why(d, -EFBIG, "'%.200s' would take the bundle over %llu bytes", m->name,
		           (unsigned long long)d->max_bytes);
	if (m->type == '0' && d->file_name && strcmp(m->name, d->file_name) == 0) {
		/* It replaces the placeholder the run made; only once. */
		if (d->file_seen)
			return why(d, -EINVAL, "'%.200s' is in the archive twice", m->name);
		d->file_seen = true;
		d->out_fd = openat(d->file_dir_fd, d->file_name,
		                   O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
		return d->out_fd < 0 ? why(d, -errno, "writing '%.200s': %s", m->name, strerror(errno)) : 0;
	}
	rc = cl_tar_result_rel(m->name, rel, sizeof(rel));
	if (rc == -EXDEV)
		return why(d, rc, "'%.200s' is absolute or climbs out with '..'", m->name);
	if (rc < 0)
		return why(d, rc, "'%.200s' is not a name below the result directory", m->name);
	if (m->type == '5') {
		if (!rel[0])
			return 0;
		pfd = cl_mkdirs_at(d->root_fd, rel);
		if (pfd < 0)
			return why(d, pfd == -ELOOP || pfd == -ENOTDIR ? -EXDEV : pfd,
			           "making directory '%.200s': %s", m->name, strerror(-pfd));
		close(pfd);
		return 0;
	}
	if (!rel[0])
		return why(d, -EINVAL, "'%.200s' names the result directory itself", m->name);
	pfd = open_parent(d->root_fd, rel, &base);
	if (pfd < 0)
		return why(d, pfd == -ELOOP || pfd == -ENOTDIR ? -EXDEV : pfd,
		           "the directory of '%.200s': %s", m->name, strerror(-pfd));
	rc = create_file(d, pfd, base, m->name, m->mode);
	close(pfd);
	return rc;
}

static int on_data(void *ctx, const void *buf, size_t len)
{
	struct cl_tar_dest *d = ctx;
	int rc;

	/* Counted as written: the header's size was checked, this is the
	 * payload it announced, never more. */
	d->bytes += len;
	rc = cl_write_all(d->out_fd, buf, len);
	return rc < 0 ? why(d, rc, "writing: %s", strerror(-rc)) : 0;
}

static int on_end(void *ctx)
{
	cl_tar_dest_close(ctx);
	return 0;
}

void cl_tar_dest_close(struct cl_tar_dest *d)
{
	if (d->out_fd >= 0)
		close(d->out_fd);
	d->out_fd = -1;
}

const struct cl_tar_ops cl_tar_extract_ops = {
	.begin = on_begin,
	.data = on_data,
	.end = on_end,
};
