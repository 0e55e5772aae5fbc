/* The host's half of `cloister cp` for single files, and where any copy's
 * ends are on the host. A sandbox can write its --rw directories, so the
 * last name of a source or destination there may be a link or a fifo it
 * planted: no such name is ever followed or opened blocking. The session
 * gets only a pipe of ours, never a host file's fd. */
#define _GNU_SOURCE
#include "src/session/cp_host.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util/fsafe.h"
#include "src/session/client.h"
#include "src/session/tree.h"

/* A path as its directory and last name (trailing slashes dropped: slash
 * says there were some). */
struct split {
	char dir[4096];
	char base[4096];
	bool slash;
};

static int split_path(const char *path, struct split *s, cl_error *err)
{
	size_t len = strlen(path);
	const char *cut;

	if (len == 0 || len >= sizeof(s->dir))
		return cl_fail(err, ENAMETOOLONG, "cp: '%s' is not a path to copy", path);
	s->slash = false;
	while (len > 1 && path[len - 1] == '/') {
		len--;
		s->slash = true;
	}
	memcpy(s->base, path, len);
	s->base[len] = '\0';
	cut = strrchr(s->base, '/');
	if (!cut || len == 1) {
		snprintf(s->dir, sizeof(s->dir), "%s", len == 1 && path[0] == '/' ? "/" : ".");
		if (len == 1 && path[0] == '/')
			s->base[0] = '\0';
		return 0;
	}
	snprintf(s->dir, sizeof(s->dir), "%.*s", cut == s->base ? 1 : (int)(cut - s->base),
	         s->base);
	memmove(s->base, cut + 1, strlen(cut + 1) + 1);
	return 0;
}

/* "", "." and "..": names no sandbox can plant (the caller's own
 * directories), opened as written. */
static bool plain_dir_name(const char *base)
{
	return !base[0] || !strcmp(base, ".") || !strcmp(base, "..");
}

/* base in the directory dir, as the caller wrote dir, never following
 * base: the fd or -errno. */
static int open_last(const struct split *s, const char *whole, int flags)
{
	int parent, fd;

	if (plain_dir_name(s->base)) {
		fd = open(whole, flags | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	parent = open(s->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (parent < 0)
		return -errno;
	fd = cl_open_beneath(parent, s->base, flags);
	close(parent);
	return fd;
}

int ss_cp_src_open(const char *src, bool dir, cl_error *err)
{
	struct split s;
	struct stat st;
	int fd;

	if (split_path(src, &s, err) < 0)
		return -1;
	/* O_NONBLOCK: a fifo opens at once (and is refused below) instead of
	 * waiting for a writer that never comes. */
	fd = open_last(&s, src, dir ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NOCTTY | O_NONBLOCK);
	if (fd == -ELOOP)
		return cl_fail(err, 0, "%s is a symbolic link (cloister cp never follows one on the "
		               "host: name its target)", src);
	if (fd < 0) {
		errno = -fd;
		return cl_fail_errno(err, dir ? "opening the directory %s" : "opening %s", src);
	}
	if (dir)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		if (S_ISDIR(st.st_mode))
			return cl_fail(err, 0, "%s is a directory (cloister cp -r copies directories)",
			               src);
		return cl_fail(err, 0, "%s is not a regular file (a fifo, device or socket: cloister "
		               "cp copies regular files, and reads stdin for -)", src);
	}
	if (fcntl(fd, F_SETFL, 0) < 0) {
		close(fd);
		return cl_fail_errno(err, "opening %s", src);
	}
	return fd;
}

/* Into the directory fd dir under path's name. */
static int into_dir(int dir, const char *path, char *name, size_t size, cl_error *err)
{
	struct split p;

	if (split_path(path, &p, err) < 0) {
		close(dir);
		return -1;
	}
	if (plain_dir_name(p.base) || strlen(p.base) >= size) {
		close(dir);
		return cl_fail(err, 0, "cp: %s: name the file to copy to", path);
	}
	snprintf(name, size, "%s", p.base);
	return dir;
}

int ss_cp_out_target(const char *path, const char *dest, char *name, size_t size,
                     cl_error *err)
{
	struct split s;
	struct stat st;
	int parent, dir;

	if (split_path(dest, &s, err) < 0)
		return -1;
	if (plain_dir_name(s.base)) {
		dir = open(dest, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dir < 0)
			return cl_fail_errno(err, "opening the directory %s", dest);
		return into_dir(dir, path, name, size, err);
	}
	parent = open(s.dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (parent < 0)
		return cl_fail_errno(err, "opening the directory of %s", dest);
	/* Not stat(): a link at dest (planted, in a --rw directory) is not a
	 * directory to copy into; it is a name the copy replaces. */
	if (fstatat(parent, s.base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
		dir = cl_open_beneath(parent, s.base, O_PATH | O_DIRECTORY);
		close(parent);
		if (dir < 0) {
			errno = -dir;
			return cl_fail_errno(err, "opening the directory %s", dest);
		}
		return into_dir(dir, path, name, size, err);
	}
	if (s.slash || strlen(s.base) >= size) {
		close(parent);
		return cl_fail(err, ENOTDIR, "cp: %s: no directory there (a link is never followed)",
		               dest);
	}
	snprintf(name, size, "%s", s.base);
	return parent;
}

/* ===== streaming: from a pipe of the session's, bounded ===== */

/* A new file beside the destination (".cloister-cp.XXXXXX", 0600). */
static int make_temp(int parent, char tmp[32], cl_error *err)
{
	unsigned char r[6];
	int fd;

	for (int tries = 0; tries < 100; tries++) {
		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return cl_fail_errno(err, "making a temporary file name");
		snprintf(tmp, 32, ".cloister-cp.%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4],
		         r[5]);
		fd = openat(parent, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return cl_fail_errno(err, "creating a temporary file");
	}
	return cl_fail(err, EEXIST, "creating a temporary file");
}

static bool all_zero(const char *buf, size_t n)
{
	return n == 0 || (buf[0] == 0 && memcmp(buf, buf + 1, n - 1) == 0);
}

static int write_all(int fd, const char *buf, size_t n)
{
	for (size_t off = 0; off < n;) {
		ssize_t w = write(fd, buf + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

/* The session's stream to out, at most SS_TREE_MAX_BYTES (a sparse file
 * costs the sandbox nothing, its copy is bounded all the same). sparse:
 * out is our new regular file, whose runs of zeros stay holes. */
static int recv_bounded(int in, int out, bool sparse, const char *shown, cl_error *err)
{
	static char buf[65536];
	uint64_t total = 0;
	ssize_t n;

	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cl_fail_errno(err, "reading the copy of %s", shown);
		total += (uint64_t)n;
		if (total > SS_TREE_MAX_BYTES)
			return cl_fail(err, EFBIG, "%s: more than %llu bytes in one copy (the limit of "
			               "cloister cp)", shown, (unsigned long long)SS_TREE_MAX_BYTES);
		if (sparse && all_zero(buf, (size_t)n) ? lseek(out, n, SEEK_CUR) < 0
		    : write_all(out, buf, (size_t)n) < 0)
			return cl_fail_errno(err, "writing the copy of %s", shown);
	}
	if (sparse && ftruncate(out, (off_t)total) < 0)
		return cl_fail_errno(err, "writing the copy of %s", shown);
	return 0;
}

static int reply_error(const struct ss_reply *rep, cl_error *err)
{
	const char *m = rep->msg;

	if (strncmp(m, "cloister: ", 10) == 0)
		m += 10;
	return cl_fail(err, 0, "%s", m[0] ? m : "copy failed");
}

/* Sends b with the pipe's write end, receives into out, reads the reply:
 * our error when the stream broke on our side, else the session's. */
static int get_stream(const char *key, struct ss_buf *b, int out, bool sparse,
                      const char *shown, cl_error *err)
{
	struct ss_reply rep;
	cl_error rerr = {0};
	int sock = ss_connect(key, NULL, err), p[2] = {-1, -1}, got, rc = -1;

	if (sock < 0)
		return -1;
	if (pipe2(p, O_CLOEXEC) < 0) {
		cl_fail_errno(err, "starting the copy");
		goto out;
	}
	if (ss_request(sock, b, &p[1], 1, err) < 0)
		goto out;
	/* The session holds the write end now: EOF once its copy is done. */
	close(p[1]);
	p[1] = -1;
	got = recv_bounded(p[0], out, sparse, shown, &rerr);
	/* Before the reply: a copy over the limit then stops on EPIPE. */
	close(p[0]);
	p[0] = -1;
	if (ss_reply_read(sock, &rep, err) < 0)
		goto out;
	if (got < 0)
		*err = rerr;
	else if (rep.code != 0)
		reply_error(&rep, err);
	else
		rc = 0;
out:
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
	close(sock);
	return rc;
}

int ss_cp_file_out(const char *key, const char *path, const char *dest, cl_error *err)
{
	struct ss_buf b = {0};
	char name[256], tmp[32];
	int parent, fd, rc;
	mode_t um;

	ss_buf_add(&b, 0, "get");
	ss_buf_add(&b, 'P', path);
	if (strcmp(dest, "-") == 0) {
		rc = get_stream(key, &b, 1, false, path, err);
		ss_buf_free(&b);
		return rc;
	}
	parent = ss_cp_out_target(path, dest, name, sizeof(name), err);
	if (parent < 0) {
		ss_buf_free(&b);
		return -1;
	}
	fd = make_temp(parent, tmp, err);
	rc = fd < 0 ? -1 : get_stream(key, &b, fd, true, path, err);
	ss_buf_free(&b);
	um = umask(0);
	umask(um);
	/* renameat, not a write to name: whatever is at name (a link, a fifo)
	 * is replaced, never opened; a failed copy leaves the old file. */
	if (rc == 0 && (fchmod(fd, 0666 & ~um) < 0 || renameat(parent, tmp, parent, name) < 0))
		rc = cl_fail_errno(err, "writing %s", dest);
	if (fd >= 0)
		close(fd);
	if (rc < 0 && fd >= 0)
		unlinkat(parent, tmp, 0);
	close(parent);
	return rc;
}

/* ===== into the session: we write the pipe, its copy reads it ===== */

static int send_all(int in, int out, const char *shown, cl_error *err)
{
	static char buf[65536];
	ssize_t n;

	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cl_fail_errno(err, "reading %s", shown);
		if (write_all(out, buf, (size_t)n) < 0)
			return errno == EPIPE ? -EPIPE : cl_fail_errno(err, "copying %s", shown);
	}
	return 0;
}

static int put_stream(const char *key, struct ss_buf *b, int in, const char *shown,
                      cl_error *err)
{
	struct ss_reply rep;
	cl_error serr = {0};
	int sock = ss_connect(key, NULL, err), p[2] = {-1, -1}, sent, rc = -1;
	void (*old)(int);

	if (sock < 0)
		return -1;
	if (pipe2(p, O_CLOEXEC) < 0) {
		cl_fail_errno(err, "starting the copy");
		goto out;
	}
	if (ss_request(sock, b, &p[0], 1, err) < 0)
		goto out;
	close(p[0]);
	p[0] = -1;
	/* A session that stops reading (its copy failed) is EPIPE here and
	 * an error in its reply, not a kill of ours. */
	old = signal(SIGPIPE, SIG_IGN);
	sent = send_all(in, p[1], shown, &serr);
	signal(SIGPIPE, old);
	/* EOF for the session's copy: only then does it reply. */
	close(p[1]);
	p[1] = -1;
	if (ss_reply_read(sock, &rep, err) < 0)
		goto out;
	if (rep.code != 0)
		reply_error(&rep, err);
	else if (sent < 0)
		*err = serr;
	else
		rc = 0;
out:
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
	close(sock);
	return rc;
}

int ss_cp_file_in(const char *src, const char *key, const char *path, bool mkdirs,
                  cl_error *err)
{
	struct ss_buf b = {0};
	struct split s;
	struct stat st;
	char mode[16];
	bool in = strcmp(src, "-") == 0;
	int fd = in ? 0 : ss_cp_src_open(src, false, err);
	int rc;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		rc = cl_fail_errno(err, "reading %s", src);
		goto out;
	}
	snprintf(mode, sizeof(mode), "%o", in && !S_ISREG(st.st_mode) ? 0644u
	         : (unsigned)(st.st_mode & 0777));
	ss_buf_add(&b, 0, "put");
	ss_buf_add(&b, 'P', path);
	ss_buf_add(&b, 'M', mode);
	if (mkdirs)
		ss_buf_add(&b, 'D', "1");
	if (!in && split_path(src, &s, err) == 0 && !plain_dir_name(s.base))
		ss_buf_add(&b, 'N', s.base);
	rc = put_stream(key, &b, fd, in ? "stdin" : src, err);
out:
	ss_buf_free(&b);
	if (!in)
		close(fd);
	return rc;
}
