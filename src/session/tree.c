/* The cp -r stream: records of (type, mode, name, size) followed by the
 * name and size bytes (file contents or link target); a directory's
 * entries come between its 'd' and 'u' records, 'e' ends the stream. */
#define _GNU_SOURCE
#include "src/session/tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util/fsafe.h"

enum { R_DIR = 'd', R_UP = 'u', R_FILE = 'f', R_LINK = 'l', R_END = 'e' };

struct rec {
	uint8_t type;
	uint32_t mode;
	uint16_t name_len;
	uint64_t size;
};
#define REC_LEN 15

struct walk {
	int fd;               /* the stream */
	uint64_t bytes, entries;
	char path[PATH_MAX];  /* of the entry at hand, for messages */
	char buf[65536];
};

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* 1 when n bytes came, 0 at EOF before any, -1 on an error or a short read. */
static int read_all(int fd, void *p, size_t n)
{
	char *c = p;
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, c + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return got ? (errno = EPIPE, -1) : 0;
		got += (size_t)r;
	}
	return 1;
}

/* n bytes into the stream; a failed write names the entry at hand (EPIPE:
 * the session stopped reading). Every write of the sender goes here. */
static int send_bytes(struct walk *w, const void *p, size_t n, cl_error *err)
{
	return write_all(w->fd, p, n) < 0 ? cl_fail_errno(err, "%s: sending", w->path) : 0;
}

static int put_rec(struct walk *w, int type, unsigned mode, const char *name, uint64_t size,
                   cl_error *err)
{
	unsigned char h[REC_LEN];
	size_t nl = name ? strlen(name) : 0;

	h[0] = (unsigned char)type;
	for (int i = 0; i < 4; i++)
		h[1 + i] = (unsigned char)(mode >> (8 * i));
	h[5] = (unsigned char)nl;
	h[6] = (unsigned char)(nl >> 8);
	for (int i = 0; i < 8; i++)
		h[7 + i] = (unsigned char)(size >> (8 * i));
	if (send_bytes(w, h, sizeof(h), err) < 0 || (nl && send_bytes(w, name, nl, err) < 0))
		return -1;
	return 0;
}

static int get_rec(struct walk *w, struct rec *r)
{
	unsigned char h[REC_LEN];
	int rc = read_all(w->fd, h, sizeof(h));

	if (rc <= 0)
		return -1;
	r->type = h[0];
	r->mode = 0;
	for (int i = 0; i < 4; i++)
		r->mode |= (uint32_t)h[1 + i] << (8 * i);
	r->name_len = (uint16_t)(h[5] | h[6] << 8);
	r->size = 0;
	for (int i = 0; i < 8; i++)
		r->size |= (uint64_t)h[7 + i] << (8 * i);
	return 0;
}

/* Appends name to w->path for messages (truncated quietly: only shown). */
static size_t path_push(struct walk *w, const char *name)
{
	size_t len = strlen(w->path);

	snprintf(w->path + len, sizeof(w->path) - len, "/%s", name);
	return len;
}

static int count(struct walk *w, uint64_t bytes, cl_error *err)
{
	if (++w->entries > SS_TREE_MAX_ENTRIES)
		return cl_fail(err, 0, "%s: more than %d entries in one copy", w->path,
		               SS_TREE_MAX_ENTRIES);
	if (bytes > SS_TREE_MAX_BYTES || w->bytes + bytes > SS_TREE_MAX_BYTES)
		return cl_fail(err, 0, "%s: more than %llu bytes in one copy", w->path,
		               (unsigned long long)SS_TREE_MAX_BYTES);
	w->bytes += bytes;
	return 0;
}

/* Exactly size bytes of fd: a file that shrank while being sent fails
 * (the stream's framing needs the size announced). */
static int send_file(struct walk *w, int fd, uint64_t size, cl_error *err)
{
	while (size) {
		ssize_t n = read(fd, w->buf, size < sizeof(w->buf) ? (size_t)size : sizeof(w->buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return cl_fail(err, n < 0 ? errno : 0, "%s: %s", w->path,
			               n < 0 ? "reading" : "changed size while being copied");
		if (send_bytes(w, w->buf, (size_t)n, err) < 0)
			return -1;
		size -= (uint64_t)n;
	}
	return 0;
}

static int send_dir(struct walk *w, int dfd, int depth, cl_error *err);

static int send_entry(struct walk *w, int dfd, const char *name, int depth, cl_error *err)
{
	struct stat st;
	char target[PATH_MAX];
	ssize_t n;
	int fd, rc;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return cl_fail_errno(err, "%s", w->path);
	if (S_ISLNK(st.st_mode)) {
		n = readlinkat(dfd, name, target, sizeof(target));
		if (n < 0 || (size_t)n >= sizeof(target))
			return cl_fail(err, n < 0 ? errno : ENAMETOOLONG, "%s: reading the link", w->path);
		if (count(w, 0, err) < 0)
			return -1;
		if (put_rec(w, R_LINK, 0777, name, (uint64_t)n, err) < 0)
			return -1;
		return send_bytes(w, target, (size_t)n, err);
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return cl_fail(err, 0, "%s: not a regular file, directory or symbolic link (devices, "
		               "fifos and sockets are not copied)", w->path);
	/* Opened without following and checked again: the entry may have
	 * been swapped for something else since fstatat. */
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
	            (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
	if (fd < 0)
		return cl_fail_errno(err, "%s", w->path);
	if (fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) {
		close(fd);
		return cl_fail(err, 0, "%s: changed while being copied", w->path);
	}
	if (S_ISDIR(st.st_mode)) {
		rc = count(w, 0, err) < 0 || put_rec(w, R_DIR, st.st_mode & 07777, name, 0, err) < 0 ||
		     send_dir(w, fd, depth + 1, err) < 0 ||
		     put_rec(w, R_UP, st.st_mode & 07777, NULL, 0, err) < 0 ? -1 : 0;
	} else {
		fcntl(fd, F_SETFL, 0);
		rc = count(w, (uint64_t)st.st_size, err) < 0 ||
		     put_rec(w, R_FILE, st.st_mode & 07777, name, (uint64_t)st.st_size, err) < 0 ||
		     send_file(w, fd, (uint64_t)st.st_size, err) < 0 ? -1 : 0;
	}
	close(fd);
	return rc;
}

static int send_dir(struct walk *w, int dfd, int depth, cl_error *err)
{
	struct dirent *e;
	DIR *d;
	int fd, rc = 0;

	if (depth > SS_TREE_MAX_DEPTH)
		return cl_fail(err, 0, "%s: nested deeper than %d directories", w->path,
		               SS_TREE_MAX_DEPTH);
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return cl_fail_errno(err, "%s: listing", w->path);
	}
	while (rc == 0 && (errno = 0, e = readdir(d)) != NULL) {
		size_t len;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		len = path_push(w, e->d_name);
		rc = send_entry(w, dirfd(d), e->d_name, depth, err);
		w->path[len] = '\0';
	}
	if (rc == 0 && errno)
		rc = cl_fail_errno(err, "%s: listing", w->path);
	closedir(d);
	return rc;
}

int ss_tree_send(int dirfd, int out, const char *shown, cl_error *err)
{
	static struct walk w;
	struct stat st;

	memset(&w, 0, sizeof(w));
	w.fd = out;
	snprintf(w.path, sizeof(w.path), "%s", shown);
	if (fstat(dirfd, &st) < 0 || !S_ISDIR(st.st_mode))
		return cl_fail(err, ENOTDIR, "%s", shown);
	/* Its contents, then its own mode in the end record. */
	if (send_dir(&w, dirfd, 0, err) < 0)
		return -1;
	return put_rec(&w, R_END, st.st_mode & 07777, NULL, 0, err);
}

/* ---- receiving ---- */

/* One name of one directory: no "/", no NUL, not "." or "..". */
static int get_name(struct walk *w, const struct rec *r, char name[NAME_MAX + 1], cl_error *err)
{
	if (r->name_len == 0 || r->name_len > NAME_MAX || read_all(w->fd, name, r->name_len) <= 0)
		return cl_fail(err, 0, "malformed copy stream (bad name)");
	name[r->name_len] = '\0';
	if (memchr(name, '/', r->name_len) || strlen(name) != r->name_len || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return cl_fail(err, 0, "malformed copy stream (name '%s')", name);
	return 0;
}

/* No setuid, setgid: the copy's owner is the receiver, not the sender. */
static mode_t safe_mode(uint32_t m)
{
	return (mode_t)(m & 01777);
}

static int recv_file(struct walk *w, int dfd, const char *name, const struct rec *r,
                     cl_error *err)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	uint64_t left = r->size;

	if (fd < 0)
		return cl_fail_errno(err, "%s: creating", w->path);
	while (left) {
		size_t n = left < sizeof(w->buf) ? (size_t)left : sizeof(w->buf);
		if (read_all(w->fd, w->buf, n) <= 0 || write_all(fd, w->buf, n) < 0) {
			close(fd);
			return cl_fail_errno(err, "%s: writing", w->path);
		}
		left -= n;
	}
	if (fchmod(fd, safe_mode(r->mode)) < 0 || close(fd) < 0)
		return cl_fail_errno(err, "%s: writing", w->path);
	return 0;
}

/* Entries into dfd until its 'u' (or, at the top, 'e') record, whose mode
 * goes into *mode. */
static int recv_dir(struct walk *w, int dfd, int depth, uint32_t *mode, cl_error *err)
{
	char name[NAME_MAX + 1], target[PATH_MAX];
	struct rec r = {0};

	if (depth > SS_TREE_MAX_DEPTH)
		return cl_fail(err, 0, "%s: nested deeper than %d directories", w->path,
		               SS_TREE_MAX_DEPTH);
	for (;;) {
		size_t len;
		int rc = 0, fd;
		uint32_t m = 0;   /* set by recv_dir on success (gcc -O3 cannot tell) */
		/* -EPIPE tells the caller the sender stopped: its own error
		 * says why, not ours. */
		if (get_rec(w, &r) < 0) {
			cl_fail(err, 0, "the copy stream ended early (the sending side failed)");
			return -EPIPE;
		}
		if (r.type == (depth ? R_UP : R_END)) {
			*mode = r.mode;
			return 0;
		}
		if (r.type != R_DIR && r.type != R_FILE && r.type != R_LINK)
			return cl_fail(err, 0, "malformed copy stream (record %#x)", r.type);
		if (get_name(w, &r, name, err) < 0)
			return -1;
		len = path_push(w, name);
		if (count(w, r.type == R_FILE ? r.size : 0, err) < 0)
			return -1;
		if (r.type == R_FILE) {
			rc = recv_file(w, dfd, name, &r, err);
		} else if (r.type == R_LINK) {
			if (r.size == 0 || r.size >= sizeof(target) || read_all(w->fd, target, r.size) <= 0)
				return cl_fail(err, 0, "malformed copy stream (link %s)", w->path);
			target[r.size] = '\0';
			if (strlen(target) != r.size)
				return cl_fail(err, 0, "malformed copy stream (link %s)", w->path);
			if (symlinkat(target, dfd, name) < 0)
				rc = cl_fail_errno(err, "%s: creating the link", w->path);
		} else if (mkdirat(dfd, name, 0700) < 0 ||
		           (fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			rc = cl_fail_errno(err, "%s: creating", w->path);
		} else {
			/* Its mode last: a read-only directory still took its files. */
			rc = recv_dir(w, fd, depth + 1, &m, err);
			if (rc == 0 && fchmod(fd, safe_mode(m)) < 0)
				rc = cl_fail_errno(err, "%s", w->path);
			close(fd);
		}
		if (rc < 0)
			return rc;
		w->path[len] = '\0';
	}
}

int ss_tree_recv(int in, int dirfd, cl_error *err)
{
	static struct walk w;
	uint32_t mode = 0;
	int rc;

	memset(&w, 0, sizeof(w));
	w.fd = in;
	if ((rc = recv_dir(&w, dirfd, 0, &mode, err)) < 0)
		return rc;
	if (fchmod(dirfd, safe_mode(mode)) < 0)
		return cl_fail_errno(err, "setting the copy's mode");
	return 0;
}

int ss_tree_mktemp(int parent, char tmp[32], cl_error *err)
{
	unsigned char r[6];
	int fd;

	for (int tries = 0; tries < 100; tries++) {
		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return cl_fail_errno(err, "making a temporary directory name");
		snprintf(tmp, 32, ".cloister-cp.%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4],
		         r[5]);
		if (mkdirat(parent, tmp, 0700) < 0) {
			if (errno == EEXIST)
				continue;
			return cl_fail_errno(err, "creating a temporary directory");
		}
		fd = openat(parent, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return cl_fail_errno(err, "opening the temporary directory");
		return fd;
	}
	return cl_fail(err, EEXIST, "creating a temporary directory");
}

int ss_tree_commit(int parent, const char *tmp, const char *name, const char *shown,
                   cl_error *err)
{
	struct stat st;

	if (renameat2(parent, tmp, parent, name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EEXIST)
		return cl_fail_errno(err, "putting %s in place", shown);
	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return cl_fail_errno(err, "%s", shown);
	if (!S_ISDIR(st.st_mode))
		return cl_fail(err, 0, "%s exists and is not a directory", shown);
	/* One step: the new tree takes the name, the old one the temporary
	 * name, and goes (never followed: cl_remove_tree_at). */
	if (renameat2(parent, tmp, parent, name, RENAME_EXCHANGE) < 0)
		return cl_fail_errno(err, "putting %s in place", shown);
	cl_remove_tree_or_say(parent, tmp, "the replaced tree");
	return 0;
}
