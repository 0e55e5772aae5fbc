/* --output-limit relay: the supervisor copies the sandbox's stdout/stderr
 * pipes to its own fd 1/2 until the shared budget is spent, then discards. */
#define _GNU_SOURCE
#include "ns/output.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "src/fdio.h"

#define CHUNK 65536

struct stream {
	struct ns_ev ev;      /* ev.fd: read end, -1 once at EOF */
	int wfd;              /* write end, the sandbox's fd 1 or 2; -1 once given away */
	int target;           /* where it goes: our own fd 1 or 2 */
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
}

int ns_output_open(const struct cl_policy *p, int epfd, struct ns_output **out, cl_error *err)
{
	struct ns_output *o;
	sigset_t pipe_set;

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
		o->s[i].ev.fd = o->s[i].wfd = -1;
	/* A reader of ours that went away must cost the command its stream
	 * (as with passthrough), not kill the supervisor: EPIPE, not SIGPIPE.
	 * The command gets the caller's mask back before exec. */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe_set, &o->old_mask);
	*out = o;
	for (int i = 0; i < 2; i++) {
		struct stream *st = &o->s[i];
		int fds[2];
		struct epoll_event e = {.events = EPOLLIN, .data.ptr = &st->ev};
		st->ev.kind = NS_EV_OUTPUT;
		st->ev.owner = st;
		st->target = i + 1;
		if (pipe2(fds, O_CLOEXEC) < 0)
			return cl_fail_errno(err, "--output-limit: creating a pipe");
		st->ev.fd = fds[0];
		st->wfd = fds[1];
		/* Only our end is non-blocking; the command's stays as usual. */
		if (fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0 ||
		    epoll_ctl(epfd, EPOLL_CTL_ADD, fds[0], &e) < 0)
			return cl_fail_errno(err, "--output-limit: watching the pipe");
	}
	return 0;
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

/* One read; false at EOF, error or an empty pipe. */
static bool relay_once(struct ns_output *o, struct stream *st)
{
	static char buf[CHUNK];
	ssize_t n = read(st->ev.fd, buf, sizeof(buf));
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
	/* Blocking write: a slow reader slows the sandbox, as it would
	 * with passthrough. If our reader is gone, so is the stream. */
	if (pass && cl_write_all(st->target, buf, pass) < 0)
		stream_close(o, st);
	return true;
}

void ns_output_event(struct ns_output *o, struct ns_ev *ev)
{
	struct stream *st = ev->owner;

	if (o && st->ev.fd >= 0)
		relay_once(o, st);
}

bool ns_output_finish(struct ns_output *o)
{
	if (!o)
		return false;
	/* init has exited and the pid namespace with it, so every write end
	 * is closed: read to EOF. A write end held outside the namespace
	 * would keep the pipe open, so an empty pipe also ends the drain. */
	for (int i = 0; i < 2; i++)
		while (o->s[i].ev.fd >= 0 && relay_once(o, &o->s[i]))
			;
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
