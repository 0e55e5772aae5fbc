/* The client side of cp -r: a tree is streamed over a pipe (tree.h) that
 * the session's copy process reads or writes while we wait for its reply.
 * On the host, the tree sent is walked without following links (the
 * source may be a directory the sandbox can write to, through --rw), and
 * a tree received is built beside its destination and renamed in. */
#define _GNU_SOURCE
#include "src/session/cp_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/util/fsafe.h"
#include "src/session/client.h"
#include "src/session/cp_host.h"
#include "src/session/tree.h"

/* The reply's message without its "cloister: " prefix (we add ours). */
static int reply_error(const struct ss_reply *rep, cl_error *err)
{
	const char *m = rep->msg;

	if (strncmp(m, "cloister: ", 10) == 0)
		m += 10;
	return cl_fail(err, 0, "%s", m[0] ? m : "copy failed");
}

/* ===== sender: a child of ours writes the stream, we wait for the reply ===== */
static pid_t start_sender(int dirfd, const int pipe[2], const char *shown)
{
	pid_t pid = fork();

	if (pid == 0) {
		cl_error err = {0};
		int pipe_w = pipe[1];
		/* Not the read end: with it open here the write below could
		 * never see the session stop reading (it would block). */
		close(pipe[0]);
		/* A session that stops reading is an error reply, not a kill. */
		signal(SIGPIPE, SIG_IGN);
		if (ss_tree_send(dirfd, pipe_w, shown, &err) < 0) {
			/* The session stopped reading: its reply says why. */
			if (err.errnum == EPIPE)
				_exit(2);
			cl_error_print(&err);
			_exit(1);
		}
		_exit(0);
	}
	return pid;
}

int ss_cp_tree_in(const char *src, const char *key, const char *path, bool mkdirs, cl_error *err)
{
	struct ss_buf b = {0};
	struct ss_reply rep;
	char *copy = strdup(src), *base = copy ? basename(copy) : NULL;
	int dfd = ss_cp_src_open(src, true, err), p[2] = {-1, -1}, sock = -1, st = 0;
	int rc = -1;
	pid_t pid = -1;

	if (dfd < 0)
		goto out;
	ss_buf_add(&b, 0, "put");
	ss_buf_add(&b, 'P', path);
	ss_buf_add(&b, 'R', "1");
	if (mkdirs)
		ss_buf_add(&b, 'D', "1");
	if (base && base[0] && strcmp(base, ".") && strcmp(base, "..") && strcmp(base, "/"))
		ss_buf_add(&b, 'N', base);
	sock = ss_connect(key, NULL, err);
	if (sock < 0)
		goto out;
	if (pipe2(p, O_CLOEXEC) < 0 || (pid = start_sender(dfd, p, src)) < 0) {
		cl_fail_errno(err, "starting the copy");
		goto out;
	}
	/* Ours goes: the session's reader sees EOF when the sender is done. */
	close(p[1]);
	p[1] = -1;
	rc = ss_call(sock, &b, &p[0], 1, &rep, err);
	close(p[0]);
	p[0] = -1;
	waitpid(pid, &st, 0);
	pid = -1;
	if (rc == 0 && rep.code != 0)
		rc = reply_error(&rep, err);
	/* The sender said what went wrong (on stderr): that is the cause. */
	if (rc < 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1)
		err->msg[0] = '\0';
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
	if (sock >= 0)
		close(sock);
	if (dfd >= 0)
		close(dfd);
	ss_buf_free(&b);
	free(copy);
	return rc;
}

int ss_cp_tree_out(const char *key, const char *path, const char *dest, cl_error *err)
{
	struct ss_buf b = {0};
	struct ss_reply rep;
	char name[256], tmp[32];
	cl_error rerr = {0};
	int parent, tfd = -1, sock = -1, p[2] = {-1, -1}, rc = -1, got;

	parent = ss_cp_out_target(path, dest, name, sizeof(name), err);
	if (parent < 0)
		return -1;
	ss_buf_add(&b, 0, "get");
	ss_buf_add(&b, 'P', path);
	ss_buf_add(&b, 'R', "1");
	sock = ss_connect(key, NULL, err);
	if (sock < 0 || (tfd = ss_tree_mktemp(parent, tmp, err)) < 0)
		goto out;
	if (pipe2(p, O_CLOEXEC) < 0) {
		cl_fail_errno(err, "starting the copy");
		goto out;
	}
	if (ss_request(sock, &b, &p[1], 1, err) < 0)
		goto out;
	/* The session holds the write end now: EOF once its copy is done. */
	close(p[1]);
	p[1] = -1;
	got = ss_tree_recv(p[0], tfd, &rerr);
	/* A broken stream ends the sender too (EPIPE): the reply follows. */
	close(p[0]);
	p[0] = -1;
	if (ss_reply_read(sock, &rep, err) < 0)
		goto out;
	/* Whichever side failed first: a stream that ended early is the
	 * session's failure (its reply says why), else ours. */
	if (got < 0 && (got != -EPIPE || rep.code == 0))
		*err = rerr;
	else if (rep.code != 0)
		reply_error(&rep, err);
	else
		rc = ss_tree_commit(parent, tmp, name, dest, err);
out:
	if (rc < 0 && tfd >= 0)
		cl_remove_tree_or_say(parent, tmp, "the unfinished copy");
	if (tfd >= 0)
		close(tfd);
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
	if (sock >= 0)
		close(sock);
	close(parent);
	ss_buf_free(&b);
	return rc;
}
