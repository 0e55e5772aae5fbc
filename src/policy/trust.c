/* The trust rule for config files and the files they name: owner, mode and
 * type of the file and of every directory above it, and sandbox reach. */
#define _GNU_SOURCE
#include "src/policy/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util/cleanup.h"

struct wbind {
	dev_t dev;
	ino_t ino;
	const char *src;
};

static bool trusted_owner(uid_t uid)
{
	return uid == 0 || uid == getuid();
}

/* The host files a sandbox of this policy can write: the sources of its
 * writable binds and overlay upper dirs (symlinks followed, as the bind
 * itself follows them). One missing is one the sandbox does not get. */
static size_t writable_binds(const struct cl_policy *p, struct wbind *out)
{
	size_t n = 0;

	for (size_t i = 0; p && i < p->n_mounts; i++) {
		const struct cl_mount *m = &p->mounts[i];
		struct stat st;
		bool w = (m->kind == CL_MNT_BIND && !(m->flags & CL_MF_RO)) ||
		         (m->kind == CL_MNT_OVERLAY && m->ovl_work);

		if (!w || (m->src_fd < 0 && !m->src))
			continue;
		if (m->src_fd >= 0 ? fstat(m->src_fd, &st) < 0 : stat(m->src, &st) < 0)
			continue;
		out[n++] = (struct wbind){st.st_dev, st.st_ino, m->src ? m->src : "(an fd)"};
	}
	return n;
}

/* A directory on the way to the file: anyone who may write it may put
 * another file at the name (a sticky directory lets them only remove and
 * rename their own entries). */
static int check_dir(const struct stat *st, const char *dir, const char *what, const char *path,
                     cl_error *err)
{
	if (!trusted_owner(st->st_uid))
		return cl_fail(err, 0, "%s %s: directory %s is owned by uid %u, not by root or the "
		               "caller; refusing it", what, path, dir, (unsigned)st->st_uid);
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX))
		return cl_fail(err, 0, "%s %s: directory %s is writable by group or others (mode "
		               "%04o), so others could replace the file; refusing it", what, path, dir,
		               (unsigned)(st->st_mode & 07777));
	return 0;
}

struct walk {
	const char *what, *path;
	struct wbind *wb;
	size_t n_wb;
	const struct wbind *inside;   /* the writable bind the walk is in, or NULL */
};

/* Once inside a writable bind, a directory or file the caller owns is one
 * the sandbox (which writes as the caller) can change. */
static int check_reach(struct walk *w, const struct stat *st, cl_error *err)
{
	for (size_t i = 0; i < w->n_wb; i++)
		if (w->wb[i].dev == st->st_dev && w->wb[i].ino == st->st_ino)
			w->inside = &w->wb[i];
	if (w->inside && st->st_uid == getuid())
		return cl_fail(err, 0, "%s %s: inside %s, which this launch binds writable into the "
		               "sandbox, so the sandbox could rewrite it for later launches; refusing "
		               "it (keep it outside every writable bind)", w->what, w->path,
		               w->inside->src);
	return 0;
}

/* From / down to the directory real (resolved), one O_NOFOLLOW step at a
 * time, then leaf in it must still be the file that was opened. real is
 * consumed by strtok_r. */
static int walk_path(struct walk *w, const struct stat *file, char *real, const char *leaf,
                     cl_error *err)
{
	char shown[PATH_MAX] = "/";
	cl_autoclose int dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	char *save = NULL;
	int rc;

	if (dfd < 0 || fstat(dfd, &st) < 0)
		return cl_fail_errno(err, "%s %s: checking /", w->what, w->path);
	if ((rc = check_dir(&st, "/", w->what, w->path, err)) < 0 || (rc = check_reach(w, &st, err)) < 0)
		return rc;
	for (char *c = strtok_r(real, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int nfd = openat(dfd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown), "%s%s",
		         shown[1] ? "/" : "", c);
		if (nfd < 0)
			return cl_fail_errno(err, "%s %s: directory %s changed while it was checked",
			                     w->what, w->path, shown);
		close(dfd);
		dfd = nfd;
		if (fstat(dfd, &st) < 0)
			return cl_fail_errno(err, "%s %s: checking %s", w->what, w->path, shown);
		if ((rc = check_dir(&st, shown, w->what, w->path, err)) < 0 ||
		    (rc = check_reach(w, &st, err)) < 0)
			return rc;
	}
	if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != file->st_dev ||
	    st.st_ino != file->st_ino)
		return cl_fail(err, 0, "%s %s: the file changed while it was checked", w->what, w->path);
	return check_reach(w, file, err);
}

/* The file's directory resolved, then walked. Plain frees, not cl_autofree:
 * clang-tidy 14's analyzer does not follow cleanup attributes here. */
static int check_path(struct walk *w, const struct stat *file, cl_error *err)
{
	char *copy = strdup(w->path), *real = NULL, *slash;
	int rc;

	if (!copy)
		return cl_fail(err, ENOMEM, "%s %s", w->what, w->path);
	slash = strrchr(copy, '/');
	if (slash == copy)
		real = strdup("/");
	else if (slash)
		*slash = '\0', real = realpath(copy, NULL);
	else
		real = realpath(".", NULL);
	if (real)
		rc = walk_path(w, file, real, slash ? slash + 1 : copy, err);
	else
		rc = cl_fail_errno(err, "%s %s: resolving its directory", w->what, w->path);
	free(real);
	free(copy);
	return rc;
}

int cl_trust_open(const char *path, const char *what, const struct cl_policy *sandbox,
                  int *out, cl_error *err)
{
	/* O_NONBLOCK: a FIFO planted at the path must not hang every launch. */
	cl_autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	struct wbind *wb = NULL;
	struct walk w = {.what = what, .path = path};
	struct stat st;
	int rc;

	if (fd < 0 && errno == ELOOP)
		return cl_fail(err, 0, "%s %s: a symbolic link; name the file itself", what, path);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return cl_fail_errno(err, "%s %s: fstat", what, path);
	if (!S_ISREG(st.st_mode))
		return cl_fail(err, 0, "%s %s: not a regular file", what, path);
	if (!trusted_owner(st.st_uid))
		return cl_fail(err, 0, "%s %s: owned by uid %u, not by root or the caller; "
		               "refusing it", what, path, (unsigned)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return cl_fail(err, 0, "%s %s: writable by group or others (mode %04o); "
		               "refusing it (chmod go-w)", what, path, (unsigned)(st.st_mode & 07777));
	if (sandbox && sandbox->n_mounts) {
		wb = calloc(sandbox->n_mounts, sizeof(*wb));
		if (!wb)
			return cl_fail(err, ENOMEM, "%s %s", what, path);
		w.wb = wb;
		w.n_wb = writable_binds(sandbox, wb);
	}
	rc = check_path(&w, &st, err);
	free(wb);
	if (rc < 0)
		return rc;
	/* Reads of a regular file never block; the flag only guarded the open. */
	fcntl(fd, F_SETFL, 0);
	*out = cl_steal_fd(&fd);
	return 0;
}
