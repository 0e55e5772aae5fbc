/* baseRef: one SHA-256 over the base tree, so a bundle names the tree it
 * was made against. Each regular file and symlink contributes
 * "<mode> <path>\0<git blob id>\n", depth first, names sorted bytewise. */
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
#include "src/util/fdio.h"
#include "src/workspace/capture.h"
#include "src/workspace/extents.h"
#include "src/workspace/ignore.h"
#include "src/workspace/oidcache.h"
#include "src/workspace/patch.h"
#include "src/workspace/wsdl.h"

struct acc {
	char *s;
	size_t len, cap;
	struct ws_oidcache cache;
	struct ws_ignore *ig;
};

static int acc_add(struct acc *a, const char *mode, const char *path, const char *oid, cl_error *err)
{
	size_t ml = strlen(mode), pl = strlen(path), need = ml + pl + WS_OID_HEX + 3;

	if (a->len + need > a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 1 << 16;
		while (cap < a->len + need)
			cap *= 2;
		char *p = realloc(a->s, cap);
		if (!p)
			return cl_fail(err, ENOMEM, "hashing the base tree");
		a->s = p;
		a->cap = cap;
	}
	/* "<mode> <path>\0<oid>\n", copied (snprintf was a seventh of the
	 * time on a 20k-file tree); the space was made for all of it above. */
	char *q = mempcpy(a->s + a->len, mode, ml);
	*q++ = ' ';
	q = mempcpy(q, path, pl + 1);   /* keeps the NUL */
	q = mempcpy(q, oid, WS_OID_HEX);
	*q = '\n';
	a->len += need;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int file_id(int dfd, const char *name, const struct stat *st, char oid[WS_OID_HEX + 1],
                   cl_error *err, const char *rel)
{
	cl_autofree char *buf = NULL;
	size_t len = 0;
	int rc;

	if (S_ISLNK(st->st_mode)) {
		char t[PATH_MAX];
		ssize_t n = readlinkat(dfd, name, t, sizeof(t));
		if (n < 0)
			return cl_fail_errno(err, "reading symlink %s", rel);
		ws_blob_id(t, (size_t)n, oid);
		return 0;
	}
	cl_autoclose int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return cl_fail_errno(err, "reading %s", rel);
	/* Beyond what a bundle can carry, a file is named by its data, not
	 * its git blob id: a 15 TiB sparse file took hours of hashing zeros
	 * on every --diff-out run (docs/workspaces.md, "baseRef"). */
	if ((uint64_t)st->st_size > WS_MAX_BUNDLE_BYTES)
		return ws_sparse_id(fd, st->st_size, oid, rel, err);
	/* Big files are hashed streaming, by the fd just opened (no name is
	 * resolved again); small ones read at once. */
	if (st->st_size > (1 << 20)) {
		char path[64];
		git_oid id;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (ws_git.odb_hashfile(&id, path, GIT_OBJECT_BLOB) < 0)
			return cl_fail(err, EIO, "hashing %s", rel);
		ws_git.oid_fmt(oid, &id);
		oid[WS_OID_HEX] = '\0';
		return 0;
	}
	if ((rc = cl_read_all(fd, (size_t)1 << 21, &buf, &len)) < 0)
		return cl_fail(err, -rc, "reading %s", rel);
	ws_blob_id(buf, len, oid);
	return 0;
}

static int walk(struct acc *a, int dfd, const char *prefix, int depth, const char *skip, cl_error *err);

static int entry(struct acc *a, int dfd, const char *name, const char *prefix, int depth, cl_error *err)
{
	char rel[PATH_MAX], oid[WS_OID_HEX + 1];
	size_t pl = strlen(prefix), nl = strlen(name), sep = pl ? 1 : 0;
	struct stat st;
	int rc;

	/* prefix/name joined by hand: snprintf here was a tenth of the time
	 * of a capture on a 20k-file tree. */
	if (pl + sep + nl >= sizeof(rel))
		return cl_fail(err, ENAMETOOLONG, "base tree path %s/%s", prefix, name);
	memcpy(rel, prefix, pl);
	rel[pl] = '/';   /* overwritten by name when there is no prefix */
	memcpy(rel + pl + sep, name, nl + 1);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return cl_fail_errno(err, "reading %s", rel);
	/* Ignored: not in baseRef, and an ignored dir is not opened. */
	if (ws_ignore_match(a->ig, rel, S_ISDIR(st.st_mode)))
		return 0;
	if (S_ISDIR(st.st_mode)) {
		int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			return cl_fail_errno(err, "reading directory %s", rel);
		rc = walk(a, sub, rel, depth + 1, NULL, err);
		close(sub);
		return rc;
	}
	if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return 0;   /* sockets, fifos, devices: no content to name */
	const char *known = S_ISREG(st.st_mode) ? ws_oidcache_get(&a->cache, rel, &st) : NULL;
	if (known)
		memcpy(oid, known, sizeof(oid));
	else if ((rc = file_id(dfd, name, &st, oid, err, rel)) < 0)
		return rc;
	else if (S_ISREG(st.st_mode))
		ws_oidcache_put(&a->cache, rel, &st, oid);
	return acc_add(a, S_ISLNK(st.st_mode) ? "120000" : st.st_mode & S_IXUSR ? "100755" : "100644",
	               rel, oid, err);
}

static int walk(struct acc *a, int dfd, const char *prefix, int depth, const char *skip, cl_error *err)
{
	char **names = NULL;
	size_t n = 0, cap = 0;
	int fd, rc = 0;
	DIR *d;
	struct dirent *de;

	if (depth > 256)
		return cl_fail(err, 0, "base tree at %s%s is more than 256 directories deep, the limit of its "
		               "baseRef", strlen(prefix) > 64 ? "..." : "",
		               strlen(prefix) > 64 ? prefix + strlen(prefix) - 64 : prefix);
	fd = dup(dfd);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return cl_fail_errno(err, "reading directory %s", *prefix ? prefix : ".");
	}
	/* This directory's rules before any of its entries is matched. */
	if (a->ig && (rc = ws_ignore_load_dir(a->ig, dfd, prefix, err)) < 0) {
		closedir(d);
		return rc;
	}
	/* A dup shares the directory offset: start at the top whoever read it. */
	rewinddir(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || (skip && !strcmp(de->d_name, skip)) ||
		    ws_is_git_dir(de->d_name))
			continue;
		if (n == cap) {
			char **v = realloc(names, (cap = cap ? cap * 2 : 32) * sizeof(*v));
			if (!v) {
				rc = cl_fail(err, ENOMEM, "hashing the base tree");
				break;
			}
			names = v;
		}
		if (!(names[n] = strdup(de->d_name))) {
			rc = cl_fail(err, ENOMEM, "hashing the base tree");
			break;
		}
		n++;
	}
	if (rc == 0 && n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = entry(a, dirfd(d), names[i], prefix, depth, err);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

int ws_base_ref(int dir_fd, const char *skip, struct ws_ignore *ig, char out[72], cl_error *err)
{
	struct acc a = {.ig = ig};
	unsigned char h[32];
	int rc;

	if ((rc = ws_dl_load(err)) < 0)
		return rc;
	ws_oidcache_open(&a.cache, dir_fd, skip);
	rc = walk(&a, dir_fd, "", 0, skip, err);
	ws_oidcache_close(&a.cache);
	if (rc == 0) {
		ws_sha256(a.s ? a.s : "", a.len, h);
		int k = snprintf(out, 72, "sha256:");
		for (int i = 0; i < 32; i++)
			snprintf(out + k + 2 * i, 72 - (size_t)(k + 2 * i), "%02x", h[i]);
	}
	free(a.s);
	return rc;
}
