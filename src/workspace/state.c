/* Workspace state on the host: every level is made 0700 and opened with
 * O_NOFOLLOW, the run dir is new (never reused), the overlay layers reach
 * the child by path (see add_mount). */
#define _GNU_SOURCE
#include "src/util/fsafe.h"
#include "src/workspace/state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/workspace/copy.h"
#include "src/workspace/root.h"
#include "src/workspace/probe.h"
#include "src/workspace/snapshot.h"
#include "src/util/fdio.h"

static int make_sub(int parent, const char *name, mode_t mode, cl_error *err)
{
	int fd;

	if (mkdirat(parent, name, mode) < 0)
		return cl_fail_errno(err, "creating workspace %s dir", name);
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? cl_fail_errno(err, "opening workspace %s dir", name) : fd;
}

static int make_run_dir(struct ws_run *w, cl_error *err)
{
	unsigned char r[6];

	for (int tries = 0; tries < 16; tries++) {
		if (getrandom(r, sizeof(r), 0) != sizeof(r))
			return cl_fail_errno(err, "naming the workspace run dir");
		snprintf(w->name, sizeof(w->name), "run-%d-%02x%02x%02x%02x%02x%02x", (int)getpid(), r[0], r[1],
		         r[2], r[3], r[4], r[5]);
		if (mkdirat(w->parent_fd, w->name, 0700) == 0)
			break;
		if (errno != EEXIST)
			return cl_fail_errno(err, "creating the workspace run dir");
		w->name[0] = '\0';
	}
	if (!w->name[0])
		return cl_fail(err, EEXIST, "creating the workspace run dir");
	w->run_fd = openat(w->parent_fd, w->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w->run_fd < 0)
		return cl_fail_errno(err, "opening the workspace run dir");
	/* Held until cleanup: `cloister gc` removes only unlocked run dirs. */
	if (flock(w->run_fd, LOCK_EX | LOCK_NB) < 0)
		return cl_fail_errno(err, "locking the workspace run dir");
	return 0;
}

/* The layers go to the child by path: overlayfs clones each layer's mount
 * and refuses one outside the mounter's mount namespace, which an fd
 * opened here (before the child's namespace was copied) would be. */
static int add_mount(struct cl_policy *p, struct ws_run *w, const char *root, cl_error *err)
{
	char up[4400], work[4400];
	struct cl_mount *m;

	snprintf(up, sizeof(up), "%s/%s/upper", root, w->name);
	snprintf(work, sizeof(work), "%s/%s/work", root, w->name);
	snprintf(w->upper, sizeof(w->upper), "%s", up);
	/* volatile only for a throwaway upper dir: a sticky one must survive
	 * a crash, and volatile would refuse its next mount. */
	/* A root caller's sandbox is an unmapped host id: its overlay is made
	 * from layers the parent opens and idmaps, so that root's files in
	 * DIR and in the upper dir are the sandbox root's (ns/idmap.h). */
	m = cl_policy_add_mount(p, CL_MNT_OVERLAY, up, w->dir,
	                        (w->sticky ? 0 : CL_MF_VOLATILE) |
	                        (p->host_uid != geteuid() ? CL_MF_CALLER_OPEN | CL_MF_IDMAP : 0));
	if (!m || !(m->ovl_work = strdup(work)) || !cl_strv_push(&m->ovl_lower, w->lower))
		return cl_fail(err, ENOMEM, "adding the workspace mount");
	return 0;
}

/* overlayfs refuses an upper dir inside its lower one (ELOOP, a puzzling
 * message): say what to change instead. */
static int inside_dir(const struct ws_run *w, const char *path, const char *shown, cl_error *err)
{
	size_t n = strlen(w->dir);

	if (!strncmp(path, w->dir, n) && (path[n] == '/' || path[n] == '\0' || n == 1))
		return cl_fail(err, 0, "--workspace %s contains cloister's state directory %s; set "
		               "CLOISTER_STATE_DIR to a directory outside it", w->dir, shown);
	return 0;
}

static int begin(struct cl_policy *p, struct ws_run *w, char *root, size_t len, cl_error *err)
{
	char real[4096];
	int rc;

	memset(w, 0, sizeof(*w));
	w->parent_fd = w->run_fd = w->lower_fd = w->upper_fd = w->work_fd = w->snap_fd = -1;
	w->seq = 1;
	w->git_ignore = !p->ws_ignore_none;
	if (!realpath(p->workspace, w->dir))
		return cl_fail_errno(err, "--workspace %s", p->workspace);
	snprintf(w->lower, sizeof(w->lower), "%s", w->dir);
	/* Captured against this fd, not the name: CLOEXEC, the sandbox never
	 * holds it. */
	w->lower_fd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->lower_fd < 0)
		return cl_fail_errno(err, "--workspace %s: opening it as a directory", p->workspace);
	if ((rc = ws_state_root(root, len - 16, err)) < 0)
		return rc;
	snprintf(root + strlen(root), len - strlen(root), "/workspaces");
	/* Resolved before anything is made: DIR is never written, and what
	 * is created below the existing part is never a link. */
	if ((rc = ws_resolve_existing(root, real, sizeof(real), err)) < 0 ||
	    (rc = inside_dir(w, real, real, err)) < 0)
		return rc;
	snprintf(root, len, "%s", real);
	if ((w->parent_fd = ws_open_dirs(root, err)) < 0)
		return w->parent_fd;
	return 0;
}

static int layers(struct cl_policy *p, struct ws_run *w, const char *root, bool fresh, cl_error *err)
{
	int rc;

	if (!fresh) {
		w->upper_fd = openat(w->run_fd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		w->work_fd = openat(w->run_fd, "work", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (w->upper_fd < 0 || w->work_fd < 0)
			return cl_fail_errno(err, "opening sticky workspace %s", w->name);
	} else if ((w->upper_fd = rc = make_sub(w->run_fd, "upper", 0755, err)) < 0 ||
	           (w->work_fd = rc = make_sub(w->run_fd, "work", 0700, err)) < 0) {
		return rc;
	}
	return add_mount(p, w, root, err);
}

/* Overlay unless forced otherwise or unavailable (the forked probe
 * `cloister check` reports, its answer cached per boot: probe.c). A root
 * caller's sandbox is an unmapped host id (docs/security.md): through an
 * overlay root's files in DIR would be nobody's, neither writable nor
 * copied up, so it always gets the copy, bound idmapped as its other
 * writable binds are. */
static bool use_copy(const struct cl_policy *p, const struct ws_run *w)
{
	const char *m = getenv("CLOISTER_WORKSPACE_MODE");

	if (p->host_uid != geteuid())
		return true;
	if (m && !strcmp(m, "copy"))
		return true;
	if (m && !strcmp(m, "overlay"))
		return false;
	/* The state dir (workspaces/ holds only run and sticky dirs). */
	cl_autoclose int state = openat(w->parent_fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return !ws_overlay_works(state);
}

/* The fallback: DIR copied into upper/, bound read-write at DIR. */
static int copy_layer(struct cl_policy *p, struct ws_run *w, const char *root, cl_error *err)
{
	char up[4400];
	int rc;

	w->copy = true;
	if ((w->upper_fd = rc = make_sub(w->run_fd, "upper", 0755, err)) < 0 ||
	    (rc = ws_copy_tree(w->lower_fd, w->upper_fd, w->dir, NULL, err)) < 0)
		return rc;
	snprintf(up, sizeof(up), "%s/%s/upper", root, w->name);
	snprintf(w->upper, sizeof(w->upper), "%s", up);
	if (!cl_policy_add_mount(p, CL_MNT_BIND, up, w->dir,
	                         p->host_uid != geteuid() ? CL_MF_CALLER_OPEN | CL_MF_IDMAP : 0))
		return cl_fail(err, ENOMEM, "adding the workspace mount");
	return 0;
}

/* The base becomes the snapshot's tree, held (shared flock) until cleanup
 * so that it is not removed under the run. */
static int use_snapshot(struct ws_run *w, const char *id, cl_error *err)
{
	struct ws_snap s;
	int rc;

	if ((rc = ws_snap_open(id, &s, err)) < 0)
		return rc;
	close(w->lower_fd);
	w->lower_fd = s.tree_fd;
	w->snap_fd = s.fd;
	snprintf(w->lower, sizeof(w->lower), "%s", s.tree);
	return 0;
}

int ws_run_prepare(struct cl_policy *p, struct ws_run *w, const char *snapshot, cl_error *err)
{
	char root[4096];
	int rc;

	if ((rc = begin(p, w, root, sizeof(root), err)) < 0 ||
	    (snapshot && (rc = use_snapshot(w, snapshot, err)) < 0) || (rc = make_run_dir(w, err)) < 0 ||
	    (rc = use_copy(p, w) ? copy_layer(p, w, root, err) : layers(p, w, root, true, err)) < 0)
		ws_run_cleanup(w);
	return rc;
}

/* A known sticky dir must be for the same rootDir; its seq goes on. */
static int sticky_meta(struct ws_run *w, bool fresh, int64_t idle_secs, cl_error *err)
{
	char buf[4200];

	if (!fresh) {
		if (ws_read_small(w->run_fd, "root", buf, sizeof(buf)) < 0 || strcmp(buf, w->dir))
			return cl_fail(err, 0, "sticky workspace %s belongs to %s, not %s", w->name + 7, buf, w->dir);
		if (ws_read_small(w->run_fd, "seq", buf, sizeof(buf)) == 0)
			w->seq = strtoull(buf, NULL, 10) + 1;
	}
	snprintf(buf, sizeof(buf), "%lld", (long long)idle_secs);
	if (ws_write_small(w->run_fd, "idle", buf) < 0)
		return cl_fail_errno(err, "recording sticky workspace %s", w->name);
	return 0;
}

/* A new sticky dir made from a snapshot: the snapshot's tree copied into
 * base/ (its own: the snapshot may be removed later), named in "snapshot". */
static int sticky_seed(struct ws_run *w, const char *snapshot, cl_error *err)
{
	const struct ws_copy_opts o = {.strict = true};
	struct ws_snap s;
	cl_autoclose int base = -1;
	int rc;

	if ((rc = ws_snap_open(snapshot, &s, err)) < 0)
		return rc;
	if (mkdirat(w->run_fd, "base", 0755) < 0 ||
	    (base = openat(w->run_fd, "base", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		rc = cl_fail_errno(err, "creating the base of sticky workspace %s", w->name + 7);
	else
		rc = ws_copy_tree(s.tree_fd, base, snapshot, &o, err);
	ws_snap_close(&s);
	if (rc == 0 && (rc = ws_write_small(w->run_fd, "snapshot", snapshot)) < 0)
		rc = cl_fail(err, -rc, "recording sticky workspace %s", w->name + 7);
	return rc;
}

/* The base of a sticky dir: base/ when it was made from a snapshot (which
 * a later run may name again, or not at all, but not another), else DIR. */
static int sticky_base(struct ws_run *w, bool fresh, const char *snapshot, const char *root, cl_error *err)
{
	char had[WS_SNAP_ID_MAX + 2] = "";
	int rc;

	if (fresh && snapshot && (rc = sticky_seed(w, snapshot, err)) < 0)
		return rc;
	if (!fresh && ws_read_small(w->run_fd, "snapshot", had, sizeof(had)) < 0)
		had[0] = '\0';
	if (!fresh && snapshot && strcmp(snapshot, had))
		return had[0] ? cl_fail(err, 0, "sticky workspace %s was made from snapshot %s, not %s; it keeps "
		                        "its base (use another name to start from %s)", w->name + 7, had, snapshot,
		                        snapshot)
		       : cl_fail(err, 0, "sticky workspace %s was made from its rootDir, not a snapshot; it keeps "
		                 "its base (use another name to start from %s)", w->name + 7, snapshot);
	if (fresh ? !snapshot : !had[0])
		return 0;
	snprintf(w->lower, sizeof(w->lower), "%s/%s/base", root, w->name);
	close(w->lower_fd);
	w->lower_fd = openat(w->run_fd, "base", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return w->lower_fd < 0 ? cl_fail_errno(err, "opening the base of sticky workspace %s", w->name + 7) : 0;
}

/* A sticky dir without its "root" record (written last) is one whose
 * first run was killed while making it: emptied, it is made again. */
static bool unfinished(int run_fd)
{
	struct stat st;
	int fd;
	DIR *d;
	struct dirent *de;

	if (fstatat(run_fd, "root", &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return false;
	if ((fd = dup(run_fd)) < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	rewinddir(d);   /* the dup shares the offset */
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			cl_remove_tree_or_say(dirfd(d), de->d_name, "a part of an unfinished sticky workspace");
	closedir(d);
	return true;
}

int ws_sticky_prepare(struct cl_policy *p, struct ws_run *w, const char *name, int64_t idle_secs,
                      const char *snapshot, cl_error *err)
{
	char root[4096];
	bool fresh = false;
	int rc;

	if ((rc = begin(p, w, root, sizeof(root), err)) < 0)
		goto fail;
	if (!ws_name_ok(name)) {
		rc = cl_fail(err, 0, "sticky workspace name '%s': use letters, digits, '.', '_' and '-' (at most "
		             "128)", name);
		goto fail;
	}
	snprintf(w->name, sizeof(w->name), "sticky-%s", name);
	fresh = mkdirat(w->parent_fd, w->name, 0700) == 0;
	if (!fresh && errno != EEXIST) {
		rc = cl_fail_errno(err, "creating sticky workspace %s", name);
		goto fail;
	}
	w->run_fd = openat(w->parent_fd, w->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w->run_fd < 0) {
		rc = cl_fail_errno(err, "opening sticky workspace %s", name);
		goto fail;
	}
	/* One run at a time: two overlays on one upper dir corrupt it. */
	if (flock(w->run_fd, LOCK_EX | LOCK_NB) < 0) {
		rc = cl_fail(err, errno == EWOULDBLOCK ? 0 : errno, "sticky workspace %s is in use by another run",
		             name);
		goto fail;
	}
	/* Under the lock: only a dead maker leaves it unfinished. */
	if (!fresh && unfinished(w->run_fd))
		fresh = true;
	w->sticky = true;
	if ((rc = sticky_meta(w, fresh, idle_secs, err)) < 0 || (rc = sticky_base(w, fresh, snapshot, root, err)) < 0 ||
	    (rc = layers(p, w, root, fresh, err)) < 0)
		goto fail;
	/* The record that makes it a sticky workspace comes last: its base and
	 * layers are complete (see unfinished). */
	if (fresh && (rc = ws_write_small(w->run_fd, "root", w->dir)) < 0) {
		rc = cl_fail(err, -rc, "recording sticky workspace %s", name);
		goto fail;
	}
	return 0;
fail:
	/* A sticky dir made just now is removed again; a known one stays. */
	w->sticky = !fresh;
	ws_run_cleanup(w);
	return rc;
}

int ws_sticky_commit_seq(struct ws_run *w, cl_error *err)
{
	char buf[32];

	if (!w->sticky)
		return 0;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)w->seq);
	return ws_write_small(w->run_fd, "seq", buf) < 0 ? cl_fail_errno(err, "recording the seq of %s", w->name) : 0;
}


static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void ws_run_cleanup(struct ws_run *w)
{
	close_fd(&w->upper_fd);
	close_fd(&w->work_fd);
	/* Removed while still locked: gc never sees it half gone. */
	if (w->parent_fd >= 0 && w->name[0] && !w->sticky) {
		int r = cl_remove_tree_at(w->parent_fd, w->name);
		/* Never silent: gc retries, but the user learns it stayed. */
		if (r < 0)
			fprintf(stderr, "cloister: could not remove workspace run %s: %s (cloister "
			        "workspace gc retries)\n", w->name, strerror(-r));
	}
	close_fd(&w->run_fd);
	w->name[0] = '\0';
	close_fd(&w->parent_fd);
	close_fd(&w->lower_fd);
	close_fd(&w->snap_fd);
}

int ws_run_keep(struct ws_run *w, const char *skip, char *out, size_t len, cl_error *err)
{
	char kept[sizeof(w->name)], seq[32], *slash;
	int rc;

	if (w->run_fd < 0 || !w->name[0])
		return cl_fail(err, EINVAL, "keeping the workspace's changes: no run dir");
	snprintf(seq, sizeof(seq), "%llu", (unsigned long long)w->seq);
	/* What `cloister diff capture` needs to capture them again; the
	 * lower one written last: gc ages a kept dir by it. */
	if ((rc = ws_write_small(w->run_fd, "kept-mode", w->copy ? "copy" : "overlay")) < 0 ||
	    (rc = ws_write_small(w->run_fd, "kept-skip", skip ? skip : "")) < 0 ||
	    (rc = ws_write_small(w->run_fd, "kept-seq", seq)) < 0 ||
	    (rc = ws_write_small(w->run_fd, "kept-ignore", w->git_ignore ? "git" : "none")) < 0 ||
	    (rc = ws_write_small(w->run_fd, "kept-lower", w->lower)) < 0)
		return cl_fail(err, -rc, "keeping the workspace's changes in %s", w->upper);
	snprintf(kept, sizeof(kept), "%s", w->name);
	/* A sticky workspace keeps its upper dir anyway; a run dir becomes
	 * kept-*, which cleanup leaves and gc removes only once old. */
	if (!w->sticky) {
		snprintf(kept, sizeof(kept), "kept-%s", w->name + 4);
		if (renameat(w->parent_fd, w->name, w->parent_fd, kept) < 0)
			return cl_fail_errno(err, "keeping the workspace's changes in %s", kept);
		w->name[0] = '\0';
	}
	/* upper is <state>/workspaces/<name>/upper. */
	snprintf(out, len, "%s", w->upper);
	if ((slash = strrchr(out, '/')))
		*slash = '\0';
	if ((slash = strrchr(out, '/')))
		snprintf(slash + 1, len - (size_t)(slash + 1 - out), "%s", kept);
	return 0;
}

void ws_run_keep_report(struct ws_run *w, const char *skip, const char *diff_out)
{
	char where[4400];
	cl_error err = {0};

	if (ws_run_keep(w, skip, where, sizeof(where), &err) < 0) {
		cl_error_print(&err);
		return;
	}
	fprintf(stderr, "cloister: the sandbox's changes are kept in %s (`cloister gc` removes them after "
	        "%d days); `cloister diff capture %s %s` captures them again\n", where, WS_KEPT_DAYS, where,
	        diff_out ? diff_out : "FILE");
}

static bool kept_expired(int fd)
{
	struct stat st;

	if (fstatat(fd, "kept-lower", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	return time(NULL) - st.st_mtime > (time_t)WS_KEPT_DAYS * 86400;
}

static bool idle_expired(int fd)
{
	char buf[32];
	struct stat st;
	long long idle;

	if (ws_read_small(fd, "idle", buf, sizeof(buf)) < 0 || (idle = strtoll(buf, NULL, 10)) < 0)
		return false;
	/* Last used: the seq file is rewritten by every captured run, idle by
	 * every run. */
	if (fstatat(fd, "idle", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	return time(NULL) - st.st_mtime > idle;
}

void ws_gc(void)
{
	char root[4096];
	cl_error err = {0};
	DIR *d;
	struct dirent *de;
	int pfd;

	ws_snap_gc();
	if (ws_state_root(root, sizeof(root) - 16, &err) < 0)
		return;
	snprintf(root + strlen(root), sizeof(root) - strlen(root), "/workspaces");
	pfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0 || !(d = fdopendir(pfd))) {
		if (pfd >= 0)
			close(pfd);
		return;
	}
	while ((de = readdir(d))) {
		bool run = !strncmp(de->d_name, "run-", 4), sticky = !strncmp(de->d_name, "sticky-", 7);
		bool kept = !strncmp(de->d_name, "kept-", 5);
		int fd;
		if (!run && !sticky && !kept)
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* A lock held means a live run: leave it. */
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 || (sticky && !idle_expired(fd)) ||
		    (kept && !kept_expired(fd))) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		int r = cl_remove_tree_at(dirfd(d), de->d_name);
		if (r == 0)
			printf("removed %s workspace %s\n", run ? "abandoned" : kept ? "kept (failed capture)"
			       : "idle sticky", sticky ? de->d_name + 7 : de->d_name);
		else
			fprintf(stderr, "cloister: could not remove workspace %s: %s\n", de->d_name,
			        strerror(-r));
		close(fd);
	}
	closedir(d);
}
