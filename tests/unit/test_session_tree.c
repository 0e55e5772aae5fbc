/* Unit tests for the sender of `cloister cp -r` (src/session/tree.c): when
 * the session stops reading (it refused the copy), every kind of record
 * whose write fails must say so with EPIPE and a message. The client blanks
 * its own message when the sender exits with one of its own, so a failed
 * write without one printed a bare "cloister: " (seen in CI, when the
 * failing write was a directory's record). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/session/tree.h"
#include "tests/unit/unit.h"

/* Sends the tree at dfd into a pipe nobody reads; the error it gives. */
static int send_unread(int dfd, cl_error *err)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		abort();
	close(p[0]);
	memset(err, 0, sizeof(*err));
	int rc = ss_tree_send(dfd, p[1], "src", err);
	close(p[1]);
	return rc;
}

static int mktree(char *dir, const char *what)
{
	char path[4096];
	int fd;

	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/%s", dir, what);
	if (strcmp(what, "dir") == 0) {
		if (mkdir(path, 0755) < 0)
			abort();
	} else if (strcmp(what, "file") == 0) {
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, "x", 1) != 1)
			abort();
		close(fd);
	} else if (symlink("/nonexistent", path) < 0) {
		abort();
	}
	return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static void unread_case(const char *what)
{
	char dir[] = "/tmp/cltree.XXXXXX", name[128], rm[256];
	cl_error err;
	int dfd = mktree(dir, what);

	snprintf(name, sizeof(name), "a %s into an unread stream fails with EPIPE", what);
	CHECK(name, send_unread(dfd, &err) < 0 && err.errnum == EPIPE);
	snprintf(name, sizeof(name), "a %s into an unread stream names the entry", what);
	CHECK(name, strstr(err.msg, "src/") && strstr(err.msg, "sending"));
	close(dfd);
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	if (system(rm) != 0)
		abort();
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);   /* as the client's sender does */
	unread_case("dir");
	unread_case("file");
	unread_case("link");
	UNIT_MAIN_END;
}
