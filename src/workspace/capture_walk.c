/* The capture walkers' shared half (capture.c: an overlay's upper dir;
 * capture_copy.c: a whole copy): the list of changed sides, names checked
 * for what a bundle cannot carry, a lower tree listed as deleted. */
#define _GNU_SOURCE
#include "src/workspace/capture_walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/error.h"
#include "src/workspace/capture.h"
#include "src/workspace/ignore.h"
#include "src/workspace/patch.h"
#include "src/workspace/pathq.h"

int ws_walk_push(struct walk *w, const char *path, bool is_new, const struct stat *st)
{
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		struct ent *v = realloc(w->v, cap * sizeof(*v));
		if (!v)
			return cl_fail(w->err, ENOMEM, "collecting workspace changes");
		w->v = v;
		w->cap = cap;
	}
	/* More sides than twice the patch limit cannot fit in a bundle. */
	if (w->n > 2 * WS_MAX_PATCHES + 2) {
		w->why = WS_FAIL_LIMIT;
		return cl_fail(w->err, 0, "the workspace changed more than %d files, the limit of a diff "
		               "bundle; no bundle was written", WS_MAX_PATCHES);
	}
	w->v[w->n] = (struct ent){.path = strdup(path), .is_new = is_new,
	                          .exec = (st->st_mode & S_IXUSR) != 0, .link = S_ISLNK(st->st_mode)};
	if (!w->v[w->n].path)
		return cl_fail(w->err, ENOMEM, "collecting workspace changes");
	w->n++;
	return 0;
}

/* Repository metadata is never carried (git apply refuses it too): an
 * accepted bundle could otherwise plant hooks or config on the host. */
bool ws_is_git_dir(const char *name)
{
	return strcasecmp(name, ".git") == 0;
}

int ws_walk_join(char *out, size_t len, const char *prefix, const char *name, cl_error *err)
{
	if ((size_t)snprintf(out, len, "%s%s%s", prefix, *prefix ? "/" : "", name) >= len)
		return cl_fail(err, ENAMETOOLONG, "workspace path %s/%s", prefix, name);
	return 0;
}

int ws_walk_unsupported(struct walk *w, const char *rel, const char *what)
{
	w->why = WS_FAIL_UNSUPPORTED;
	return cl_fail(w->err, 0, "workspace path %s is %s, which a diff bundle does not carry "
	               "(docs/workspaces.md, \"Symlinks and special files\"); no bundle was written",
	               rel, what);
}

int ws_walk_too_deep(struct walk *w, const char *rel)
{
	size_t n = strlen(rel);

	/* The path's end only: 256 levels of it fill a screen. */
	w->why = WS_FAIL_LIMIT;
	return cl_fail(w->err, 0, "workspace tree at %s%s is more than %d directories deep, the limit of a "
	               "diff capture; no bundle was written", n > 64 ? "..." : "", n > 64 ? rel + n - 64 : rel,
	               MAX_DEPTH);
}

bool ws_is_special(const struct stat *st)
{
	return !S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) && !S_ISLNK(st->st_mode);
}

static const char *special_type(mode_t m)
{
	return S_ISFIFO(m) ? "fifo" : S_ISSOCK(m) ? "socket" : S_ISCHR(m) ? "character device"
	       : S_ISBLK(m) ? "block device" : "special file";
}

/* A special file has no content a patch could carry (git skips them
 * too): leaving it out keeps the rest of the run's work. */
int ws_walk_skip(struct walk *w, const char *rel, const struct stat *st)
{
	cl_autofree char *path = ws_path_encode(rel);   /* the bundle's form of a name */

	if (!path || json_array_append_new(w->skipped, json_pack("{s:s,s:s}", "path", path, "type",
	                                                         special_type(st->st_mode))) < 0)
		return cl_fail(w->err, ENOMEM, "collecting workspace changes");
	return 0;
}

/* Every file below the lower entry name (or the entry itself) as deleted. */
int ws_walk_old_tree(struct walk *w, int lfd, const char *name, const char *rel, const struct stat *st,
                    int depth)
{
	DIR *d;
	struct dirent *de;
	int fd, rc = 0;

	/* An ignored path is neither carried nor walked. */
	if (ws_ignore_match(w->ig, rel, S_ISDIR(st->st_mode)))
		return 0;
	if (S_ISREG(st->st_mode) || S_ISLNK(st->st_mode))
		return ws_walk_push(w, rel, false, st);
	if (!S_ISDIR(st->st_mode))
		return ws_walk_skip(w, rel, st);
	if (depth > MAX_DEPTH)
		return ws_walk_too_deep(w, rel);
	fd = openat(lfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return cl_fail_errno(w->err, "reading workspace directory %s", rel);
	}
	/* A dup shares the directory offset: start at the top whoever read it. */
	rewinddir(d);
	while (rc == 0 && (de = readdir(d))) {
		char sub[PATH_MAX];
		struct stat s;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || ws_is_git_dir(de->d_name))
			continue;
		if ((rc = ws_walk_join(sub, sizeof(sub), rel, de->d_name, w->err)) < 0)
			break;
		if (fstatat(dirfd(d), de->d_name, &s, AT_SYMLINK_NOFOLLOW) < 0)
			rc = cl_fail_errno(w->err, "reading %s", sub);
		else
			rc = ws_walk_old_tree(w, dirfd(d), de->d_name, sub, &s, depth + 1);
	}
	closedir(d);
	return rc;
}
