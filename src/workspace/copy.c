/* The workspace fallback where overlayfs cannot be mounted: DIR is copied
 * into the run dir (reflinked where the filesystem allows) and the copy is
 * bound at DIR's path. Regular files, directories and symlinks (as links,
 * never followed); fifos, sockets and devices are left out, or refused
 * (strict: a snapshot); a file with several names is copied once and its
 * other names are hard links to that copy. Also builds snapshots
 * (src/workspace/snapshot.c). */
#define _GNU_SOURCE
#include "src/workspace/copy.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/fdio.h"

/* bytes [from, to) of in to the same offsets of out. */
static int copy_range(int in, int out, off_t from, off_t to)
{
	char buf[65536];

	while (from < to) {
		size_t want = (size_t)(to - from) < sizeof(buf) ? (size_t)(to - from) : sizeof(buf);
		ssize_t n = pread(in, buf, want, from), w = 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : 0;   /* shorter than it was: copied as it is */
		while (w < n) {
			ssize_t k = pwrite(out, buf + w, (size_t)(n - w), from + w);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return k < 0 ? -errno : -EIO;
			w += k;
		}
		from += n;
	}
	return 0;
}

/* Only the data of in, its holes left holes: a sandbox can make a 1 TiB
 * file that takes no space (truncate), which a byte-for-byte copy (or
 * copy_file_range, which fills holes in) would write out in full. */
static int copy_extents(int in, int out, off_t size)
{
	off_t off = 0;

	while (off < size) {
		off_t data = lseek(in, off, SEEK_DATA), hole;
		int rc;
		if (data < 0 && errno == ENXIO)
			break;   /* a hole to the end */
		if (data < 0)
			return errno == EINVAL ? copy_range(in, out, off, size) : -errno;   /* no SEEK_DATA here */
		if ((hole = lseek(in, data, SEEK_HOLE)) < 0)
			return -errno;
		if ((rc = copy_range(in, out, data, hole)) < 0)
			return rc;
		off = hole;
	}
	return ftruncate(out, size) < 0 ? -errno : 0;
}

/* The kernel copies; 1 when it cannot here (across filesystems). */
static int copy_kernel(int in, int out, off_t size)
{
	off_t left = size;

	while (left > 0) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && left == size && (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP))
			return 1;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		left -= n;
	}
	return 0;
}

static int copy_file(int sdir, int ddir, const char *name, const struct stat *st)
{
	cl_autoclose int in = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	cl_autoclose int out = -1;
	/* Fewer blocks than bytes: it has holes, which copy_file_range would
	 * fill in. */
	bool sparse = (off_t)st->st_blocks * 512 < st->st_size;
	int rc;

	if (in < 0)
		return -errno;
	out = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -errno;
	/* A reflink costs nothing; otherwise the kernel copies, or (a sparse
	 * file, or across filesystems: a snapshot's overlay view) the data
	 * extents are copied. */
	if (ioctl(out, FICLONE, in) < 0) {
		rc = sparse ? 1 : copy_kernel(in, out, st->st_size);
		if (rc == 1)
			rc = copy_extents(in, out, st->st_size);
		if (rc < 0)
			return rc;
	}
	return fchmod(out, st->st_mode & 0777) < 0 ? -errno : 0;
}

/* A file seen with st_nlink > 1: where its copy is, below the top. */
struct seen {
	dev_t dev;
	ino_t ino;
	char *rel;
};

/* Open addressing on (dev, ino); n_slots is a power of two or 0. */
struct links {
	struct seen *v;
	size_t n, n_slots;
};

struct copy {
	const struct ws_copy_opts *o;
	const char *top;
	int dst_top;            /* the copy's top, which links are made from */
	struct links links;
	cl_error *err;
};

static size_t slot_of(const struct links *l, dev_t dev, ino_t ino)
{
	size_t i = ((size_t)ino * 0x9e3779b97f4a7c15ULL ^ (size_t)dev) & (l->n_slots - 1);

	while (l->v[i].rel && !(l->v[i].dev == dev && l->v[i].ino == ino))
		i = (i + 1) & (l->n_slots - 1);
	return i;
}

/* Where the first name of st's file was copied, or NULL. */
static const char *links_find(const struct links *l, const struct stat *st)
{
	return l->n_slots ? l->v[slot_of(l, st->st_dev, st->st_ino)].rel : NULL;
}

static int links_grow(struct links *l)
{
	struct links g = {.n = l->n, .n_slots = l->n_slots ? 2 * l->n_slots : 256};

	if (!(g.v = calloc(g.n_slots, sizeof(*g.v))))
		return -ENOMEM;
	for (size_t k = 0; k < l->n_slots; k++)
		if (l->v[k].rel)
			g.v[slot_of(&g, l->v[k].dev, l->v[k].ino)] = l->v[k];
	free(l->v);
	*l = g;
	return 0;
}

static int links_add(struct links *l, const struct stat *st, const char *rel)
{
	size_t i;
	int rc;

	if (2 * (l->n + 1) > l->n_slots && (rc = links_grow(l)) < 0)
		return rc;
	i = slot_of(l, st->st_dev, st->st_ino);
	if (!(l->v[i].rel = strdup(rel)))
		return -ENOMEM;
	l->v[i].dev = st->st_dev;
	l->v[i].ino = st->st_ino;
	l->n++;
	return 0;
}

static void links_free(struct links *l)
{
	for (size_t k = 0; k < l->n_slots; k++)
		free(l->v[k].rel);
	free(l->v);
}

/* A regular file: linked to the copy of an earlier name of the same
 * file, else copied (and remembered when it has other names). Without
 * this, 64 names of a 16 MiB file made a 1 GiB copy. */
static int copy_reg(int sdir, int ddir, const char *name, const struct stat *st, struct copy *c,
                    const char *rel)
{
	const char *first = st->st_nlink > 1 ? links_find(&c->links, st) : NULL;
	int r;

	/* A link the filesystem refuses (EMLINK) falls back to a copy. */
	if (first && linkat(c->dst_top, first, ddir, name, 0) == 0)
		return 0;
	if ((r = copy_file(sdir, ddir, name, st)) < 0)
		return cl_fail(c->err, -r, "copying workspace %s: %s", c->top, rel);
	if (st->st_nlink > 1 && !first && (r = links_add(&c->links, st, rel)) < 0)
		return cl_fail(c->err, -r, "copying workspace %s: %s", c->top, rel);
	return 0;
}

static int copy_dir(int sdir, int ddir, int depth, struct copy *c, const char *rel);

static int copy_entry(int sdir, int ddir, const char *name, int depth, struct copy *c,
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
	if (S_ISREG(st.st_mode))
		return copy_reg(sdir, ddir, name, &st, c, sub);
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

static int copy_dir(int sdir, int ddir, int depth, struct copy *c, const char *rel)
{
	int fd = dup(sdir), rc = 0;
	DIR *d;
	struct dirent *de;

	if (depth > WS_COPY_MAX_DEPTH)
		return cl_fail(c->err, 0, "copying workspace %s: %s%s is more than %d directories deep, "
		               "the limit of a copy", c->top, strlen(rel) > 64 ? "..." : "",
		               strlen(rel) > 64 ? rel + strlen(rel) - 64 : rel, WS_COPY_MAX_DEPTH);
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
	struct copy c = {.o = o, .top = shown, .dst_top = dst_fd, .err = err};
	int rc = copy_dir(src_fd, dst_fd, 0, &c, "");

	links_free(&c.links);
	return rc;
}
