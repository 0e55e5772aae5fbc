/* The runtime directory and the per-session info file: safe creation,
 * strict reading, and lookup by id or name. */
#define _GNU_SOURCE
#include "src/session/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/fdio.h"
#include "src/policy/parse.h"

/* A directory we own with no access for anyone else, reached without a
 * symlink at the last component; created 0700 when missing. The parents
 * are the system's (/run, /tmp with its sticky bit, the user's runtime
 * dir), where another user may own a name but cannot replace ours. */
static int own_dir(const char *path, bool create, cl_error *err)
{
	struct stat st;
	cl_autoclose int fd = -1;

	if (!create && lstat(path, &st) < 0 && errno == ENOENT)
		return 1;
	if (create && mkdir(path, 0700) < 0 && errno != EEXIST)
		return cl_fail_errno(err, "creating the session directory %s", path);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return cl_fail_errno(err, "opening the session directory %s (it must be a directory, "
		                     "not a link)", path);
	if (fstat(fd, &st) < 0)
		return cl_fail_errno(err, "checking %s", path);
	if (st.st_uid != geteuid() || (st.st_mode & 077))
		return cl_fail(err, 0, "session directory %s is not private (owner uid %u, mode %03o; "
		               "expected uid %u, mode 700): %s", path, (unsigned)st.st_uid,
		               (unsigned)(st.st_mode & 0777), (unsigned)geteuid(),
		               st.st_uid == geteuid() ? "chmod 700 it, or remove it"
		                                      : "set CLOISTER_RUNTIME_DIR to a directory of yours");
	return 0;
}

/* The entry at path is one another user made (or not a directory we own):
 * fills why and returns true. A directory of ours is never "squatted",
 * even with a wrong mode: own_dir says what to fix. */
static bool squatted(const char *path, char *why, size_t len)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return false;
	if (S_ISDIR(st.st_mode) && st.st_uid == geteuid())
		return false;
	if (st.st_uid != geteuid())
		snprintf(why, len, "belongs to uid %u", (unsigned)st.st_uid);
	else
		snprintf(why, len, "is not a directory");
	return true;
}

/* The alternative to a squatted /tmp/cloister-UID: the first (by name) of
 * /tmp/cloister-UID-XXXXXX that is a directory of ours with mode 0700.
 * Nobody else can make one owned by us, so no record is needed to find it
 * again. Fills path; false when there is none. */
static bool find_alternative(const char *prefix, char *path, size_t size)
{
	DIR *d = opendir("/tmp");
	struct dirent *e;
	char best[NAME_MAX + 1] = "";
	size_t pl = strlen(prefix);

	while (d && (e = readdir(d)) != NULL) {
		struct stat st;
		if (strncmp(e->d_name, prefix, pl) != 0 || strlen(e->d_name) != pl + 6 ||
		    (best[0] && strcmp(e->d_name, best) >= 0))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 0777) == 0700)
			snprintf(best, sizeof(best), "%s", e->d_name);
	}
	if (d)
		closedir(d);
	if (!best[0])
		return false;
	snprintf(path, size, "/tmp/%s", best);
	return true;
}

/* Without XDG_RUNTIME_DIR: /tmp/cloister-UID, or when another user holds
 * that name (any user may create it first in /tmp), a directory of ours
 * made by mkdtemp beside it, found again by find_alternative. */
static int tmp_rundir(char *path, size_t size, bool create, cl_error *err)
{
	char prefix[32], why[64], mine[64];
	int rc;

	snprintf(path, size, "/tmp/cloister-%u", (unsigned)geteuid());
	if (!squatted(path, why, sizeof(why)))
		return own_dir(path, create, err);
	snprintf(prefix, sizeof(prefix), "cloister-%u-", (unsigned)geteuid());
	if (find_alternative(prefix, path, size))
		return own_dir(path, false, err);
	if (!create)
		return 1;
	snprintf(mine, sizeof(mine), "/tmp/%sXXXXXX", prefix);
	if (!mkdtemp(mine))
		return cl_fail_errno(err, "/tmp/cloister-%u %s; creating a directory for sessions "
		                     "beside it (set CLOISTER_RUNTIME_DIR to choose one)",
		                     (unsigned)geteuid(), why);
	/* Two creates racing here both made one: both use the first. */
	if (!find_alternative(prefix, path, size))
		snprintf(path, size, "%s", mine);
	else if (strcmp(path, mine) != 0)
		rmdir(mine);
	rc = own_dir(path, false, err);
	if (rc == 0)
		fprintf(stderr, "cloister: warning: /tmp/cloister-%u %s, not to you: sessions live in "
		        "%s instead (set CLOISTER_RUNTIME_DIR or XDG_RUNTIME_DIR to choose)\n",
		        (unsigned)geteuid(), why, path);
	return rc;
}

int ss_rundir(char *path, size_t size, bool create, cl_error *err)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	const char *own = getenv("CLOISTER_RUNTIME_DIR");
	int n;

	/* An explicit choice of the caller (tests, several independent sets
	 * of sessions); checked like the defaults. */
	if (own && own[0] == '/')
		n = snprintf(path, size, "%s", own);
	else if (geteuid() == 0)
		n = snprintf(path, size, "/run/cloister");
	else if (xdg && xdg[0] == '/' && access(xdg, W_OK | X_OK) == 0)
		n = snprintf(path, size, "%s/cloister", xdg);
	else
		return size < 81 ? cl_fail(err, ENAMETOOLONG, "session directory path")
		                 : tmp_rundir(path, size, create, err);
	/* Room for "/<id>/sock" within a socket address (108 bytes). */
	if (n < 0 || (size_t)n >= size || n > 80)
		return cl_fail(err, 0, "session directory path too long (%s): set XDG_RUNTIME_DIR to "
		               "a shorter path", path);
	return own_dir(path, create, err);
}

int ss_new_id(char id[SS_ID_LEN + 1], cl_error *err)
{
	unsigned char raw[SS_ID_LEN / 2];

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return cl_fail_errno(err, "making a session id");
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(id + 2 * i, 3, "%02x", raw[i]);
	return 0;
}

bool ss_valid_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > SS_NAME_MAX || name[0] == '.' || name[0] == '-')
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

uint64_t ss_proc_start(pid_t pid)
{
	char path[64], buf[1024];
	cl_autoclose int fd = -1;
	ssize_t n;
	char *p;
	unsigned long long v = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* Field 22 (starttime); the command name (field 2) may hold spaces
	 * and parentheses, so count from the last ')'. */
	p = strrchr(buf, ')');
	/* A zombie has exited: it serves nothing any more. */
	if (p && (p[1] != ' ' || p[2] == 'Z' || p[2] == 'X'))
		return 0;
	/* The kernel writes this file: decimal fields, no overflow to detect. */
	/* NOLINTNEXTLINE(cert-err34-c) */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
	                 "%*d %*d %*d %*d %llu", &v) != 1)
		return 0;
	return v;
}

bool ss_alive(pid_t pid, uint64_t start)
{
	return pid > 0 && start && ss_proc_start(pid) == start;
}

int ss_info_write(const char *dir, const struct ss_info *in, cl_error *err)
{
	char path[4096], tmp[4096], text[512];
	cl_autoclose int fd = -1;
	int n;

	n = snprintf(text, sizeof(text),
	             "id=%s\nname=%s\npid=%d\nstart=%" PRIu64 "\ninit=%d\ninit_start=%" PRIu64
	             "\ncreated=%" PRId64 "\nidle=%" PRIu64 "\n",
	             in->id, in->name, (int)in->pid, in->start, (int)in->init_pid, in->init_start,
	             in->created, in->idle_s);
	snprintf(path, sizeof(path), "%s/info", dir);
	snprintf(tmp, sizeof(tmp), "%s/info.tmp", dir);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || cl_write_all(fd, text, (size_t)n) < 0)
		return cl_fail_errno(err, "writing %s", tmp);
	/* Renamed whole: a reader never sees half a file. */
	if (rename(tmp, path) < 0)
		return cl_fail_errno(err, "writing %s", path);
	return 0;
}

static int field(const char *text, const char *key, char *out, size_t size)
{
	size_t kl = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *end = strchr(l, '\n');
		size_t n = end ? (size_t)(end - l) : strlen(l);
		if (n > kl && strncmp(l, key, kl) == 0 && l[kl] == '=') {
			if (n - kl - 1 >= size)
				return -1;
			memcpy(out, l + kl + 1, n - kl - 1);
			out[n - kl - 1] = '\0';
			return 0;
		}
		if (n == kl + 1 && strncmp(l, key, kl) == 0 && l[kl] == '=') {
			out[0] = '\0';
			return 0;
		}
	}
	return -1;
}

static int num(const char *text, const char *key, uint64_t max, uint64_t *v)
{
	char buf[32];

	return field(text, key, buf, sizeof(buf)) < 0 ? -1 : cl_parse_u64(buf, 0, max, v);
}

int ss_info_read(const char *dir, struct ss_info *in)
{
	char path[4096];
	cl_autofree char *text = NULL;
	cl_autoclose int fd = -1;
	uint64_t pid, ipid, created;
	size_t len;

	memset(in, 0, sizeof(*in));
	snprintf(path, sizeof(path), "%s/info", dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || cl_read_all(fd, 4096, &text, &len) < 0)
		return -1;
	if (field(text, "id", in->id, sizeof(in->id)) < 0 ||
	    field(text, "name", in->name, sizeof(in->name)) < 0 ||
	    num(text, "pid", INT32_MAX, &pid) < 0 || num(text, "start", UINT64_MAX, &in->start) < 0 ||
	    num(text, "init", INT32_MAX, &ipid) < 0 ||
	    num(text, "init_start", UINT64_MAX, &in->init_start) < 0 ||
	    num(text, "created", INT64_MAX, &created) < 0 ||
	    num(text, "idle", UINT64_MAX, &in->idle_s) < 0)
		return -1;
	in->pid = (pid_t)pid;
	in->init_pid = (pid_t)ipid;
	in->created = (int64_t)created;
	return 0;
}

static bool is_id(const char *s)
{
	return strlen(s) == SS_ID_LEN && strspn(s, "0123456789abcdef") == SS_ID_LEN;
}

int ss_find(const char *key, char *dir, size_t size, struct ss_info *in, cl_error *err)
{
	char root[256];
	DIR *d;
	struct dirent *e;
	int found = -1;

	int rc = ss_rundir(root, sizeof(root), false, err);

	if (rc < 0)
		return -1;
	if (rc > 0)
		return cl_fail(err, 0, "no session '%s' (see cloister ls)", key);
	if (is_id(key)) {
		snprintf(dir, size, "%s/%s", root, key);
		if (ss_info_read(dir, in) == 0 && strcmp(in->id, key) == 0)
			return 0;
	}
	d = opendir(root);
	while (d && (e = readdir(d)) != NULL && found < 0) {
		if (!is_id(e->d_name))
			continue;
		snprintf(dir, size, "%s/%s", root, e->d_name);
		if (ss_info_read(dir, in) == 0 && in->name[0] && strcmp(in->name, key) == 0)
			found = 0;
	}
	if (d)
		closedir(d);
	if (found < 0)
		return cl_fail(err, 0, "no session '%s' (see cloister ls)", key);
	return 0;
}

void ss_dir_remove(const char *dir)
{
	static const char *const files[] = {"sock", "info", "info.tmp"};
	char path[4096];

	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}
