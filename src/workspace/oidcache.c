/* The blob id cache file: <state>/oidcache/<sha256 of the tree's path>,
 * records "dev ino size mtime.ns ctime.ns mode oid path\0". Read whole,
 * looked up by path in a hash table, rewritten whole when it changed.
 * Only the caller can write it (the state dir is 0700 and never visible
 * in a sandbox); a malformed file is ignored, never trusted in part. */
#define _GNU_SOURCE
#include "src/workspace/oidcache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/fdio.h"
#include "src/workspace/state.h"
#include "src/workspace/wsdl.h"

struct ws_oid_ent {
	unsigned long long dev, ino, mode;
	long long size, ms, mns, cs, cns;
	char oid[WS_OID_HEX + 1];
	char *path;
};

static size_t hash(const char *s)
{
	size_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static size_t *find(const struct ws_oidcache *c, const char *path)
{
	size_t i;

	if (!c->n_slots)
		return NULL;
	for (i = hash(path) & (c->n_slots - 1);; i = (i + 1) & (c->n_slots - 1))
		if (c->slots[i] == (size_t)-1 || !strcmp(c->v[c->slots[i]].path, path))
			return &c->slots[i];
}

static int rehash(struct ws_oidcache *c)
{
	size_t n = 1024;

	while (n < 2 * (c->n + 1))
		n *= 2;
	free(c->slots);
	if (!(c->slots = malloc(n * sizeof(*c->slots))))
		return -1;
	memset(c->slots, 0xff, n * sizeof(*c->slots));
	c->n_slots = n;
	for (size_t k = 0; k < c->n; k++)
		*find(c, c->v[k].path) = k;
	return 0;
}

static int add(struct ws_oidcache *c, const struct ws_oid_ent *e)
{
	size_t *slot;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		struct ws_oid_ent *v = realloc(c->v, cap * sizeof(*v));
		if (!v)
			return -1;
		c->v = v;
		c->cap = cap;
	}
	if (2 * (c->n + 1) > c->n_slots && rehash(c) < 0)
		return -1;
	slot = find(c, e->path);
	if (*slot != (size_t)-1) {   /* replaced */
		free(c->v[*slot].path);
		c->v[*slot] = *e;
		return 0;
	}
	c->v[c->n] = *e;
	*slot = c->n++;
	return 0;
}

static void drop_all(struct ws_oidcache *c)
{
	for (size_t k = 0; k < c->n; k++)
		free(c->v[k].path);
	free(c->v);
	free(c->slots);
	c->v = NULL;
	c->slots = NULL;
	c->n = c->cap = c->n_slots = 0;
}

/* An unsigned number in base 10 or 8 that ends with the byte stop; the
 * byte after stop, or NULL (no digit, overflow, any other byte). */
static const char *unum(const char *p, unsigned base, char stop, unsigned long long *v)
{
	const char *start = p;
	unsigned long long x = 0;

	for (; *p >= '0' && (unsigned)(*p - '0') < base; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (x > (ULLONG_MAX - d) / base)
			return NULL;
		x = x * base + d;
	}
	if (p == start || *p != stop)
		return NULL;
	*v = x;
	return p + 1;
}

/* The same for a decimal that may start with '-' (a time before 1970). */
static const char *snum(const char *p, char stop, long long *v)
{
	bool neg = *p == '-';
	unsigned long long u;

	if (!(p = unum(p + neg, 10, stop, &u)) || u > (unsigned long long)LLONG_MAX)
		return NULL;
	*v = neg ? -(long long)u : (long long)u;
	return p;
}

/* One record, "dev ino size ms.mns cs.cns mode oid path" as close()
 * writes it, NUL-terminated; fills e but its path (returned, inside the
 * record), or NULL if anything differs from that shape. A hand parser:
 * sscanf took half the time of a capture on a 20k-file tree. */
static const char *parse_rec(const char *p, struct ws_oid_ent *e)
{
	if (!(p = unum(p, 10, ' ', &e->dev)) || !(p = unum(p, 10, ' ', &e->ino)) ||
	    !(p = snum(p, ' ', &e->size)) || !(p = snum(p, '.', &e->ms)) || !(p = snum(p, ' ', &e->mns)) ||
	    !(p = snum(p, '.', &e->cs)) || !(p = snum(p, ' ', &e->cns)) || !(p = unum(p, 8, ' ', &e->mode)))
		return NULL;
	for (int i = 0; i < WS_OID_HEX; i++, p++) {
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return NULL;
		e->oid[i] = *p;
	}
	e->oid[WS_OID_HEX] = '\0';
	return *p == ' ' && p[1] ? p + 1 : NULL;
}

static void load(struct ws_oidcache *c)
{
	cl_autoclose int fd = openat(c->dir_fd, c->key, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	cl_autofree char *text = NULL;
	size_t len;

	if (fd < 0 || cl_read_all(fd, 256u << 20, &text, &len) < 0)
		return;
	for (size_t at = 0; at < len;) {
		struct ws_oid_ent e = {0};
		const char *end = memchr(text + at, '\0', len - at), *path;
		/* Our own cache file, in the caller's state dir (no sandbox can
		 * write it); a damaged entry fails the match and drops the cache. */
		if (!end || !(path = parse_rec(text + at, &e)) || !(e.path = strdup(path)) || add(c, &e) < 0) {
			free(e.path);
			drop_all(c);   /* all or nothing */
			return;
		}
		at = (size_t)(end - text) + 1;
	}
}

void ws_oidcache_open(struct ws_oidcache *c, int dir_fd, const char *skip)
{
	char link[64], real[4096], root[4096], buf[4200];
	unsigned char h[32];
	cl_error err = {0};
	ssize_t n;
	int sfd;

	memset(c, 0, sizeof(*c));
	c->dir_fd = -1;
	clock_gettime(CLOCK_REALTIME, &c->now);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", dir_fd);
	if ((n = readlink(link, real, sizeof(real) - 1)) <= 0 || ws_state_root(root, sizeof(root), &err) < 0)
		return;
	real[n] = '\0';
	n = snprintf(buf, sizeof(buf), "%s%c%s", real, 0, skip ? skip : "");
	ws_sha256(buf, (size_t)n, h);
	for (int i = 0; i < 32; i++)
		snprintf(c->key + 2 * i, sizeof(c->key) - 2 * (size_t)i, "%02x", h[i]);
	/* The state root exists (the workspace run dir is in it). */
	sfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return;
	if (mkdirat(sfd, "oidcache", 0700) < 0 && errno != EEXIST) {
		close(sfd);
		return;
	}
	c->dir_fd = openat(sfd, "oidcache", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(sfd);
	if (c->dir_fd >= 0)
		load(c);
}

const char *ws_oidcache_get(const struct ws_oidcache *c, const char *path, const struct stat *st)
{
	size_t *slot = find(c, path);
	const struct ws_oid_ent *e;

	if (!slot || *slot == (size_t)-1)
		return NULL;
	e = &c->v[*slot];
	return e->dev == (unsigned long long)st->st_dev && e->ino == (unsigned long long)st->st_ino &&
	       e->size == (long long)st->st_size && e->mode == (unsigned long long)st->st_mode &&
	       e->ms == (long long)st->st_mtim.tv_sec && e->mns == st->st_mtim.tv_nsec &&
	       e->cs == (long long)st->st_ctim.tv_sec && e->cns == st->st_ctim.tv_nsec ? e->oid : NULL;
}

void ws_oidcache_put(struct ws_oidcache *c, const char *path, const struct stat *st,
                     const char oid[WS_OID_HEX + 1])
{
	struct ws_oid_ent e = {
		.dev = st->st_dev, .ino = st->st_ino, .mode = st->st_mode, .size = st->st_size,
		.ms = st->st_mtim.tv_sec, .mns = st->st_mtim.tv_nsec, .cs = st->st_ctim.tv_sec,
		.cns = st->st_ctim.tv_nsec,
	};

	/* Racy: changed just now, a further change in the same tick would
	 * leave the same stat. Hashed again next time instead. */
	if (c->dir_fd < 0 || st->st_ctim.tv_sec >= c->now.tv_sec - 2 || st->st_mtim.tv_sec >= c->now.tv_sec - 2)
		return;
	memcpy(e.oid, oid, sizeof(e.oid));
	if (!(e.path = strdup(path)) || add(c, &e) < 0) {
		free(e.path);
		return;
	}
	c->dirty = true;
}

void ws_oidcache_close(struct ws_oidcache *c)
{
	char tmp[96];
	FILE *f;
	int fd;

	if (c->dir_fd >= 0 && c->dirty) {
		snprintf(tmp, sizeof(tmp), ".%s.tmp", c->key);
		unlinkat(c->dir_fd, tmp, 0);
		fd = openat(c->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 && (f = fdopen(fd, "w"))) {
			bool ok = true;
			for (size_t k = 0; ok && k < c->n; k++) {
				const struct ws_oid_ent *e = &c->v[k];
				ok = fprintf(f, "%llu %llu %lld %lld.%lld %lld.%lld %llo %s %s", e->dev, e->ino, e->size,
				             e->ms, e->mns, e->cs, e->cns, e->mode, e->oid, e->path) > 0 &&
				     fputc('\0', f) != EOF;
			}
			ok = fclose(f) == 0 && ok;
			if (!ok || renameat(c->dir_fd, tmp, c->dir_fd, c->key) < 0)
				unlinkat(c->dir_fd, tmp, 0);
		} else if (fd >= 0) {
			close(fd);
		}
	}
	if (c->dir_fd >= 0)
		close(c->dir_fd);
	drop_all(c);
}
