/* --output-limit relay: the supervisor copies the sandbox's stdout/stderr
 * pipes to its own fd 1/2 until the shared budget is spent, then discards. */
#define _GNU_SOURCE
#include "ns/output.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/util/fdio.h"

#define CHUNK 65536
/* POLLOUT on a pipe promises room for PIPE_BUF bytes: a write of at most
 * that never blocks, although our fd 1/2 are blocking (they are the
 * caller's open files: O_NONBLOCK on them would change the caller's too). */
#define SAFE_WRITE 4096

struct stream {
	struct ns_ev ev;      /* the pipe's read end; ev.fd -1 once closed */
	struct ns_ev out_ev;  /* our fd 1/2, watched only while it is full */
	int wfd;              /* write end, the sandbox's fd 1 or 2; -1 once given away */
	int target;           /* our own fd 1 or 2 */
	bool big_writes;      /* a regular file: writes never wait for a reader */
	char buf[CHUNK];      /* read but not yet written */
	size_t off, len;
};

struct ns_output {
	struct stream s[2];
	int epfd;
	uint64_t left;        /* budget still to pass on */
	bool truncated;
	sigset_t old_mask;    /* SIGPIPE blocked while we relay */
};

static void stream_close(struct ns_output *o, struct stream *st)
{
	if (st->ev.fd >= 0) {
		epoll_ctl(o->epfd, EPOLL_CTL_DEL, st->ev.fd, NULL);
		close(st->ev.fd);
		st->ev.fd = -1;
	}
	if (st->out_ev.fd >= 0)
		epoll_ctl(o->epfd, EPOLL_CTL_DEL, st->out_ev.fd, NULL);
	st->out_ev.fd = -1;
	st->off = st->len = 0;
}

/* While our reader is slow, the pipe is not read (the command then blocks,
 * as with passthrough) and we wait for room on our fd instead: the
 * supervisor itself never blocks, so signals and --timeout are served. */
static void wait_for_room(struct ns_output *o, struct stream *st, bool waiting)
{
	struct epoll_event in = {.events = EPOLLIN, .data.ptr = &st->ev};
	struct epoll_event out = {.events = EPOLLOUT, .data.ptr = &st->out_ev};

	if (waiting == (st->out_ev.fd >= 0))
		return;
	if (waiting) {
		/* Not pollable: flush() writes blocking, the pipe stays watched. */
		if (epoll_ctl(o->epfd, EPOLL_CTL_ADD, st->target, &out) < 0)
			return;
		st->out_ev.fd = st->target;
		epoll_ctl(o->epfd, EPOLL_CTL_DEL, st->ev.fd, NULL);
		return;
	}
	epoll_ctl(o->epfd, EPOLL_CTL_DEL, st->target, NULL);
	st->out_ev.fd = -1;
	epoll_ctl(o->epfd, EPOLL_CTL_ADD, st->ev.fd, &in);
}

/* Writes what is pending without blocking (unless block). False if our
 * reader is gone: the stream is then closed. */
static bool flush(struct ns_output *o, struct stream *st, bool block)
{
	while (st->off < st->len) {
		struct pollfd pfd = {.fd = st->target, .events = POLLOUT};
		size_t n = st->len - st->off;
		ssize_t w;
		if (!block && !st->big_writes) {
			if (poll(&pfd, 1, 0) == 0) {
				wait_for_room(o, st, true);
				if (st->out_ev.fd >= 0)
					return true;
			}
			if (n > SAFE_WRITE)
				n = SAFE_WRITE;
		}
		w = write(st->target, st->buf + st->off, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			stream_close(o, st);
			return false;
		}
		st->off += (size_t)w;
	}
	st->off = st->len = 0;
	if (st->ev.fd >= 0)
		wait_for_room(o, st, false);
	return true;
}

/* One read from the pipe; false at EOF, on an error or an empty pipe. */
static bool relay_once(struct ns_output *o, struct stream *st, bool block)
{
	ssize_t n = read(st->ev.fd, st->buf, sizeof(st->buf));
	size_t pass;

	if (n < 0 && errno == EINTR)
		return true;
	if (n <= 0) {
		if (n == 0 || errno != EAGAIN)
			stream_close(o, st);
		return false;
	}
	pass = (uint64_t)n < o->left ? (size_t)n : (size_t)o->left;
	if (pass < (size_t)n)
		o->truncated = true;
	o->left -= pass;
	st->off = 0;
	st->len = pass;
	return flush(o, st, block) && st->len == 0;
}

static int open_stream(struct ns_output *o, struct stream *st, int target, cl_error *err)
{
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = &st->ev};
	struct stat sb;
	int fds[2];

	st->ev.kind = st->out_ev.kind = NS_EV_OUTPUT;
	st->ev.owner = st->out_ev.owner = st;
	st->target = target;
	st->big_writes = fstat(target, &sb) == 0 && (S_ISREG(sb.st_mode) || S_ISBLK(sb.st_mode));
	if (pipe2(fds, O_CLOEXEC) < 0)
		return cl_fail_errno(err, "--output-limit: creating a pipe");
	st->ev.fd = fds[0];
	st->wfd = fds[1];
	/* Only our end is non-blocking; the command's stays as usual. */
	if (fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0 ||
	    epoll_ctl(o->epfd, EPOLL_CTL_ADD, fds[0], &e) < 0)
		return cl_fail_errno(err, "--output-limit: watching the pipe");
	return 0;
}

int ns_output_open(const struct cl_policy *p, int epfd, struct ns_output **out, cl_error *err)
{
	struct ns_output *o;
	sigset_t pipe_set;
	int rc = 0;

	*out = NULL;
	if (!p->output_limit)
		return 0;
	o = calloc(1, sizeof(*o));
	if (!o)
		return cl_fail(err, ENOMEM, "--output-limit");
	o->epfd = epfd;
	o->left = p->output_limit;
	/* Before anything can fail: ns_output_close must not close fd 0. */
	for (int i = 0; i < 2; i++)
		o->s[i].ev.fd = o->s[i].out_ev.fd = o->s[i].wfd = -1;
	/* A reader of ours that went away must cost the command its stream
	 * (as with passthrough), not kill the supervisor: EPIPE, not SIGPIPE.
	 * The command gets the caller's mask back before exec. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, &o->old_mask);
	*out = o;
	for (int i = 0; rc == 0 && i < 2; i++)
		rc = open_stream(o, &o->s[i], i + 1, err);
	return rc;
}

int ns_output_child(const struct ns_output *o, cl_error *err)
{
	if (!o)
		return 0;
	for (int i = 0; i < 2; i++) {
		/* dup2 clears CLOEXEC on the copy: fd 1/2 reach the command. */
		if (dup2(o->s[i].wfd, o->s[i].target) < 0)
			return cl_fail_errno(err, "redirecting fd %d to the output relay", o->s[i].target);
		/* (A caller that started us with fd 1 or 2 closed can get a pipe
		 * end there; it is then already in place.) */
		if (o->s[i].wfd != o->s[i].target)
			close(o->s[i].wfd);
		if (o->s[i].ev.fd > 2)
			close(o->s[i].ev.fd);
	}
	return 0;
}

void ns_output_parent(struct ns_output *o)
{
	for (int i = 0; o && i < 2; i++) {
		if (o->s[i].wfd >= 0)
			close(o->s[i].wfd);
		o->s[i].wfd = -1;
	}
}

void ns_output_event(struct ns_output *o, struct ns_ev *ev)
{
	struct stream *st = ev->owner;

	if (!o || st->ev.fd < 0)
		return;
	if (ev == &st->out_ev)
		flush(o, st, false);
	else
		relay_once(o, st, false);
}

bool ns_output_finish(struct ns_output *o, bool wait)
{
	if (!o)
		return false;
	/* init has exited and the pid namespace with it, so every write end
	 * is closed and what is left is buffered. A write end held outside
	 * the namespace would keep the pipe open: an empty pipe also ends it. */
	for (int i = 0; i < 2; i++) {
		struct stream *st = &o->s[i];
		if (st->ev.fd >= 0 && flush(o, st, wait))
			while (st->ev.fd >= 0 && st->len == 0 && relay_once(o, st, wait))
				;
		/* Not waiting for a reader that does not read: what is left
		 * is not passed on. */
		if (st->ev.fd >= 0 && st->len > st->off)
			o->truncated = true;
	}
	return o->truncated;
}

void ns_output_close(struct ns_output *o)
{
	const struct timespec zero = {0, 0};
	sigset_t pipe_set;

	if (!o)
		return;
	ns_output_parent(o);
	for (int i = 0; i < 2; i++)
		stream_close(o, &o->s[i]);
	/* A SIGPIPE left pending by a failed write must not fire on unblock. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
		;
	sigprocmask(SIG_SETMASK, &o->old_mask, NULL);
	free(o);
}
