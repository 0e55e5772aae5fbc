/* Workspace state on the host: every level is made 0700 and opened with
 * O_NOFOLLOW, the run dir is new (never reused), the overlay layers reach
 * the child by path (see add_mount). */
#define _GNU_SOURCE
#include "src/workspace/state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/cleanup.h"

int ws_state_root(char *out, size_t len, cl_error *err)
{
	const char *env = getenv("CLOISTER_STATE_DIR"), *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (env && env[0] == '/')
		n = snprintf(out, len, "%s", env);
	else if (geteuid() == 0)
		n = snprintf(out, len, "/var/lib/cloister");
	else if (xdg && xdg[0] == '/')
		n = snprintf(out, len, "%s/cloister", xdg);
	else if (home && home[0] == '/')
		n = snprintf(out, len, "%s/.local/state/cloister", home);
	else
		return cl_fail(err, 0, "no state directory for workspaces: set CLOISTER_STATE_DIR or HOME");
	return n < 0 || (size_t)n >= len ? cl_fail(err, ENAMETOOLONG, "state directory path") : 0;
}

/* mkdir -p with 0700 for what it creates; no component may be a symlink
 * below the first existing ancestor the caller named. */
static int open_dirs(const char *path, cl_error *err)
{
	char buf[4096], *save = NULL, *part;
	int cur = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	snprintf(buf, sizeof(buf), "%s", path);
	for (part = strtok_r(buf, "/", &save); cur >= 0 && part; part = strtok_r(NULL, "/", &save)) {
		int next;
		if (mkdirat(cur, part, 0700) < 0 && errno != EEXIST) {
			close(cur);
			return cl_fail_errno(err, "creating the workspace state directory %s", path);
		}
		next = openat(cur, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(cur);
		if (next < 0)
			return cl_fail_errno(err, "opening the workspace state directory %s (no component may "
			                     "be a symlink)", path);
		cur = next;
	}
	return cur < 0 ? cl_fail_errno(err, "opening /") : cur;
}

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
	return w->run_fd < 0 ? cl_fail_errno(err, "opening the workspace run dir") : 0;
}

/* The layers go to the child by path: overlayfs clones each layer's mount
 * and refuses one outside the mounter's mount namespace, which an fd
 * opened here (before the child's namespace was copied) would be. */
static int add_mount(struct cl_policy *p, struct ws_run *w, const char *root, cl_error *err)
{
	char up[4200], work[4200];
	struct cl_mount *m;

	snprintf(up, sizeof(up), "%s/%s/upper", root, w->name);
	snprintf(work, sizeof(work), "%s/%s/work", root, w->name);
	m = cl_policy_add_mount(p, CL_MNT_OVERLAY, up, w->dir, CL_MF_VOLATILE);
	if (!m || !(m->ovl_work = strdup(work)) || !cl_strv_push(&m->ovl_lower, w->dir))
		return cl_fail(err, ENOMEM, "adding the workspace mount");
	return 0;
}

int ws_run_prepare(struct cl_policy *p, struct ws_run *w, cl_error *err)
{
	char root[4096];
	int rc;

	memset(w, 0, sizeof(*w));
	w->parent_fd = w->run_fd = w->lower_fd = w->upper_fd = w->work_fd = -1;
	/* A root caller's sandbox is an unmapped host id (docs/security.md):
	 * through the overlay root's files in DIR would be nobody's, neither
	 * writable nor copied up. Idmapped layers are not built yet. */
	if (p->host_uid != geteuid())
		return cl_fail(err, 0, "--workspace %s: as root it needs --host-root (the default "
		               "unprivileged identity cannot write root's files through the overlay; "
		               "docs/workspaces.md)", p->workspace);
	if (!realpath(p->workspace, w->dir))
		return cl_fail_errno(err, "--workspace %s", p->workspace);
	/* Captured against this fd, not the name: CLOEXEC, the sandbox never
	 * holds it. */
	w->lower_fd = open(w->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->lower_fd < 0)
		return cl_fail_errno(err, "--workspace %s: opening it as a directory", p->workspace);
	if ((rc = ws_state_root(root, sizeof(root) - 16, err)) < 0)
		goto fail;
	strcat(root, "/workspaces");
	if ((w->parent_fd = open_dirs(root, err)) < 0) {
		rc = w->parent_fd;
		goto fail;
	}
	if ((rc = make_run_dir(w, err)) < 0)
		goto fail;
	if ((w->upper_fd = rc = make_sub(w->run_fd, "upper", 0755, err)) < 0 ||
	    (w->work_fd = rc = make_sub(w->run_fd, "work", 0700, err)) < 0)
		goto fail;
	if ((rc = add_mount(p, w, root, err)) < 0)
		goto fail;
	return 0;
fail:
	ws_run_cleanup(w);
	return rc;
}

int ws_remove_tree_at(int parent, const char *name)
{
	int fd, rc = 0;
	DIR *d;
	struct dirent *de;

	if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES && fchmodat(parent, name, 0700, AT_SYMLINK_NOFOLLOW) == 0)
		fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOTDIR ? 0 : -errno;
	/* Ours (or, for root, anyone's): entries of a read-only dir go too. */
	fchmod(fd, 0700);
	if (!(d = fdopendir(fd))) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		int r = ws_remove_tree_at(dirfd(d), de->d_name);
		if (r < 0 && rc == 0)
			rc = r;
	}
	closedir(d);
	if (unlinkat(parent, name, AT_REMOVEDIR) < 0 && rc == 0 && errno != ENOENT)
		rc = -errno;
	return rc;
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
	close_fd(&w->run_fd);
	if (w->parent_fd >= 0 && w->name[0])
		ws_remove_tree_at(w->parent_fd, w->name);
	w->name[0] = '\0';
	close_fd(&w->parent_fd);
	close_fd(&w->lower_fd);
}
