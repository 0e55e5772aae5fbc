/* The snapshot store: a snapshot is built in snapshots/.tmp-<pid>-<hex>/
 * (flocked by its builder), synced, and renamed to its id; removal renames
 * it to .rm-* first. Names starting with '.' are never snapshots, so a
 * killed command leaves nothing that reads as one (gc removes the rest). */
#define _GNU_SOURCE
#include "src/workspace/snapshot.h"

#include <ctype.h>
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
#include "src/util/fdio.h"
#include "src/util/fsafe.h"
#include "src/workspace/copy.h"
#include "src/workspace/merged.h"
#include "src/workspace/root.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

bool ws_snap_id_ok(const char *id)
{
	return ws_name_ok(id) && strlen(id) <= WS_SNAP_ID_MAX && isalnum((unsigned char)id[0]);
}

/* The state root, resolved (it is the caller's setting; what cloister
 * makes below it is opened without following). */
static int state_fd(char *path, size_t len, cl_error *err)
{
	char root[4096];
	int rc, fd;

	if ((rc = ws_state_root(root, sizeof(root), err)) < 0)
		return rc;
	if (!realpath(root, path) || strlen(path) >= len - 64)
		return errno == ENOENT ? -ENOENT : cl_fail_errno(err, "resolving the state directory %s", root);
	fd = open(path, DIR_FLAGS);
	return fd < 0 ? cl_fail_errno(err, "opening the state directory %s", path) : fd;
}

/* <state>/snapshots, made (0700) when create; -ENOENT when absent. */
static int snaps_fd(bool create, char *path, size_t len, cl_error *err)
{
	cl_autoclose int root = state_fd(path, len, err);
	int fd;

	if (root < 0)
		return root;
	if (create && mkdirat(root, "snapshots", 0700) < 0 && errno != EEXIST)
		return cl_fail_errno(err, "creating %s/snapshots", path);
	snprintf(path + strlen(path), len - strlen(path), "/snapshots");
	fd = openat(root, "snapshots", DIR_FLAGS);
	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	return fd < 0 ? cl_fail_errno(err, "opening %s (it must not be a symlink)", path) : fd;
}

static int bad_id(const char *id, cl_error *err)
{
	return cl_fail(err, 0, "snapshot id '%s': use 1 to %d letters, digits, '.', '_' and '-', "
	               "starting with a letter or digit", id, WS_SNAP_ID_MAX);
}

bool ws_snap_exists(const char *id)
{
	char path[4200];
	cl_error err = {0};
	cl_autoclose int d = ws_snap_id_ok(id) ? snaps_fd(false, path, sizeof(path), &err) : -1;
	struct stat st;

	return d >= 0 && fstatat(d, id, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* Removes the leftovers of killed commands that nobody holds locked. */
static void sweep(int sdir, bool verbose)
{
	DIR *d = cl_opendir_fd(sdir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, ".tmp-", 5) && strncmp(de->d_name, ".rm-", 4))
			continue;
		cl_autoclose int e = openat(dirfd(d), de->d_name, DIR_FLAGS);
		/* Locked: a live snapshot or removal is working on it. */
		if (e < 0 || flock(e, LOCK_EX | LOCK_NB) < 0)
			continue;
		int r = cl_remove_tree_at(dirfd(d), de->d_name);
		if (r == 0 && verbose)
			printf("removed unfinished workspace snapshot %s\n", de->d_name);
		else if (r < 0)
			fprintf(stderr, "cloister: could not remove unfinished workspace snapshot %s: "
			        "%s\n", de->d_name, strerror(-r));
	}
	closedir(d);
}

/* The store's leftovers, if it exists (verbose: one line each). */
static void sweep_store(bool verbose)
{
	char path[4200];
	cl_error err = {0};
	cl_autoclose int d = snaps_fd(false, path, sizeof(path), &err);

	if (d >= 0)
		sweep(d, verbose);
}

void ws_snap_gc(void)
{
	sweep_store(true);
}

static int random_name(char *out, size_t len, const char *prefix, cl_error *err)
{
	unsigned char r[8];

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		return cl_fail_errno(err, "naming a workspace snapshot");
	snprintf(out, len, "%s%02x%02x%02x%02x%02x%02x%02x%02x", prefix, r[0], r[1], r[2], r[3], r[4], r[5],
	         r[6], r[7]);
	return 0;
}

/* The sticky workspace being snapshotted: locked as a run locks it. */
struct sticky {
	int fd;                 /* <state>/workspaces/sticky-NAME, flocked */
	char upper[4400];       /* (4096 + 160 + the fixed parts) */
	char base[4400];        /* its base/ (seeded from a snapshot) or its rootDir */
	char root[4096];        /* its rootDir */
};

static int open_sticky(const char *name, struct sticky *s, cl_error *err)
{
	char state[4096], dir[160];
	cl_autoclose int root = -1;
	cl_autoclose int ws = -1;
	struct stat st;

	s->fd = -1;
	if (!ws_name_ok(name))
		return cl_fail(err, 0, "sticky workspace name '%s': use letters, digits, '.', '_' and '-' "
		               "(at most 128)", name);
	root = state_fd(state, sizeof(state), err);
	if (root == -ENOENT)
		return cl_fail(err, 0, "there is no sticky workspace %s", name);
	if (root < 0)
		return root;
	snprintf(dir, sizeof(dir), "sticky-%s", name);
	if ((ws = openat(root, "workspaces", DIR_FLAGS)) < 0 || (s->fd = openat(ws, dir, DIR_FLAGS)) < 0)
		return errno == ENOENT ? cl_fail(err, 0, "there is no sticky workspace %s", name)
		       : cl_fail_errno(err, "opening sticky workspace %s", name);
	/* The lock runs take: no run writes the upper dir while it is read,
	 * and none starts until the snapshot is done. */
	if (flock(s->fd, LOCK_EX | LOCK_NB) < 0)
		return cl_fail(err, errno == EWOULDBLOCK ? 0 : errno, "sticky workspace %s is in use by a running "
		               "sandbox; snapshot it when the run has ended", name);
	/* "root" is written last when a sticky workspace is made. */
	if (ws_read_small(s->fd, "root", s->root, sizeof(s->root)) < 0 || s->root[0] != '/')
		return cl_fail(err, 0, "sticky workspace %s was never completed (its first run was killed); "
		               "nothing to snapshot", name);
	if ((size_t)snprintf(s->upper, sizeof(s->upper), "%s/workspaces/%s/upper", state, dir) >= sizeof(s->upper))
		return cl_fail(err, ENAMETOOLONG, "sticky workspace %s: path", name);
	/* (upper is the longer of the two) */
	if (fstatat(s->fd, "base", &st, AT_SYMLINK_NOFOLLOW) == 0)
		snprintf(s->base, sizeof(s->base), "%s/workspaces/%s/base", state, dir);
	else
		snprintf(s->base, sizeof(s->base), "%s", s->root);
	return 0;
}

static int write_meta(int dfd, const char *id, const char *name, const char *root, cl_error *err)
{
	cl_autofree char *text = NULL;
	json_t *m = json_pack("{s:s,s:s,s:s,s:I}", "id", id, "workspace", name, "rootDir", root, "created",
	                      (json_int_t)time(NULL));
	int rc;

	text = m ? json_dumps(m, JSON_COMPACT) : NULL;
	json_decref(m);
	if (!text)
		return cl_fail(err, ENOMEM, "writing the snapshot's record");
	rc = ws_write_small(dfd, "meta.json", text);
	return rc < 0 ? cl_fail(err, -rc, "writing the snapshot's record") : 0;
}

/* The tree: the kernel's merged view of upper over base, or upper itself
 * when it is the whole tree (a copy-mode session's). */
static int open_view(const struct ws_snap_src *src, cl_error *err)
{
	int fd;

	if (src->base)
		return ws_merged_open(src->upper, src->base, err);
	fd = open(src->upper, DIR_FLAGS);
	return fd < 0 ? cl_fail_errno(err, "opening %s", src->upper) : fd;
}

/* The pause spans the read of the view only: everything before it
 * (refusals, the tmp dir) runs with the source still live. */
static int copy_view(int tree, const struct ws_snap_src *src, cl_error *err)
{
	const struct ws_copy_opts o = {.skip = ".smithers", .strict = true};
	cl_autoclose int view = -1;
	int rc = 0;

	if (src->pause && (rc = src->pause(src->ctx, err)) < 0)
		return rc;
	/* The view is opened inside the pause: the merged mount is made over
	 * layers nobody writes any more. */
	if ((view = open_view(src, err)) < 0)
		rc = view;
	else
		rc = ws_copy_tree(view, tree, src->label, &o, err);
	/* Every path out of the copy, failed or not, resumes. */
	if (src->resume)
		src->resume(src->ctx);
	return rc;
}

/* Steps in tmp (the new snapshot's dir, locked): tree/ from the view,
 * then its record. */
static int fill(int tmp, const struct ws_snap_src *src, const char *id, cl_error *err)
{
	cl_autoclose int tree = -1;
	int rc;

	if (mkdirat(tmp, "tree", 0755) < 0 || (tree = openat(tmp, "tree", DIR_FLAGS)) < 0)
		return cl_fail_errno(err, "creating the snapshot's tree");
	if ((rc = copy_view(tree, src, err)) < 0)
		return rc;
	if ((rc = write_meta(tmp, id, src->label, src->root, err)) < 0)
		return rc;
	/* On disk before the rename: after a crash, a snapshot that has its
	 * name has its content. */
	if (syncfs(tmp) < 0)
		return cl_fail_errno(err, "syncing the snapshot");
	return 0;
}

/* The id asked for, checked, or a fresh one, into out. */
static int pick_id(const char *id, char out[WS_SNAP_ID_MAX + 1], cl_error *err)
{
	if (id && !ws_snap_id_ok(id))
		return bad_id(id, err);
	if (!id)
		return random_name(out, WS_SNAP_ID_MAX + 1, "snap-", err);
	snprintf(out, WS_SNAP_ID_MAX + 1, "%s", id);
	return 0;
}

static int taken(const char *id, cl_error *err)
{
	return cl_fail(err, 0, "snapshot %s exists already; pick another --id or remove it "
	               "(cloister workspace rm-snapshot %s)", id, id);
}

int ws_snap_build(const struct ws_snap_src *src, const char *id, char out[WS_SNAP_ID_MAX + 1], cl_error *err)
{
	char path[4200], tmpname[64] = "", prefix[32];
	cl_autoclose int sdir = -1;
	cl_autoclose int tmp = -1;
	struct stat st;
	int rc;

	if ((rc = pick_id(id, out, err)) < 0)
		return rc;
	if ((sdir = rc = snaps_fd(true, path, sizeof(path), err)) < 0)
		return rc;
	if (fstatat(sdir, out, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return taken(out, err);
	sweep(sdir, false);
	snprintf(prefix, sizeof(prefix), ".tmp-%d-", (int)getpid());
	if ((rc = random_name(tmpname, sizeof(tmpname), prefix, err)) < 0)
		return rc;
	if (mkdirat(sdir, tmpname, 0700) < 0 || (tmp = openat(sdir, tmpname, DIR_FLAGS)) < 0) {
		rc = cl_fail_errno(err, "creating the snapshot under %s", path);
		goto out;
	}
	/* Held until it is renamed or removed: a sweep leaves a live build. */
	if (flock(tmp, LOCK_EX | LOCK_NB) < 0) {
		rc = cl_fail_errno(err, "locking the snapshot under %s", path);
		goto out;
	}
	if ((rc = fill(tmp, src, out, err)) < 0)
		goto out;
	/* NOREPLACE: two snapshots racing for one id, one wins. */
	if (renameat2(sdir, tmpname, sdir, out, RENAME_NOREPLACE) < 0) {
		rc = errno == EEXIST ? cl_fail(err, 0, "snapshot %s exists already", out)
		     : cl_fail_errno(err, "naming the snapshot %s", out);
		goto out;
	}
	tmpname[0] = '\0';
	fsync(sdir);
out:
	if (rc < 0 && tmpname[0]) {
		char what[4400];
		snprintf(what, sizeof(what), "the unfinished snapshot %s/%s (cloister gc retries)", path, tmpname);
		cl_remove_tree_or_say(sdir, tmpname, what);
	}
	return rc;
}

int ws_snap_create(const char *name, const char *id, char out[WS_SNAP_ID_MAX + 1], cl_error *err)
{
	struct sticky sk;
	int rc;

	if (id && !ws_snap_id_ok(id))
		return bad_id(id, err);
	if ((rc = open_sticky(name, &sk, err)) == 0) {
		const struct ws_snap_src src = {.upper = sk.upper, .base = sk.base, .root = sk.root,
		                                .label = name};
		rc = ws_snap_build(&src, id, out, err);
	}
	if (sk.fd >= 0)
		close(sk.fd);
	if (rc < 0)
		cl_wrap(err, "workspace snapshot %s", name);
	return rc;
}

void ws_snap_sweep(void)
{
	sweep_store(false);
}

int ws_snap_open(const char *id, struct ws_snap *s, cl_error *err)
{
	char path[4200];
	cl_autoclose int sdir = -1;

	s->fd = s->tree_fd = -1;
	if (!ws_snap_id_ok(id))
		return bad_id(id, err);
	sdir = snaps_fd(false, path, sizeof(path), err);
	if (sdir < 0 && sdir != -ENOENT)
		return sdir;
	if (sdir < 0 || (s->fd = openat(sdir, id, DIR_FLAGS)) < 0)
		return sdir >= 0 && errno != ENOENT ? cl_fail_errno(err, "opening workspace snapshot %s", id)
		       : cl_fail(err, 0, "there is no workspace snapshot %s (cloister workspace snapshots "
		                 "lists them)", id);
	if (flock(s->fd, LOCK_SH | LOCK_NB) < 0) {
		ws_snap_close(s);
		return cl_fail(err, 0, "workspace snapshot %s is being removed", id);
	}
	if ((s->tree_fd = openat(s->fd, "tree", DIR_FLAGS)) < 0) {
		ws_snap_close(s);
		return cl_fail_errno(err, "opening workspace snapshot %s", id);
	}
	if ((size_t)snprintf(s->tree, sizeof(s->tree), "%s/%s/tree", path, id) >= sizeof(s->tree)) {
		ws_snap_close(s);
		return cl_fail(err, ENAMETOOLONG, "workspace snapshot %s: path", id);
	}
	return 0;
}

void ws_snap_close(struct ws_snap *s)
{
	if (s->tree_fd >= 0)
		close(s->tree_fd);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = s->tree_fd = -1;
}

static json_t *read_meta(int sdir, const char *id)
{
	cl_autoclose int d = openat(sdir, id, DIR_FLAGS);
	cl_autoclose int f = d >= 0 ? openat(d, "meta.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
	cl_autofree char *text = NULL;
	size_t len = 0;
	json_t *m;

	if (f < 0 || cl_read_all(f, 1 << 16, &text, &len) < 0 || !(m = json_loads(text, 0, NULL)))
		return NULL;
	if (!json_is_object(m) || !json_is_string(json_object_get(m, "workspace")) ||
	    !json_is_string(json_object_get(m, "rootDir")) || !json_is_integer(json_object_get(m, "created"))) {
		json_decref(m);
		return NULL;
	}
	json_object_set_new(m, "id", json_string(id));
	return m;
}

static int by_created(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t cx = json_integer_value(json_object_get(x, "created"));
	json_int_t cy = json_integer_value(json_object_get(y, "created"));

	if (cx != cy)
		return cx < cy ? -1 : 1;
	return strcmp(json_string_value(json_object_get(x, "id")), json_string_value(json_object_get(y, "id")));
}

int ws_snap_list(json_t **out, cl_error *err)
{
	char path[4200];
	int sdir = snaps_fd(false, path, sizeof(path), err);
	json_t **v = NULL;
	size_t n = 0, cap = 0;
	DIR *d;
	struct dirent *de;

	*out = json_array();
	if (!*out)
		return cl_fail(err, ENOMEM, "listing workspace snapshots");
	if (sdir == -ENOENT)
		return 0;
	if (sdir < 0 || !(d = fdopendir(sdir))) {
		if (sdir >= 0)
			close(sdir);
		json_decref(*out);
		*out = NULL;
		return sdir < 0 ? sdir : cl_fail_errno(err, "listing %s", path);
	}
	while ((de = readdir(d))) {
		json_t *m;
		/* A valid id only: .tmp-* and .rm-* are unfinished, never listed. */
		if (!ws_snap_id_ok(de->d_name) || !(m = read_meta(dirfd(d), de->d_name)))
			continue;
		if (n == cap) {
			json_t **nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(json_t *));
			if (!nv) {
				json_decref(m);
				break;
			}
			v = nv;
		}
		v[n++] = m;
	}
	closedir(d);
	if (de) {
		for (size_t i = 0; i < n; i++)
			json_decref(v[i]);
		free(v);
		json_decref(*out);
		*out = NULL;
		return cl_fail(err, ENOMEM, "listing workspace snapshots");
	}
	if (n)
		qsort(v, n, sizeof(json_t *), by_created);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(*out, v[i]);
	free(v);
	return 0;
}

int ws_snap_remove(const char *id, cl_error *err)
{
	char path[4200], gone[64];
	cl_autoclose int sdir = -1;
	cl_autoclose int fd = -1;

	if (!ws_snap_id_ok(id))
		return bad_id(id, err);
	sdir = snaps_fd(false, path, sizeof(path), err);
	if (sdir < 0 && sdir != -ENOENT)
		return sdir;
	if (sdir < 0 || (fd = openat(sdir, id, DIR_FLAGS)) < 0)
		return cl_fail(err, 0, "there is no workspace snapshot %s", id);
	/* Runs started from it hold it shared. */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return cl_fail(err, 0, "workspace snapshot %s is in use by a running sandbox", id);
	/* Out of the namespace at once (a rename), then deleted: a killed
	 * removal leaves a .rm-* that gc finishes. */
	if (random_name(gone, sizeof(gone), ".rm-", err) < 0)
		return cl_error_code(err);
	if (renameat2(sdir, id, sdir, gone, RENAME_NOREPLACE) < 0)
		return cl_fail_errno(err, "removing workspace snapshot %s", id);
	int rc = cl_remove_tree_at(sdir, gone);
	if (rc < 0)
		return cl_fail(err, -rc, "removing workspace snapshot %s (what is left: %s/%s, removed by "
		                     "cloister gc)", id, path, gone);
	return 0;
}
