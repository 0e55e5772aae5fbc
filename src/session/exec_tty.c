/* The terminal side of one `cloister exec`: the request asks for a pty,
 * the session's worker sends its master ahead of the reply, and ns/pty.c
 * relays it to and from the caller's terminal (raw meanwhile). */
#define _GNU_SOURCE
#include "src/session/exec_tty.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "ns/pty.h"

struct ss_tty {
	int epfd;
	int sigfd;
	sigset_t old_mask;
	bool masked;
	struct ns_pty *pty;
};

static const int held_sigs[] = {SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static int hold_signals(struct ss_tty *t, cl_error *err)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(held_sigs) / sizeof(*held_sigs); i++)
		sigaddset(&set, held_sigs[i]);
	if (sigprocmask(SIG_BLOCK, &set, &t->old_mask) < 0)
		return cl_fail_errno(err, "blocking signals for the terminal relay");
	t->masked = true;
	t->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (t->sigfd < 0)
		return cl_fail_errno(err, "watching signals for the terminal relay");
	return 0;
}

int ss_tty_open(struct ss_tty **out, cl_error *err)
{
	struct ss_tty *t = calloc(1, sizeof(*t));
	int rc;

	*out = NULL;
	if (!t)
		return cl_fail(err, ENOMEM, "preparing the command's terminal");
	t->sigfd = -1;
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (t->epfd < 0) {
		free(t);
		return cl_fail_errno(err, "preparing the command's terminal");
	}
	rc = ns_pty_for_stdio(t->epfd, &t->pty, err);
	/* Signals are held before the terminal can go raw: a SIGTERM from
	 * then on reaches the relay, which gives the terminal back first. */
	if (rc == 0 && t->pty)
		rc = hold_signals(t, err);
	if (rc < 0 || !t->pty) {
		ss_tty_close(t);
		return rc;
	}
	*out = t;
	return 0;
}

unsigned ss_tty_mask(const struct ss_tty *t)
{
	return ns_pty_stdio_mask(t->pty);
}

void ss_tty_request(const struct ss_tty *t, struct ss_buf *b)
{
	const struct winsize *ws = ns_pty_winsize(t->pty);
	char v[32];

	snprintf(v, sizeof(v), "%u", ss_tty_mask(t));
	ss_buf_add(b, 'C', v);
	snprintf(v, sizeof(v), "%ux%u", (unsigned)ws->ws_row, (unsigned)ws->ws_col);
	ss_buf_add(b, 'Z', v);
}

/* A signal that ends us: the terminal goes back first, then the signal
 * takes its default action. Our hang-up makes the session's worker kill
 * the command. */
_Noreturn static void die_by(struct ss_tty *t, int sig)
{
	ss_tty_close(t);
	signal(sig, SIG_DFL);
	raise(sig);
	/* Blocked by the caller's own mask: the shell convention instead. */
	_exit(128 + sig);
}

static void on_signal(struct ss_tty *t)
{
	struct signalfd_siginfo si;

	while (read(t->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGWINCH)
			ns_pty_winch(t->pty);
		else
			die_by(t, (int)si.ssi_signo);
	}
}

/* One message from the session: the pty's master (1: relaying starts),
 * or the reply (0: done). */
static int on_message(struct ss_tty *t, int sock, struct ss_reply *rep, cl_error *err)
{
	int fds[SS_MAX_FDS];
	size_t n_fds = 0;
	ssize_t n = ss_recv(sock, (char *)rep, sizeof(*rep), fds, &n_fds);
	bool is_pty = n == (ssize_t)sizeof(*rep) && rep->magic == SS_REPLY_MAGIC &&
	              (rep->flags & SS_RF_PTY) && n_fds == 1;

	if (is_pty) {
		/* The caller's terminal goes raw here (and the pty takes a
		 * size the caller changed to since the request). */
		ns_pty_on_master(t->pty, fds[0]);
		return 1;
	}
	for (size_t i = 0; i < n_fds; i++)
		close(fds[i]);
	if (n < 0)
		return cl_fail(err, (int)-n, "reading the session's reply");
	if (n == 0)
		return cl_fail(err, 0, "the session ended before answering (removed, or its "
		               "supervisor died)");
	if ((size_t)n != sizeof(*rep) || rep->magic != SS_REPLY_MAGIC || (rep->flags & SS_RF_PTY))
		return cl_fail(err, 0, "malformed reply from the session");
	rep->msg[sizeof(rep->msg) - 1] = '\0';
	return 0;
}

int ss_tty_relay(struct ss_tty *t, int sock, struct ss_reply *rep, cl_error *err)
{
	struct ns_ev sock_ev = {.kind = NS_EV_SESSION, .fd = sock};
	struct ns_ev sig_ev = {.kind = NS_EV_SIGNAL, .fd = t->sigfd};
	struct epoll_event e1 = {.events = EPOLLIN, .data.ptr = &sock_ev};
	struct epoll_event e2 = {.events = EPOLLIN, .data.ptr = &sig_ev};
	int rc = 1;

	if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, sock, &e1) < 0 ||
	    epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->sigfd, &e2) < 0)
		return cl_fail_errno(err, "relaying the command's terminal");
	while (rc > 0) {
		struct epoll_event evs[16];
		int n = epoll_wait(t->epfd, evs, 16, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cl_fail_errno(err, "relaying the command's terminal");
		/* The reply is taken last in a batch: the pty's events before it
		 * still point at live buffers. */
		for (int i = 0; i < n; i++) {
			struct ns_ev *ev = evs[i].data.ptr;
			if (ev == &sig_ev)
				on_signal(t);
			else if (ev != &sock_ev)
				ns_pty_event(t->pty, ev, evs[i].events);
		}
		for (int i = 0; i < n && rc > 0; i++)
			if (evs[i].data.ptr == &sock_ev)
				rc = on_message(t, sock, rep, err);
	}
	/* The command has exited: what it wrote last is passed on before the
	 * terminal is given back (ns_pty_drain restores it). */
	ns_pty_drain(t->pty);
	return rc;
}

void ss_tty_close(struct ss_tty *t)
{
	if (!t)
		return;
	/* The terminal first, the signal mask after: a held SIGTERM delivered
	 * by the unblock then ends us with the terminal already back. */
	ns_pty_close(t->pty);
	if (t->sigfd >= 0)
		close(t->sigfd);
	if (t->epfd >= 0)
		close(t->epfd);
	if (t->masked)
		sigprocmask(SIG_SETMASK, &t->old_mask, NULL);
	free(t);
}
