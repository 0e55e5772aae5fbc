/* Creating and cleaning the per-sandbox directories. Every level is opened
 * with O_NOFOLLOW, so a symlink planted in rootDir/.smithers cannot
 * redirect the run elsewhere. */
#define _GNU_SOURCE
#include "src/sandbox/layout.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util/fsafe.h"

int sb_layout_paths(const char *root_dir, const char *run_id, const char *sandbox_id,
                    struct sb_layout *l, struct sb_error *e)
{
	int n;

	memset(l, 0, sizeof(*l));
	l->root_fd = l->request_fd = l->result_fd = l->tmp_fd = -1;
	/* Where rootDir ends is known here, not searched for later: rootDir
	 * may itself contain "/.smithers/sandboxes/". */
	l->root_dir_len = strlen(root_dir);
	if (l->root_dir_len && root_dir[l->root_dir_len - 1] == '/')
		l->root_dir_len--;
	n = snprintf(l->root, sizeof(l->root), "%.*s/.smithers/sandboxes/%s/%s",
	             (int)l->root_dir_len, root_dir, run_id, sandbox_id);
	if (n < 0 || (size_t)n >= sizeof(l->root))
		return sb_fail(e, SB_TOOL_PATH_INVALID, 0, NULL, "Sandbox directory path is too long.");
	snprintf(l->request, sizeof(l->request), "%s/request", l->root);
	snprintf(l->result, sizeof(l->result), "%s/result", l->root);
	snprintf(l->tmp, sizeof(l->tmp), "%s/tmp", l->root);
	snprintf(l->result_file, sizeof(l->result_file), "%s/tmp/sandbox-result.json", l->root);
	snprintf(l->empty_profile, sizeof(l->empty_profile), "%s/tmp/empty-profile", l->root);
	return 0;
}

static int open_dir_at(int parent, const char *name, bool must_be_new, struct sb_error *e,
                       const char *shown)
{
	int fd;

	if (mkdirat(parent, name, 0700) < 0 && (errno != EEXIST || must_be_new))
		return errno == EEXIST
		       ? sb_fail(e, SB_INVALID_INPUT, 0, json_pack("{s:s}", "path", shown),
		                 "Sandbox %s already exists; use a new sandboxId (or remove it).", shown)
		       : sb_fail(e, SB_PROCESS_SPAWN_FAILED, errno, NULL, "creating %s", shown);
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP || errno == ENOTDIR
		       ? sb_fail(e, SB_TOOL_PATH_ESCAPE, 0, json_pack("{s:s}", "path", shown),
		                 "Path escapes sandbox root (via symlink): %s", shown)
		       : sb_fail(e, SB_PROCESS_SPAWN_FAILED, errno, NULL, "opening %s", shown);
	return fd;
}

/* Opens rootDir (the caller's: links allowed) and then each level below it
 * with O_NOFOLLOW, making missing ones when `create`. Returns the sandbox
 * directory's fd. */
static int open_levels(const struct sb_layout *l, bool create, struct sb_error *e)
{
	char rel[PATH_MAX];
	int cur, next;
	char *save = NULL, *part;

	snprintf(rel, sizeof(rel), "%.*s", (int)l->root_dir_len, l->root);
	cur = open(rel[0] ? rel : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return sb_fail(e, SB_INVALID_INPUT, errno, json_pack("{s:s}", "field", "rootDir"),
		               "rootDir %s must be an existing directory", rel);
	snprintf(rel, sizeof(rel), "%s", l->root + l->root_dir_len + 1);
	for (part = strtok_r(rel, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		next = create ? open_dir_at(cur, part, false, e, part)
		              : openat(cur, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && !create)
			next = sb_fail(e, SB_EXECUTION_FAILED, errno, NULL, "opening %s", part);
		close(cur);
		if (next < 0)
			return next;
		cur = next;
	}
	return cur;
}

int sb_layout_create(struct sb_layout *l, struct sb_error *e)
{
	int cur = open_levels(l, true, e);

	if (cur < 0)
		return cur;
	l->root_fd = cur;
	if ((l->request_fd = open_dir_at(cur, "request", true, e, l->request)) < 0)
		return l->request_fd;
	if ((l->result_fd = open_dir_at(cur, "result", true, e, l->result)) < 0)
		return l->result_fd;
	if ((l->tmp_fd = open_dir_at(cur, "tmp", false, e, l->tmp)) < 0)
		return l->tmp_fd;
	return 0;
}

/* A run id or sandbox id from the database names one directory level. */
static bool one_level(const char *id)
{
	return *id && !strchr(id, '/') && strcmp(id, ".") != 0 && strcmp(id, "..") != 0;
}

int sb_layout_sweep(const char *root_dir, const char *run_id, const char *sandbox_id,
                    struct sb_error *e)
{
	struct sb_layout l;
	int rc;

	if (!*root_dir || !one_level(run_id) || !one_level(sandbox_id))
		return sb_fail(e, SB_INVALID_INPUT, 0, NULL, "not a sandbox directory: %s/%s", run_id,
		               sandbox_id);
	if ((rc = sb_layout_paths(root_dir, run_id, sandbox_id, &l, e)) < 0)
		return rc;
	l.root_fd = open_levels(&l, false, e);
	if (l.root_fd == -ENOENT) {
		sb_error_clear(e);   /* killed before it made its directories */
		return 0;
	}
	if (l.root_fd < 0)
		return l.root_fd;
	rc = sb_layout_cleanup(&l, e);
	sb_layout_close(&l);
	return rc;
}

int sb_layout_cleanup(struct sb_layout *l, struct sb_error *e)
{
	int rc = 0, r;

	if (l->root_fd < 0)
		return 0;
	if ((r = cl_remove_tree_at(l->root_fd, "request")) < 0)
		rc = sb_fail(e, SB_EXECUTION_FAILED, -r, NULL, "removing %s", l->request);
	if ((r = cl_remove_tree_at(l->root_fd, "tmp")) < 0 && rc == 0)
		rc = sb_fail(e, SB_EXECUTION_FAILED, -r, NULL, "removing %s", l->tmp);
	return rc;
}

void sb_layout_close(struct sb_layout *l)
{
	int *fds[] = {&l->root_fd, &l->request_fd, &l->result_fd, &l->tmp_fd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(*fds); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}
