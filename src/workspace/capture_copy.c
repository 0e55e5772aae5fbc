/* The copy-mode capture walker: with no upper dir to say what changed,
 * every name of the changed copy is compared with the base by type, exec
 * bit and content, and every base name missing from the copy is deleted. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/policy/policy.h"
#include "src/workspace/capture_walk.h"
#include "src/workspace/extents.h"
#include "src/workspace/ignore.h"

/* Copy mode: names of one directory, sorted (NULL-terminated), or NULL. */
static char **names_of(int dfd, cl_error *err, const char *rel)
{
	int fd = dfd >= 0 ? dup(dfd) : -1;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	char **v = NULL;

	if (dfd < 0)
		return calloc(1, sizeof(char *));
	if (!d) {
		if (fd >= 0)
			close(fd);
		cl_fail_errno(err, "reading workspace directory %s", *rel ? rel : ".");
		return NULL;
	}
	rewinddir(d);   /* the dup shares the offset */
	v = calloc(1, sizeof(char *));
	while (v && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && !cl_strv_push(&v, de->d_name)) {
			cl_strv_free(v);
			v = NULL;
		}
	closedir(d);
	if (!v)
		cl_fail(err, ENOMEM, "reading workspace directory %s", rel);
	return v;
}

static bool in_list(char **v, const char *name)
{
	for (; v && *v; v++)
		if (!strcmp(*v, name))
			return true;
	return false;
}

/* Compared by their data: the copy of a 15 TiB sparse base file is one
 * too, and a byte-for-byte comparison read 30 TiB of zeros. */
static bool same_file(int nfd, int ofd, const char *name, const struct stat *ns, const struct stat *os)
{
	cl_autoclose int a = -1;
	cl_autoclose int b = -1;

	if (ns->st_size != os->st_size || ((ns->st_mode ^ os->st_mode) & S_IXUSR))
		return false;
	a = openat(nfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	b = openat(ofd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	return a >= 0 && b >= 0 && ws_same_content(a, b, ns->st_size);
}

static bool same_link(int nfd, int ofd, const char *name)
{
	char x[4096], y[4096];
	ssize_t n = readlinkat(nfd, name, x, sizeof(x)), m = readlinkat(ofd, name, y, sizeof(y));

	return n >= 0 && n == m && !memcmp(x, y, (size_t)n);
}

/* One name of the copy (nfd) against the base (ofd, may be -1). */
static int copy_entry(struct walk *w, int nfd, int ofd, const char *name, const char *prefix, int depth)
{
	char rel[PATH_MAX];
	struct stat ns, os;
	bool have_o;
	int rc;

	if ((rc = ws_walk_join(rel, sizeof(rel), prefix, name, w->err)) < 0)
		return rc;
	if (fstatat(nfd, name, &ns, AT_SYMLINK_NOFOLLOW) < 0)
		return cl_fail_errno(w->err, "reading %s", rel);
	have_o = ofd >= 0 && fstatat(ofd, name, &os, AT_SYMLINK_NOFOLLOW) == 0;
	/* As in the overlay walk: an ignored path is neither carried nor walked. */
	if (ws_ignore_match(w->ig, rel, S_ISDIR(ns.st_mode)))
		return have_o ? ws_walk_old_tree(w, ofd, name, rel, &os, depth) : 0;
	if (S_ISDIR(ns.st_mode)) {
		cl_autoclose int sub_n = openat(nfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		cl_autoclose int sub_o = -1;
		if (sub_n < 0)
			return cl_fail_errno(w->err, "reading workspace directory %s", rel);
		if (have_o && !S_ISDIR(os.st_mode) && (rc = ws_walk_old_tree(w, ofd, name, rel, &os, depth)) < 0)
			return rc;
		if (have_o && S_ISDIR(os.st_mode) &&
		    (sub_o = openat(ofd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			return cl_fail_errno(w->err, "reading workspace base directory %s", rel);
		return ws_walk_copy(w, sub_n, sub_o, rel, depth + 1);
	}
	/* A link is carried as git does (its target as content), never
	 * followed; an unchanged one is no change. */
	if (S_ISLNK(ns.st_mode) && have_o && S_ISLNK(os.st_mode) && same_link(nfd, ofd, name))
		return 0;
	if (!S_ISREG(ns.st_mode) && !S_ISLNK(ns.st_mode)) {
		/* One the base had already: not the sandbox's to name. */
		if (have_o && ws_is_special(&os))
			return 0;
		if (have_o && (rc = ws_walk_old_tree(w, ofd, name, rel, &os, depth)) < 0)
			return rc;
		return ws_walk_skip(w, rel, &ns);
	}
	if (have_o && S_ISREG(os.st_mode) && same_file(nfd, ofd, name, &ns, &os))
		return 0;
	if (have_o && (rc = ws_walk_old_tree(w, ofd, name, rel, &os, depth)) < 0)
		return rc;
	return ws_walk_push(w, rel, true, &ns);
}

/* Copy mode: every name of both trees compared (no upper dir says what
 * changed). */
int ws_walk_copy(struct walk *w, int nfd, int ofd, const char *prefix, int depth)
{
	char **nv, **ov;
	int rc = 0;

	if (depth > MAX_DEPTH)
		return ws_walk_too_deep(w, prefix);
	if (!(nv = names_of(nfd, w->err, prefix)))
		return cl_error_code(w->err);
	if (!(ov = names_of(ofd, w->err, prefix))) {
		cl_strv_free(nv);
		return cl_error_code(w->err);
	}
	for (char **n = nv; rc == 0 && *n; n++)
		if (!ws_is_git_dir(*n) && !(depth == 0 && w->skip && !strcmp(*n, w->skip)))
			rc = copy_entry(w, nfd, ofd, *n, prefix, depth);
	for (char **o = ov; rc == 0 && *o; o++) {
		char rel[PATH_MAX];
		struct stat os;
		if (ws_is_git_dir(*o) || (depth == 0 && w->skip && !strcmp(*o, w->skip)) || in_list(nv, *o))
			continue;
		if ((rc = ws_walk_join(rel, sizeof(rel), prefix, *o, w->err)) < 0)
			break;
		if (fstatat(ofd, *o, &os, AT_SYMLINK_NOFOLLOW) < 0)
			rc = cl_fail_errno(w->err, "reading %s", rel);
		/* The copy never had the base's special files (copy.c). */
		else if (!ws_is_special(&os))
			rc = ws_walk_old_tree(w, ofd, *o, rel, &os, depth);
	}
	cl_strv_free(nv);
	cl_strv_free(ov);
	return rc;
}

