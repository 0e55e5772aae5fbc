/* Applying a bundle: verify everything first (preimage blob ids, exec
 * bits, hunk context, result blob ids, no symlink on any path) from the
 * parsed bundle (hunk.c) and nothing else, stage the
 * new contents in a private dir inside the target, then rename into place
 * with an undo log; any failure undoes what was done. */
#define _GNU_SOURCE
#include "src/workspace/apply.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/fdio.h"
#include "src/policy/policy.h"
#include "src/util/fsafe.h"
#include "src/workspace/hunk.h"
#include "src/workspace/patch.h"
#include "src/workspace/state.h"
#include "src/workspace/wsdl.h"

enum kind { K_ADD, K_MODIFY, K_DELETE };

struct job {
	const char *path;
	enum kind kind;
	const struct ws_patch *p;
	char dir[4096];
	const char *base;
	char *data;           /* new content (add/modify) */
	size_t len;
	int done;             /* step reached in commit, for the undo */
	char **made;          /* dirs created for an add, outermost first */
};

struct ctx {
	int tfd;
	const char *target;
	struct job *jobs;
	size_t n;
	size_t conflicts;
	FILE *report;
	cl_error *err;
	int fatal;            /* a bad bundle or an escaping path */
	bool refuse_outside_links;
};

static void conflict(struct ctx *c, const char *path, const char *why)
{
	c->conflicts++;
	fprintf(c->report, "conflict: %s: %s\n", path, why);
}

static int split_path(struct job *j)
{
	const char *slash = strrchr(j->path, '/');

	snprintf(j->dir, sizeof(j->dir), "%.*s", slash ? (int)(slash - j->path) : 0, j->path);
	j->base = slash ? slash + 1 : j->path;
	return 0;
}

static bool deleted_here(const struct ctx *c, const char *path)
{
	for (size_t i = 0; i < c->n; i++) {
		size_t l = strlen(c->jobs[i].path);
		if (c->jobs[i].kind == K_DELETE && !strncmp(c->jobs[i].path, path, l) &&
		    (path[l] == '\0' || path[l] == '/'))
			return true;
	}
	return false;
}

/* Another add of this bundle is a file or link at a parent of j's path:
 * writing j would go through it (a link) or fail midway (a file). */
static bool added_above(const struct ctx *c, const struct job *j)
{
	for (size_t i = 0; i < c->n; i++) {
		size_t l = strlen(c->jobs[i].path);
		if (c->jobs[i].kind == K_ADD && !strncmp(c->jobs[i].path, j->path, l) && j->path[l] == '/')
			return true;
	}
	return false;
}

/* Reads the current file of a modify/delete (a symlink's target) and
 * checks it is the base. */
static int check_preimage(struct ctx *c, struct job *j, int pfd, char **old, size_t *old_len)
{
	struct stat st;
	char oid[WS_OID_HEX + 1];
	int rc;

	*old = NULL;
	*old_len = 0;
	if (fstatat(pfd, j->base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		conflict(c, j->p->path, errno == ENOENT ? "missing in the target" : strerror(errno));
		return 1;
	}
	if (j->p->old_link != S_ISLNK(st.st_mode) || (!S_ISLNK(st.st_mode) && !S_ISREG(st.st_mode))) {
		conflict(c, j->p->path, "changed type since the bundle's base");
		return 1;
	}
	if (S_ISLNK(st.st_mode)) {
		char t[4096];
		ssize_t n = readlinkat(pfd, j->base, t, sizeof(t));
		if (n < 0)
			return cl_fail_errno(c->err, "reading %s", j->p->path);
		if (!(*old = malloc((size_t)n + 1)))
			return cl_fail(c->err, ENOMEM, "reading %s", j->p->path);
		memcpy(*old, t, (size_t)n);
		*old_len = (size_t)n;
		ws_blob_id(t, (size_t)n, oid);
	} else {
		cl_autoclose int fd = openat(pfd, j->base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 || (rc = cl_read_all(fd, (size_t)1 << 32, old, old_len)) < 0)
			return cl_fail(c->err, fd < 0 ? errno : -rc, "reading %s", j->p->path);
		ws_blob_id(*old, *old_len, oid);
		if (((st.st_mode & S_IXUSR) != 0) != j->p->old_exec) {
			conflict(c, j->p->path, "its exec bit changed since the bundle's base");
			return 1;
		}
	}
	if (strcmp(oid, j->p->old_oid)) {
		conflict(c, j->p->path, "changed since the bundle's base");
		return 1;
	}
	return 0;
}

static int bad(struct ctx *c, const struct job *j, const char *why)
{
	c->fatal = 1;
	return cl_fail(c->err, 0, "patch %s: %s", j->p->path, why);
}

/* What the patch leaves at its path, from the parsed patch only. */
static int new_content(struct ctx *c, struct job *j, const char *old, size_t old_len)
{
	char why[256];
	int rc = ws_patch_result(j->p, old ? old : "", old_len, &j->data, &j->len, why, sizeof(why));

	if (rc > 0)
		conflict(c, j->p->path, why);
	else if (rc < 0)
		return bad(c, j, why);
	return rc;
}

static int verify_one(struct ctx *c, struct job *j)
{
	cl_autoclose int pfd = -1;
	char *old = NULL;   /* freed by hand: clang-tidy 14 loses cl_autofree here */
	size_t old_len = 0;
	int rc;

	split_path(j);
	pfd = cl_open_beneath(c->tfd, j->dir, O_PATH | O_DIRECTORY);
	/* git apply's "beyond a symbolic link": nothing is written through
	 * a link, unless this bundle deletes it first (a type change). */
	if ((pfd == -ELOOP || pfd == -EXDEV) && !(j->kind == K_ADD && deleted_here(c, j->dir))) {
		conflict(c, j->p->path, "its path goes through a symlink in the target");
		return 1;
	}
	if (j->kind == K_ADD && added_above(c, j)) {
		conflict(c, j->p->path, "a parent of it is a file or symlink this bundle adds");
		return 1;
	}
	/* An added link's target is its whole content, computed once here
	 * (an add has no preimage) and kept for the stage below. */
	bool have_content = false;
	if (j->kind == K_ADD && j->p->new_link && c->refuse_outside_links) {
		rc = new_content(c, j, NULL, 0);
		if (rc)
			return rc;
		if (ws_link_leaves_tree(j->path, j->data, j->len)) {
			conflict(c, j->p->path, "a symlink that points out of the tree (--refuse-outside-links)");
			return 1;
		}
		have_content = true;
	}
	if (j->kind != K_ADD) {
		if (pfd < 0) {
			conflict(c, j->p->path, "missing in the target");
			return 1;
		}
		if ((rc = check_preimage(c, j, pfd, &old, &old_len)) != 0) {
			free(old);
			return rc;
		}
	} else if (pfd >= 0 && faccessat(pfd, j->base, F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
	           !deleted_here(c, j->path)) {
		conflict(c, j->p->path, "already exists in the target");
		return 1;
	} else if (pfd == -ENOTDIR && !deleted_here(c, j->dir)) {
		conflict(c, j->p->path, "a parent in the target is not a directory");
		return 1;
	} else if (pfd < 0 && pfd != -ENOENT && pfd != -ENOTDIR && pfd != -ELOOP && pfd != -EXDEV) {
		return cl_fail(c->err, -pfd, "opening the parent of %s", j->p->path);
	}
	/* A delete's hunks are checked too: what show says is removed is
	 * what the file held. */
	rc = have_content ? 0 : new_content(c, j, old, old_len);
	free(old);
	if (j->kind == K_DELETE) {
		free(j->data);
		j->data = NULL;
	}
	return rc;
}

/* Parent dirs of an add, made below the target, never through a link. */
static int make_parents(struct ctx *c, struct job *j)
{
	char part[4096];
	const char *s = j->dir;
	int rc = 0;

	while (*s) {
		const char *slash = strchr(s, '/');
		size_t upto = slash ? (size_t)(slash - j->dir) : strlen(j->dir);
		snprintf(part, sizeof(part), "%.*s", (int)upto, j->dir);
		cl_autoclose int fd = cl_open_beneath(c->tfd, part, O_PATH | O_DIRECTORY);
		if (fd == -ENOENT) {
			const char *slash2 = strrchr(part, '/');
			char parent[4096];
			snprintf(parent, sizeof(parent), "%.*s", slash2 ? (int)(slash2 - part) : 0, part);
			cl_autoclose int pfd = cl_open_beneath(c->tfd, parent, O_PATH | O_DIRECTORY);
			if (pfd < 0 || mkdirat(pfd, slash2 ? slash2 + 1 : part, 0755) < 0)
				return cl_fail(c->err, pfd < 0 ? -pfd : errno, "creating directory %s", part);
			if (!cl_strv_push(&j->made, part))
				return cl_fail(c->err, ENOMEM, "creating directory %s", part);
		} else if (fd < 0) {
			return cl_fail(c->err, -fd, "opening directory %s", part);
		}
		s = slash ? slash + 1 : j->dir + strlen(j->dir);
	}
	return rc;
}

/* A link is made in the staging dir with symlinkat (never opened) and
 * renamed into place like a file; its target was checked at parse time
 * (no NUL, shorter than PATH_MAX). */
static int stage_link(int sfd, const char *name, const struct job *j)
{
	char t[4096];

	if (j->len >= sizeof(t)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(t, j->data, j->len);
	t[j->len] = '\0';
	return symlinkat(t, sfd, name);
}

static int stage(struct ctx *c, int sfd)
{
	char name[32];

	for (size_t i = 0; i < c->n; i++) {
		struct job *j = &c->jobs[i];
		if (j->kind == K_DELETE)
			continue;
		snprintf(name, sizeof(name), "n%zu", i);
		if (j->p->new_link) {
			if (stage_link(sfd, name, j) < 0)
				return cl_fail_errno(c->err, "staging the symlink %s", j->p->path);
			continue;
		}
		cl_autoclose int fd = openat(sfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		int rc = fd < 0 ? -errno : cl_write_all(fd, j->data, j->len);
		if (rc == 0 && fchmod(fd, j->p->new_exec ? 0755 : 0644) < 0)
			rc = -errno;
		if (rc < 0)
			return cl_fail(c->err, -rc, "staging %s", j->p->path);
	}
	return 0;
}

/* One job's step: deletes move the file into the staging dir, modifies
 * exchange it with the staged one, adds rename the staged one in. */
static int commit_one(struct ctx *c, int sfd, size_t i)
{
	struct job *j = &c->jobs[i];
	char name[32];
	int rc;

	snprintf(name, sizeof(name), "%c%zu", j->kind == K_DELETE ? 'd' : 'n', i);
	if (j->kind == K_ADD && (rc = make_parents(c, j)) < 0)
		return rc;
	cl_autoclose int pfd = cl_open_beneath(c->tfd, j->dir, O_RDONLY | O_DIRECTORY);
	if (pfd < 0)
		return cl_fail(c->err, -pfd, "opening the parent of %s", j->p->path);
	if (j->kind == K_DELETE)
		rc = renameat(pfd, j->base, sfd, name);
	else if (j->kind == K_MODIFY)
		rc = renameat2(sfd, name, pfd, j->base, RENAME_EXCHANGE);
	else
		rc = renameat2(sfd, name, pfd, j->base, RENAME_NOREPLACE);
	if (rc < 0)
		return cl_fail_errno(c->err, "putting %s in place", j->p->path);
	j->done = 1;
	return 0;
}

static void undo_one(struct ctx *c, int sfd, size_t i)
{
	struct job *j = &c->jobs[i];
	char name[32];
	int pfd;

	snprintf(name, sizeof(name), "%c%zu", j->kind == K_DELETE ? 'd' : 'n', i);
	pfd = cl_open_beneath(c->tfd, j->dir, O_RDONLY | O_DIRECTORY);
	if (pfd >= 0 && j->done) {
		if (j->kind == K_DELETE)
			renameat(sfd, name, pfd, j->base);
		else if (j->kind == K_MODIFY)
			renameat2(sfd, name, pfd, j->base, RENAME_EXCHANGE);
		else
			renameat(pfd, j->base, sfd, name);
	}
	if (pfd >= 0)
		close(pfd);
	for (size_t k = cl_strv_len(j->made); k-- > 0;)
		unlinkat(c->tfd, j->made[k], AT_REMOVEDIR);
}

/* Directories a delete emptied go too (git keeps no empty dirs). */
static void prune_dirs(struct ctx *c, const struct job *j)
{
	char d[4096];

	snprintf(d, sizeof(d), "%s", j->dir);
	while (d[0] && unlinkat(c->tfd, d, AT_REMOVEDIR) == 0) {
		char *slash = strrchr(d, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
}

static int open_staging(struct ctx *c, char *name, size_t len)
{
	unsigned char r[6];

	for (int tries = 0; tries < 16; tries++) {
		if (getrandom(r, sizeof(r), 0) != sizeof(r))
			break;
		snprintf(name, len, ".cloister-apply-%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4], r[5]);
		if (mkdirat(c->tfd, name, 0700) == 0)
			return openat(c->tfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (errno != EEXIST)
			break;
	}
	return -1;
}

static int commit(struct ctx *c)
{
	static const enum kind order[] = {K_DELETE, K_MODIFY, K_ADD};
	char sname[64];
	int sfd = open_staging(c, sname, sizeof(sname)), rc;
	size_t done = 0, *seq = calloc(c->n + 1, sizeof(*seq));

	if (sfd < 0 || !seq) {
		free(seq);
		if (sfd >= 0)
			close(sfd);
		return cl_fail_errno(c->err, "creating the staging directory in %s", c->target);
	}
	for (size_t o = 0; o < 3; o++)
		for (size_t i = 0; i < c->n; i++)
			if (c->jobs[i].kind == order[o])
				seq[done++] = i;
	rc = stage(c, sfd);
	for (size_t k = 0; rc == 0 && k < c->n; k++)
		rc = commit_one(c, sfd, seq[k]);
	if (rc < 0)
		for (size_t k = c->n; k-- > 0;)
			undo_one(c, sfd, seq[k]);
	else
		for (size_t k = 0; k < c->n; k++)
			if (c->jobs[k].kind == K_DELETE)
				prune_dirs(c, &c->jobs[k]);
	close(sfd);
	cl_remove_tree_or_say(c->tfd, sname, "the staging directory of diff apply");
	free(seq);
	return rc;
}

enum ws_apply_result ws_apply(const struct ws_bundle *b, const char *target, bool check_only, FILE *report,
                              cl_error *err)
{
	return ws_apply_links(b, target, check_only, false, report, err);
}

enum ws_apply_result ws_apply_links(const struct ws_bundle *b, const char *target, bool check_only,
                                    bool refuse_outside_links, FILE *report, cl_error *err)
{
	struct ctx c = {.target = target, .report = report, .err = err,
	                .refuse_outside_links = refuse_outside_links};
	enum ws_apply_result res = WS_APPLIED;
	int rc = 0;

	if (ws_dl_load(err) < 0)
		return WS_IO_FAILED;
	c.tfd = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c.tfd < 0) {
		cl_fail_errno(err, "target %s", target);
		return WS_BAD_BUNDLE;
	}
	c.n = b->n;
	c.jobs = calloc(c.n + 1, sizeof(*c.jobs));
	if (!c.jobs) {
		close(c.tfd);
		cl_fail(err, ENOMEM, "applying");
		return WS_IO_FAILED;
	}
	/* Every job's path and kind first: a patch's checks look at the
	 * others (a delete that frees the path of an add). */
	for (size_t i = 0; i < c.n; i++) {
		c.jobs[i].p = &b->patches[i];
		c.jobs[i].path = b->patches[i].name;
		c.jobs[i].kind = b->patches[i].op == WS_OP_ADD ? K_ADD : b->patches[i].op == WS_OP_DELETE ? K_DELETE
		                 : K_MODIFY;
	}
	for (size_t i = 0; i < c.n && rc >= 0 && !c.fatal; i++)
		rc = verify_one(&c, &c.jobs[i]);
	/* Nothing is committed unless every job verified: a host failure
	 * or a conflict stops before the first write. */
	if (c.fatal)
		res = WS_BAD_BUNDLE;
	else if (rc >= 0 && c.conflicts)
		res = WS_CONFLICT;
	else if (rc < 0 || (!check_only && commit(&c) < 0))
		res = WS_IO_FAILED;
	for (size_t i = 0; i < c.n; i++) {
		free(c.jobs[i].data);
		cl_strv_free(c.jobs[i].made);
	}
	free(c.jobs);
	close(c.tfd);
	return res;
}
