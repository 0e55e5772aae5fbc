/* Walks an overlay upper dir against its lower dir: whiteouts are
 * deletions, opaque dirs replace the lower tree, files are adds or
 * modifies; the changes are sorted by path and turned into patches. */
#define _GNU_SOURCE
#include "src/workspace/capture.h"
#include "src/workspace/capture_walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/fdio.h"
#include "src/policy/policy.h"
#include "src/util/fsafe.h"
#include "src/workspace/ignore.h"
#include "src/workspace/patch.h"
#include "src/workspace/pathq.h"
#include "src/workspace/wsdl.h"

static bool is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

/* overlayfs keeps its marks in user.overlay.* in a user namespace
 * (userxattr), in trusted.overlay.* otherwise. */
static bool ovl_mark(int fd, const char *key, char *buf, size_t len)
{
	char attr[64];
	ssize_t n;

	snprintf(attr, sizeof(attr), "user.overlay.%s", key);
	n = fgetxattr(fd, attr, buf, len);
	if (n < 0) {
		snprintf(attr, sizeof(attr), "trusted.overlay.%s", key);
		n = fgetxattr(fd, attr, buf, len);
	}
	return n >= 0;
}

static int walk_upper(struct walk *w, int ufd, int lfd, const char *prefix, int depth);

static int upper_dir(struct walk *w, int ufd, int lfd, const char *name, const char *rel,
                     const struct stat *ls, bool have_l, int depth)
{
	cl_autoclose int sub_u = openat(ufd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	cl_autoclose int sub_l = -1;
	char v[8] = "";
	bool opaque;
	int rc;

	if (sub_u < 0)
		return cl_fail_errno(w->err, "reading workspace directory %s", rel);
	/* A renamed lower dir would be a redirect: userxattr overlays refuse
	 * the rename (EXDEV, tools copy instead), so one here is foreign. */
	if (ovl_mark(sub_u, "redirect", v, sizeof(v)))
		return ws_walk_unsupported(w, rel, "a redirected (renamed) overlay directory");
	opaque = ovl_mark(sub_u, "opaque", v, sizeof(v)) && v[0] == 'y';
	if (have_l && (!S_ISDIR(ls->st_mode) || opaque)) {
		/* Replaced: a file by a dir, or a whole tree by a new one. */
		if ((rc = ws_walk_old_tree(w, lfd, name, rel, ls, depth)) < 0)
			return rc;
	} else if (have_l) {
		sub_l = openat(lfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub_l < 0)
			return cl_fail_errno(w->err, "reading workspace base directory %s", rel);
	}
	return walk_upper(w, sub_u, sub_l, rel, depth + 1);
}

static int upper_entry(struct walk *w, int ufd, int lfd, const char *name, const char *prefix,
                       int depth)
{
	char rel[PATH_MAX];
	struct stat us, ls;
	bool have_l;
	int rc;

	if (ws_is_git_dir(name))
		return 0;
	if ((rc = ws_walk_join(rel, sizeof(rel), prefix, name, w->err)) < 0)
		return rc;
	if (fstatat(ufd, name, &us, AT_SYMLINK_NOFOLLOW) < 0)
		return cl_fail_errno(w->err, "reading %s", rel);
	have_l = lfd >= 0 && fstatat(lfd, name, &ls, AT_SYMLINK_NOFOLLOW) == 0;
	if (is_whiteout(&us))
		return have_l ? ws_walk_old_tree(w, lfd, name, rel, &ls, depth) : 0;
	/* Ignored in the sandbox's tree: not carried, not walked; the base's
	 * side is its own (old_tree checks it by its own type). */
	if (ws_ignore_match(w->ig, rel, S_ISDIR(us.st_mode)))
		return have_l ? ws_walk_old_tree(w, lfd, name, rel, &ls, depth) : 0;
	if (S_ISDIR(us.st_mode))
		return upper_dir(w, ufd, lfd, name, rel, &ls, have_l, depth);
	if (!S_ISREG(us.st_mode) && !S_ISLNK(us.st_mode)) {
		/* A base special file copied up (chmod, touch) is no change a
		 * bundle could name; what else was there is gone all the same. */
		if (have_l && ws_is_special(&ls))
			return 0;
		if (have_l && (rc = ws_walk_old_tree(w, lfd, name, rel, &ls, depth)) < 0)
			return rc;
		return ws_walk_skip(w, rel, &us);
	}
	/* A symlink is carried as git does: its target is its content,
	 * read with readlinkat, never followed (read_side). */
	if (have_l && (rc = ws_walk_old_tree(w, lfd, name, rel, &ls, depth)) < 0)
		return rc;
	return ws_walk_push(w, rel, true, &us);
}

static int walk_upper(struct walk *w, int ufd, int lfd, const char *prefix, int depth)
{
	int fd = dup(ufd), rc = 0;
	DIR *d;
	struct dirent *de;

	if (depth > MAX_DEPTH)
		return ws_walk_too_deep(w, prefix);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return cl_fail_errno(w->err, "reading workspace directory %s", *prefix ? prefix : ".");
	}
	/* A dup shares the directory offset: start at the top whoever read it. */
	rewinddir(d);
	while (rc == 0 && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    !(depth == 0 && w->skip && !strcmp(de->d_name, w->skip)))
			rc = upper_entry(w, dirfd(d), lfd, de->d_name, prefix, depth);
	closedir(d);
	return rc;
}

/* Path order; for one path its old side first. */
static int ent_cmp(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : (int)x->is_new - (int)y->is_new;
}

/* The content of one side, read beneath its root without following a
 * symlink anywhere; a symlink's content is its target (as in git). */
static int read_side(int root, const struct ent *e, struct ws_side *s, char **buf, enum ws_fail *why,
                     cl_error *err)
{
	cl_autoclose int fd = -1;
	char v[8];
	size_t len = 0;
	int rc;

	*buf = NULL;
	if (e->link) {
		char *t = malloc(PATH_MAX);
		ssize_t n;
		cl_autoclose int dfd = -1;
		const char *slash = strrchr(e->path, '/');
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - e->path) : 0, e->path);
		dfd = cl_open_beneath(root, dir, O_PATH | O_DIRECTORY);
		if (!t || dfd < 0 || (n = readlinkat(dfd, slash ? slash + 1 : e->path, t, PATH_MAX)) < 0) {
			free(t);
			return cl_fail(err, dfd < 0 ? -dfd : errno, "reading symlink %s", e->path);
		}
		*buf = t;
		*s = (struct ws_side){.present = true, .link = true, .data = t, .len = (size_t)n};
		return 0;
	}
	fd = cl_open_beneath(root, e->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return cl_fail(err, -fd, "opening workspace file %s", e->path);
	if (ovl_mark(fd, "metacopy", v, sizeof(v))) {
		*why = WS_FAIL_UNSUPPORTED;
		return cl_fail(err, 0, "workspace file %s is an overlay metacopy; no bundle was written", e->path);
	}
	/* Refused by its length before a byte is read: a sparse file's holes
	 * would be read (and carried) as zeros. */
	struct stat st;
	if (fstat(fd, &st) < 0)
		return cl_fail_errno(err, "reading workspace file %s", e->path);
	rc = (uint64_t)st.st_size > WS_MAX_BUNDLE_BYTES ? -EFBIG : cl_read_all(fd, WS_MAX_BUNDLE_BYTES, buf, &len);
	if (rc == -EFBIG) {
		*why = WS_FAIL_LIMIT;
		return cl_fail(err, 0, "workspace file %s is larger than the 100 MiB limit of a diff bundle; "
		               "no bundle was written", e->path);
	}
	if (rc < 0)
		return cl_fail(err, -rc, "reading workspace file %s", e->path);
	*s = (struct ws_side){.present = true, .exec = e->exec, .data = *buf, .len = len};
	return 0;
}

struct emit {
	json_t *patches;
	uint64_t bytes;
};

static int emit(struct emit *o, const char *path, const struct ws_side *old, const struct ws_side *nw,
                enum ws_fail *why, cl_error *err)
{
	bool same;
	json_t *p = ws_patch_make(path, old, nw, &same, err), *bc;

	if (!p)
		return same ? 0 : cl_error_code(err);
	o->bytes += strlen(json_string_value(json_object_get(p, "diff"))) + strlen(path) + 64;
	if ((bc = json_object_get(p, "binaryContent")))
		o->bytes += strlen(json_string_value(bc));
	json_array_append_new(o->patches, p);
	if (json_array_size(o->patches) > WS_MAX_PATCHES || o->bytes > WS_MAX_BUNDLE_BYTES) {
		*why = WS_FAIL_LIMIT;
		return cl_fail(err, 0, "the workspace diff has more than %s, the limit of a diff bundle; "
		               "no bundle was written", json_array_size(o->patches) > WS_MAX_PATCHES
		               ? "1000 patches" : "100 MiB");
	}
	return 0;
}

/* old and new of one path: one modify when both are regular files,
 * else a delete and an add (a type change), the delete first. */
static int emit_pair(struct emit *o, int lower, int upper, const struct ent *old, const struct ent *nw,
                     enum ws_fail *why, cl_error *err)
{
	struct ws_side so = {0}, sn = {0}, none = {0};
	cl_autofree char *bo = NULL;
	cl_autofree char *bn = NULL;
	int rc;

	/* bo and bn are cl_autofree: the analyzer does not follow cleanup
	 * attributes, and takes every return below for a leak. */
	/* NOLINTBEGIN(clang-analyzer-unix.Malloc) */
	if (old && (rc = read_side(lower, old, &so, &bo, why, err)) < 0)
		return rc;
	if (nw && (rc = read_side(upper, nw, &sn, &bn, why, err)) < 0)
		return rc;
	/* A link is never modified in place: a changed target or a type
	 * change is a delete and an add (apply writes a link only whole). */
	if (old && nw && (old->link || nw->link)) {
		if (old->link == nw->link && so.len == sn.len && !memcmp(so.data, sn.data, so.len))
			return 0;
		if ((rc = emit(o, old->path, &so, &none, why, err)) < 0)
			return rc;
		return emit(o, nw->path, &none, &sn, why, err);
	}
	return emit(o, old ? old->path : nw->path, old ? &so : &none, nw ? &sn : &none, why, err);
	/* NOLINTEND(clang-analyzer-unix.Malloc) */
}

void ws_skipped_print(const char *what, const json_t *skipped)
{
	size_t i;
	json_t *e;

	json_array_foreach(skipped, i, e)
		fprintf(stderr, "cloister: %s: left %s out of the diff: a %s, which a diff bundle does "
		        "not carry\n", what, json_string_value(json_object_get(e, "path")),
		        json_string_value(json_object_get(e, "type")));
}

int ws_capture(int lower_fd, int upper_fd, bool copy, const char *skip, bool git_ignore, uint64_t seq,
               json_t **bundle, json_t **skipped, enum ws_fail *why, cl_error *err)
{
	struct walk w = {.why = WS_FAIL_IO, .skip = skip, .skipped = json_array(), .err = err};
	struct emit o = {.patches = json_array()};
	char ref[72];
	int rc;

	*bundle = NULL;
	*skipped = w.skipped;
	*why = WS_FAIL_IO;
	if (!o.patches || !w.skipped)
		return cl_fail(err, ENOMEM, "building the diff bundle");
	if ((rc = ws_dl_load(err)) < 0 || (git_ignore && (rc = ws_ignore_open(&w.ig, lower_fd, err)) < 0))
		goto out;
	/* baseRef first: its walk of the base reads every .gitignore the
	 * walks below match against (those of ignored dirs never count). */
	if ((rc = ws_base_ref(lower_fd, skip, w.ig, ref, err)) < 0)
		goto out;
	rc = copy ? ws_walk_copy(&w, upper_fd, lower_fd, "", 0) : walk_upper(&w, upper_fd, lower_fd, "", 0);
	*why = w.why;
	if (rc < 0)
		goto out;
	if (w.n)
		qsort(w.v, w.n, sizeof(*w.v), ent_cmp);
	for (size_t i = 0; rc == 0 && i < w.n; i++) {
		const struct ent *a = &w.v[i], *b = i + 1 < w.n ? &w.v[i + 1] : NULL;
		bool pair = b && !a->is_new && b->is_new && strcmp(a->path, b->path) == 0;
		rc = emit_pair(&o, lower_fd, upper_fd, a->is_new ? NULL : a,
		               a->is_new ? a : pair ? b : NULL, why, err);
		i += pair;
	}
	if (rc == 0 && !(*bundle = json_pack("{s:I,s:s,s:O}", "seq", (json_int_t)seq, "baseRef", ref,
	                                     "patches", o.patches)))
		rc = cl_fail(err, ENOMEM, "building the diff bundle");
out:
	for (size_t i = 0; i < w.n; i++)
		free(w.v[i].path);
	free(w.v);
	ws_ignore_free(w.ig);
	json_decref(o.patches);
	return rc;
}
