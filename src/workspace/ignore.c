/* git's ignore rules of a workspace's base tree, matched by libgit2 in a
 * repository that exists only in memory: cloister reads every rule file
 * itself, beneath the tree, and hands libgit2 the text. */
#define _GNU_SOURCE
#include "src/workspace/ignore.h"

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
#include "src/workspace/wsdl.h"

/* git refuses ignore files over 100 MiB; a rule file of a real tree is a
 * few KiB, and a hostile one should not cost the capture its memory. */
#define WS_IGNORE_MAX (1u << 20)

/* Why not git_repository_open_ext on the workspace: the tree and its
 * .git are the sandbox's to write (a snapshot's tree, an applied bundle,
 * a hostile checkout), and opening it would read its .git/config, whose
 * core.excludesFile or include.path may name any host file or a fifo
 * (a read, or a capture hung on open). An in-memory repository has no
 * gitdir and no workdir: libgit2 reads no file of the tree, so its
 * owner-safety check (safe.directory) has nothing to guard and stays on,
 * and the only configuration it loads is the caller's own (system,
 * global, XDG), as git does: core.excludesFile comes from there. */
struct ws_ignore {
	git_repository *repo;
};

/* name in dfd when it is a regular file: never a link (git does not
 * follow a .gitignore link either), a fifo (open would block) or a device.
 * *buf NULL when there is nothing to read. */
static int read_rules(int dfd, const char *name, const char *shown, char **buf, cl_error *err)
{
	cl_autoclose int fd = -1;
	struct stat st;
	size_t len = 0;
	int rc;

	*buf = NULL;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return 0;
	/* O_NONBLOCK: a fifo swapped in after the stat opens without a writer. */
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	/* Unreadable: no rules from it (git warns and goes on); the capture
	 * then carries more, never less. */
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	rc = cl_read_all(fd, WS_IGNORE_MAX, buf, &len);
	if (rc == -EFBIG)
		return cl_fail(err, 0, "ignore file %s is larger than 1 MiB, the limit of an ignore file "
		               "(--workspace-ignore none captures without ignore rules)", shown);
	if (rc < 0)
		return cl_fail(err, -rc, "reading ignore file %s", shown);
	return 0;
}

/* dir with the glob characters escaped; false when a byte cannot be
 * written in a rule (a newline ends the line). */
static bool put_dir(FILE *f, const char *dir)
{
	for (const char *c = dir; *c; c++) {
		if (*c == '\n' || *c == '\r')
			return false;
		if (strchr("*?[\\", *c))
			fputc('\\', f);
		fputc(*c, f);
	}
	return true;
}

/* One line of dir/.gitignore as a rule of the tree's top: anchored (a
 * slash before its end) under /dir/, else at any depth below it
 * (/dir/ ** /). */
static bool put_line(FILE *f, const char *dir, const char *l, size_t n)
{
	bool neg = n && l[0] == '!', anchored;
	size_t m;

	if (!n || l[0] == '#')
		return true;
	if (neg)
		l++, n--;
	if (n && l[0] == '/')
		l++, n--, anchored = true;
	else
		anchored = false;
	m = n;
	while (m && (l[m - 1] == ' ' || l[m - 1] == '\t' || l[m - 1] == '\r'))
		m--;
	if (m && l[m - 1] == '/')
		m--;
	if (!m)
		return true;   /* "/" or "!" alone: no pattern */
	anchored = anchored || memchr(l, '/', m);
	fputs(neg ? "!/" : "/", f);
	if (!put_dir(f, dir))
		return false;
	fputs(anchored ? "/" : "/**/", f);
	fwrite(l, 1, n, f);
	fputc('\n', f);
	return true;
}

static int add_rules(struct ws_ignore *ig, const char *dir, const char *text, const char *shown,
                     cl_error *err)
{
	cl_autofree char *out = NULL;
	size_t olen = 0;
	FILE *f;
	bool ok = true;

	if (!*dir) {
		if (ws_git.ignore_add_rule(ig->repo, text) < 0)
			return cl_fail(err, EINVAL, "reading ignore file %s", shown);
		return 0;
	}
	if (!(f = open_memstream(&out, &olen)))
		return cl_fail(err, ENOMEM, "reading ignore file %s", shown);
	for (const char *l = text; ok && *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);
		ok = put_line(f, dir, l, n);
		l += n + (nl != NULL);
	}
	if (fclose(f) != 0 || !out)
		return cl_fail(err, ENOMEM, "reading ignore file %s", shown);
	/* A directory whose name cannot be written in a rule: its own rules
	 * are not used (the capture carries more, never less). */
	if (!ok || !olen)
		return 0;
	if (ws_git.ignore_add_rule(ig->repo, out) < 0)
		return cl_fail(err, EINVAL, "reading ignore file %s", shown);
	return 0;
}

int ws_ignore_load_dir(struct ws_ignore *ig, int dfd, const char *rel, cl_error *err)
{
	char shown[PATH_MAX + 16];
	cl_autofree char *text = NULL;
	int rc;

	snprintf(shown, sizeof(shown), "%s%s.gitignore", rel, *rel ? "/" : "");
	if ((rc = read_rules(dfd, ".gitignore", shown, &text, err)) < 0 || !text)
		return rc;
	return add_rules(ig, rel, text, shown, err);
}

/* .git/info/exclude of a .git directory at the top (a gitfile, as a
 * worktree's or submodule's, would lead out of the tree: not followed). */
static int load_exclude(struct ws_ignore *ig, int base_fd, cl_error *err)
{
	cl_autoclose int git = openat(base_fd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	cl_autoclose int info = -1;
	cl_autofree char *text = NULL;
	int rc;

	if (git < 0)
		return 0;
	if ((info = openat(git, "info", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 0;
	if ((rc = read_rules(info, "exclude", ".git/info/exclude", &text, err)) < 0 || !text)
		return rc;
	return add_rules(ig, "", text, ".git/info/exclude", err);
}

int ws_ignore_open(struct ws_ignore **out, int base_fd, cl_error *err)
{
	struct ws_ignore *ig = calloc(1, sizeof(*ig));
	int rc;

	*out = NULL;
	if (!ig)
		return cl_fail(err, ENOMEM, "reading the workspace's ignore rules");
	if (ws_git.repository_new(&ig->repo) < 0) {
		free(ig);
		return cl_fail(err, ENOMEM, "reading the workspace's ignore rules");
	}
	/* info/exclude first: a .gitignore's rules, added after it, win. */
	if ((rc = load_exclude(ig, base_fd, err)) < 0) {
		ws_ignore_free(ig);
		return rc;
	}
	*out = ig;
	return 0;
}

bool ws_ignore_match(struct ws_ignore *ig, const char *rel, bool is_dir)
{
	char path[PATH_MAX + 2];
	int ignored = 0;

	if (!ig)
		return false;
	/* A trailing slash tells libgit2 a directory (it has no tree to stat). */
	if ((size_t)snprintf(path, sizeof(path), "%s%s", rel, is_dir ? "/" : "") >= sizeof(path))
		return false;
	/* An error matches nothing: the capture carries more, never less. */
	return ws_git.ignore_path_is_ignored(&ignored, ig->repo, path) == 0 && ignored == 1;
}

void ws_ignore_free(struct ws_ignore *ig)
{
	if (!ig)
		return;
	ws_git.repository_free(ig->repo);
	free(ig);
}
