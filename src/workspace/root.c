/* Where workspace state lives and how it is opened: the state root, its
 * directories made 0700 without following a link, names checked, small
 * state files read and written whole. Shared by state.c and snapshot.c. */
#define _GNU_SOURCE
#include "src/workspace/root.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/fdio.h"
#include "src/util/fsafe.h"

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

/* mkdir -p with 0700 for what it creates; path is resolved already
 * (ws_resolve_existing), so no component may be a symlink. */
int ws_open_dirs(const char *path, cl_error *err)
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

/* realpath of the longest existing prefix of path, the rest appended. */
int ws_resolve_existing(const char *path, char *out, size_t len, cl_error *err)
{
	char buf[4096], real[4096];
	const char *tail = "";
	char *slash;

	snprintf(buf, sizeof(buf), "%s", path);
	while (!realpath(buf, real)) {
		if (errno != ENOENT || !(slash = strrchr(buf, '/')) || slash == buf)
			return cl_fail_errno(err, "resolving the workspace state directory %s", path);
		*slash = '\0';
		tail = path + (slash - buf);
	}
	if ((size_t)snprintf(out, len, "%s%s", strcmp(real, "/") ? real : "", tail) >= len)
		return cl_fail(err, ENAMETOOLONG, "the workspace state directory %s", path);
	return 0;
}

int ws_state_open(const char *sub, cl_error *err)
{
	char root[4096], real[4096];
	int rc;

	if ((rc = ws_state_root(root, sizeof(root) - 64, err)) < 0)
		return rc;
	snprintf(root + strlen(root), sizeof(root) - strlen(root), "/%.60s", sub);
	if ((rc = ws_resolve_existing(root, real, sizeof(real), err)) < 0)
		return rc;
	return ws_open_dirs(real, err);
}

bool ws_name_ok(const char *n)
{
	size_t l = strlen(n);

	return l > 0 && l <= 128 && strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == l &&
	       strcmp(n, ".") && strcmp(n, "..");
}

int ws_read_small(int dfd, const char *name, char *buf, size_t len)
{
	cl_autoclose int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);

	buf[n > 0 ? n : 0] = '\0';
	return fd < 0 ? -errno : 0;
}

int ws_write_small(int dfd, const char *name, const char *text)
{
	char tmp[64];
	int fd, rc;

	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	rc = cl_write_all(fd, text, strlen(text));
	close(fd);
	if (rc == 0 && renameat(dfd, tmp, dfd, name) < 0)
		rc = -errno;
	return rc;
}
