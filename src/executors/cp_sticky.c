/* Sticky codeplane workspaces across runs: the id of the workspace made
 * for a name is kept in <state>/codeplane/OWNER@REPO@NAME (written by
 * rename, read as untrusted), and the next run with that name resumes it
 * (POST .../resume, then polled until running) instead of creating one. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/executors/cp_exec.h"
#include "src/workspace/state.h"

static void record_name(const struct cp *w, char *out, size_t len)
{
	snprintf(out, len, "%s@%s", w->cfg.repo, w->name);
	for (char *c = out; *c; c++)
		if (*c == '/')
			*c = '@';
}

/* The recorded id, checked like any server string: "" if there is none
 * or it is not one (a record is not trusted for being ours). */
static void read_record(const struct cp *w, int dir, char *id, size_t len)
{
	char name[400], buf[128];
	cl_autoclose int fd = -1;
	struct stat st;
	ssize_t n;

	id[0] = '\0';
	record_name(w, name, sizeof(name));
	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size >= (off_t)sizeof(buf))
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (cp_safe_token(buf, len, "-"))
		memcpy(id, buf, strlen(buf) + 1);   /* shorter than len: checked */
}

static void forget(const struct cp *w, int dir)
{
	char name[400];

	record_name(w, name, sizeof(name));
	unlinkat(dir, name, 0);
}

int cp_sticky_lock(struct cp *w, cl_error *err)
{
	char name[400], lock[420];
	cl_autoclose int dir = ws_state_open("codeplane", err);

	if (dir < 0)
		return dir;
	record_name(w, name, sizeof(name));
	snprintf(lock, sizeof(lock), "%s.lock", name);
	w->lock_fd = openat(dir, lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (w->lock_fd < 0)
		return cl_fail_errno(err, "codeplane: locking sticky workspace %s", w->name);
	if (flock(w->lock_fd, LOCK_EX | LOCK_NB) < 0) {
		int saved = errno;
		close(w->lock_fd);
		w->lock_fd = -1;
		return cl_fail(err, saved == EWOULDBLOCK ? 0 : saved, "codeplane: sticky workspace %s is in "
		               "use by another run%s", w->name, saved == EWOULDBLOCK ? "; try again when it ends" : "");
	}
	return 0;
}

int cp_sticky_record(const struct cp *w, cl_error *err)
{
	char name[400], tmp[440], line[100];
	cl_autoclose int dir = ws_state_open("codeplane", err);
	cl_autoclose int fd = -1;
	int n;

	if (dir < 0)
		return dir;
	record_name(w, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, (int)getpid());
	n = snprintf(line, sizeof(line), "%s\n", w->id);
	unlinkat(dir, tmp, 0);
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	/* Whole or not at all: a reader sees the old record or the new one. */
	if (fd < 0 || write(fd, line, (size_t)n) != n || fsync(fd) < 0 || renameat(dir, tmp, dir, name) < 0) {
		int saved = errno;
		unlinkat(dir, tmp, 0);
		return cl_fail(err, saved, "codeplane: recording sticky workspace %s (it will not be "
		               "resumed by the next run)", w->name);
	}
	return 0;
}

/* GET the recorded workspace: 1 if it is this name's and can be used
 * (resumed when suspended), 0 if gone or unusable, <0 on an API error. */
static int try_resume(struct cp *w, cl_error *err)
{
	char path[160];
	json_t *ws = NULL, *r = NULL;
	int status, rc;
	const char *st, *name;

	snprintf(path, sizeof(path), "/workspaces/%s", w->id);
	rc = cp_call(&w->cfg, "GET", path, NULL, &status, &ws, err);
	if (rc < 0)
		return rc;
	st = json_string_value(json_object_get(ws, "status"));
	name = json_string_value(json_object_get(ws, "name"));
	/* Gone, someone else's name, or beyond use: a new one is made. */
	if (status == 404 || (status == 200 && (!name || strcmp(name, w->name) != 0 || !st ||
	                                        strcmp(st, "failed") == 0 || strcmp(st, "stopped") == 0))) {
		json_decref(ws);
		return 0;
	}
	if (status != 200) {
		rc = cp_api_error("reading the sticky workspace", status, ws, err);
		json_decref(ws);
		return rc;
	}
	rc = 1;
	if (strcmp(st, "suspended") == 0) {
		snprintf(path, sizeof(path), "/workspaces/%s/resume", w->id);
		rc = cp_call(&w->cfg, "POST", path, NULL, &status, &r, err);
		if (rc == 0 && status / 100 != 2)
			rc = cp_api_error("resuming the workspace", status, r, err);
		json_decref(r);
		rc = rc < 0 ? rc : 1;
	}
	json_decref(ws);
	return rc;
}

int cp_sticky_resume(struct cp *w, cl_error *err)
{
	cl_error ignored = {0};
	cl_autoclose int dir = ws_state_open("codeplane", &ignored);
	int rc;

	/* No state directory: nothing to resume (recording will say why). */
	if (dir < 0)
		return 0;
	read_record(w, dir, w->id, sizeof(w->id));
	if (!w->id[0])
		return 0;
	rc = try_resume(w, err);
	if (rc == 0) {
		forget(w, dir);
		w->id[0] = '\0';
	}
	if (rc < 0)
		w->id[0] = '\0';   /* not ours to clean up: it stays as it was */
	return rc;
}
