/* The native executor, parent side: prepare everything that can be prepared
 * (seccomp program, cgroup, sync socket), clone into the new namespaces,
 * then supervise: forward signals, enforce the timeout, reap, report. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sys/epoll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroups/cgroup.h"
#include "ns/child.h"
#include "ns/hooks.h"
#include "ns/output.h"
#include "ns/idmap.h"
#include "ns/pty.h"
#include "ns/relay.h"
#include "ns/session.h"
#include "ns/sync.h"
#include "ns/trace.h"
#include "seccomp/seccomp.h"
#include "src/util/cleanup.h"
#include "src/util/clock.h"
#include "src/policy/executor.h"
#include "src/util/limits.h"
#include "src/policy/parse.h"

static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

struct supervision {
	pid_t pid;
	int pidfd;
	int sync_fd;
	int sig_fd;
	int timer_fd;
	struct cg_handle *cg;
	struct ns_relay *relay;
	struct ns_output *output;   /* --output-limit relay, or NULL */
	struct ns_pty *pty;     /* NULL unless the command gets its own terminal */
	const struct ns_session_ops *session;  /* session mode, or NULL */
	int epfd;
	bool attach_after_clone;  /* cgroup v1: the child is attached after clone */
	bool got_exit, timed_out, setup_failed, exec_failed;
	int cmd_status;
	cl_error child_err;     /* setup or exec failure reported by the child */
};

static pid_t do_clone(int flags, int cgroup_fd, int *pidfd)
{
	struct clone_args args = {
		.flags = (uint64_t)flags | CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)pidfd,
		.exit_signal = SIGCHLD,
	};
	long pid;

	if (cgroup_fd >= 0) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)cgroup_fd;
	}
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid >= 0 || errno != ENOSYS || cgroup_fd >= 0)
		return (pid_t)pid;
	/* Old kernel or a filter hiding clone3: classic clone, then pidfd. */
	pid = syscall(SYS_clone, (unsigned long)flags | SIGCHLD, NULL, NULL, NULL, 0UL);
	if (pid > 0)
		*pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	return (pid_t)pid;
}

static void handle_msg(struct supervision *s, const struct ns_msg *m, int fd)
{
	switch (m->type) {
	case NS_MSG_SOCKET:
		ns_relay_on_socket(s->relay, m->id, fd, m->errnum);
		return;
	case NS_MSG_LISTENER:
		ns_relay_on_listener(s->relay, m->status, fd);
		return;
	case NS_MSG_PTY:
		if (s->pty)
			ns_pty_on_master(s->pty, fd);
		else if (fd >= 0)
			close(fd);
		return;
	case NS_MSG_SETUP_ERROR:
		s->setup_failed = true;
		s->child_err.errnum = m->errnum;
		snprintf(s->child_err.msg, sizeof(s->child_err.msg), "%s", m->text);
		/* The child's note does not travel: EMFILE/ENFILE are named here
		 * (the child has our rlimits during setup). */
		cl_error_note_limit(&s->child_err, 0, false);
		break;
	case NS_MSG_EXEC_ERROR:
		s->exec_failed = true;
		s->child_err.errnum = m->errnum;
		snprintf(s->child_err.msg, sizeof(s->child_err.msg), "%s", m->text);
		break;
	case NS_MSG_EXIT:
		s->got_exit = true;
		s->cmd_status = m->status;
		break;
	default:
		break;   /* unexpected from the child side: ignored */
	}
	if (fd >= 0)
		close(fd);
}

/* The parent's end is non-blocking: read until the queue is empty. */
static void drain_sync(struct supervision *s)
{
	struct ns_msg m;
	int fd, rc;

	/* Stops at an empty queue (-EAGAIN), EOF or an error; a malformed
	 * message (-EPROTO) is dropped and the next one read. */
	while (s->sync_fd >= 0) {
		pid_t from;
		rc = ns_msg_recv_from(s->sync_fd, &m, &fd, &from);
		if (rc > 0 && from != s->pid) {
			/* Not sent by init (a command holding a copy of init's
			 * socket): dropped, with any fd it carried. */
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (rc > 0)
			handle_msg(s, &m, fd);
		else if (rc != -EPROTO)
			break;
	}
}

static void on_signal(struct supervision *s)
{
	struct signalfd_siginfo si;

	if (read(s->sig_fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return;
	/* With a pty of its own the sandbox learns of a resize from its pty. */
	if (si.ssi_signo == SIGWINCH && s->pty) {
		ns_pty_winch(s->pty);
		return;
	}
	/* Terminal signals already reached the sandbox when it shares our
	 * session; everything else is passed to init, which forwards it. */
	if (si.ssi_code == SI_KERNEL && si.ssi_signo != SIGTERM)
		return;
	kill(s->pid, (int)si.ssi_signo);
}

static void on_timeout(struct supervision *s)
{
	uint64_t ticks;

	if (read(s->timer_fd, &ticks, sizeof(ticks)) < 0)
		return;
	s->timed_out = true;
	/* SIGKILL of pid 1 kills the whole pid namespace. */
	kill(s->pid, SIGKILL);
}

static int watch(int epfd, struct ns_ev *ev, enum ns_ev_kind kind, int fd)
{
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = ev};

	ev->kind = kind;
	ev->fd = fd;
	if (fd < 0)
		return 0;
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e) < 0 ? -errno : 0;
}

/* Waits until init has exited, serving signals, the timer, messages from
 * the sandbox and the relays. */
static void supervise(struct supervision *s)
{
	struct ns_ev ev_pid, ev_sync, ev_sig, ev_timer;
	struct epoll_event evs[64];
	bool done = false;

	/* The sync socket is watched only when relays need init mid-run or
	 * the pty master is on its way; otherwise its messages (errors, the
	 * exit status) are read once the pidfd fires, which saves a wake-up
	 * per launch. */
	if (watch(s->epfd, &ev_pid, NS_EV_PIDFD, s->pidfd) < 0 ||
	    watch(s->epfd, &ev_sync, NS_EV_SYNC, s->relay || s->pty ? s->sync_fd : -1) < 0 ||
	    watch(s->epfd, &ev_sig, NS_EV_SIGNAL, s->sig_fd) < 0 ||
	    watch(s->epfd, &ev_timer, NS_EV_TIMER, s->timer_fd) < 0) {
		kill(s->pid, SIGKILL);   /* cannot supervise: do not leave it running */
		return;
	}
	while (!done) {
		int n = epoll_wait(s->epfd, evs, 64, -1);
		for (int i = 0; i < n; i++) {
			struct ns_ev *ev = evs[i].data.ptr;
			switch (ev->kind) {
			case NS_EV_PIDFD: done = true; break;
			case NS_EV_SYNC:
				drain_sync(s);
				if ((evs[i].events & (EPOLLHUP | EPOLLERR)) && s->sync_fd >= 0) {
					/* every sandbox holder closed it */
					epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->sync_fd, NULL);
				}
				break;
			case NS_EV_SIGNAL: on_signal(s); break;
			case NS_EV_TIMER: on_timeout(s); break;
			case NS_EV_PUB_TCP: case NS_EV_PUB_UDP: case NS_EV_FWD_LISTEN:
			case NS_EV_CONN: case NS_EV_UDP_PEER: case NS_EV_PUB_RETRY:
				ns_relay_event(s->relay, ev, evs[i].events);
				break;
			case NS_EV_OUTPUT: ns_output_event(s->output, ev); break;
			case NS_EV_PTY: ns_pty_event(s->pty, ev, evs[i].events); break;
			case NS_EV_SESSION:
				if (s->session)
					s->session->event(s->session->ctx, ev, evs[i].events);
				break;
			default:
				break;   /* kind 0 or unknown: never a reason to stop */
			}
		}
		/* Only now: later events of this batch may name a flow that an
		 * earlier one closed. */
		ns_relay_end_batch(s->relay);
	}
	drain_sync(s);
	/* After the sync drain: the master may have come with the last batch. */
	ns_pty_drain(s->pty);
}

static int setup_signals(sigset_t *orig, cl_error *err)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++)
		sigaddset(&set, forwarded[i]);
	if (sigprocmask(SIG_BLOCK, &set, orig) < 0)
		return cl_fail_errno(err, "blocking signals");
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return cl_fail_errno(err, "creating a signalfd");
	return fd;
}

static int setup_timer(uint64_t ms, cl_error *err)
{
	struct itimerspec its = {0};
	int fd;

	if (!ms)
		return -1;
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (fd < 0)
		return cl_fail_errno(err, "creating the timeout timer");
	its.it_value.tv_sec = (time_t)(ms / 1000);
	its.it_value.tv_nsec = (long)(ms % 1000) * 1000000L;
	if (timerfd_settime(fd, 0, &its, NULL) < 0) {
		close(fd);
		return cl_fail_errno(err, "arming the timeout timer");
	}
	return fd;
}

static void fill_status(const struct supervision *s, int init_status, const struct rusage *ru,
                        struct cl_status *st)
{
	int ws = s->got_exit ? s->cmd_status : init_status;

	st->runtime = "native";
	st->child_pid = s->pid;
	st->timed_out = s->timed_out;
	st->user_ms = (double)ru->ru_utime.tv_sec * 1e3 + (double)ru->ru_utime.tv_usec / 1e3;
	st->sys_ms = (double)ru->ru_stime.tv_sec * 1e3 + (double)ru->ru_stime.tv_usec / 1e3;
	st->signal = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
	st->exit_code = s->timed_out ? 124 : cl_exit_code_of_status(ws);
}

static void collect_cgroup(struct supervision *s, struct cl_status *st)
{
	struct cg_stats cs = {.memory_peak = -1, .user_ms = -1, .sys_ms = -1};

	if (!s->cg || cg_collect(s->cg, &cs) < 0)
		return;
	st->oom_killed = cs.oom_killed;
	st->memory_peak = cs.memory_peak;
	if (cs.user_ms >= 0)
		st->user_ms = cs.user_ms;
	if (cs.sys_ms >= 0)
		st->sys_ms = cs.sys_ms;
}

/* The argv the command sees: --argv0 replaces argv[0] only. */
static char **exec_argv(const struct cl_policy *p)
{
	size_t n = cl_strv_len(p->argv);
	char **av = calloc(n + 1, sizeof(char *));

	if (!av)
		return NULL;
	memcpy(av, p->argv, n * sizeof(char *));
	if (p->argv0)
		av[0] = p->argv0;
	return av;
}

/* clone failed, in bwrap's words (Debian's build of it): clients match
 * these lines to tell their users what the host forbids. */
static int clone_fail_bwrap(const struct cl_policy *p, cl_error *err)
{
	int e = errno;

	if (e == EINVAL && (p->ns_flags & CLONE_NEWUSER))
		return cl_fail(err, 0, "Creating new namespace failed, likely because the kernel does "
		               "not support user namespaces.  bwrap must be installed setuid on such "
		               "systems.");
	if (e == EPERM && (p->ns_flags & CLONE_NEWUSER) && getuid() != 0)
		return cl_fail(err, 0, "No permissions to create new namespace, likely because the "
		               "kernel does not allow non-privileged user namespaces. See "
		               "<https://deb.li/bubblewrap> or "
		               "<file:///usr/share/doc/bubblewrap/README.Debian.gz>.");
	if (e == ENOSPC)
		return cl_fail(err, 0, "Creating new namespace failed: nesting depth or "
		               "/proc/sys/user/max_*_namespaces exceeded (ENOSPC)");
	return cl_fail(err, e, "Creating new namespace failed");
}

/* A root caller's child that failed before it read its id maps has exited
 * (its setup error queued before its end closed): writing the maps or
 * sending them then fails in the parent, but the child's error is the one
 * that says what went wrong. A child still waiting has sent nothing. */
static int child_error_first(const struct supervision *s, cl_error *err)
{
	struct ns_msg m;

	if (ns_msg_recv(s->sync_fd, &m) == 1 && m.type == NS_MSG_SETUP_ERROR) {
		err->errnum = m.errnum;
		snprintf(err->msg, sizeof(err->msg), "%s", m.text);
		cl_error_note_limit(err, 0, false);
	}
	return cl_error_code(err);
}

static int launch(const struct cl_policy *p, struct supervision *s, struct ns_child *c,
                  cl_error *err)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return cl_fail_errno(err, "creating the sync socket");
	/* Before clone: every message the child sends carries its pid, so
	 * drain_sync can tell init's messages from forged ones. */
	if (setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &(int){1}, sizeof(int)) < 0) {
		close(sv[0]);
		close(sv[1]);
		return cl_fail_errno(err, "setting up the sync socket");
	}
	c->sync_fd = sv[1];
	c->pty_mask = ns_pty_stdio_mask(s->pty);
	if (s->pty)
		c->pty_ws = *ns_pty_winsize(s->pty);
	c->serve_sockets = p->n_ports > 0;
	s->attach_after_clone = s->cg && cg_clone_fd(s->cg) < 0;
	/* The child waits for a "go" before init starts the command when the
	 * parent still has work on it: a cgroup attach (v1), or the
	 * --info-fd/--json-status-fd document, whose namespace ids can only be
	 * read while the child is alive and still dumpable. */
	c->wait_go = s->attach_after_clone || p->hooks.info_fd >= 0 || p->hooks.status_fd >= 0;
	c->output = s->output;
	/* CLONE_INTO_CGROUP roots the new cgroup ns at the sandbox cgroup; a
	 * child attached after clone must make its own ns once placed. */
	c->cgns_unshare = s->attach_after_clone && (p->ns_flags & CLONE_NEWCGROUP);
	s->pid = do_clone(p->ns_flags, s->cg ? cg_clone_fd(s->cg) : -1, &s->pidfd);
	if (s->pid == 0) {
		/* ===== child: new namespaces, caller's uid until mapped ===== */
		close(sv[0]);
		ns_child_main(c);
	}
	/* ===== parent: caller's privileges ===== */
	close(sv[1]);
	ns_output_parent(s->output);
	s->sync_fd = sv[0];
	fcntl(s->sync_fd, F_SETFL, O_NONBLOCK);
	ns_relay_set_sync(s->relay, s->sync_fd);
	if (s->pid < 0 && p->hooks.bwrap_msgs)
		return clone_fail_bwrap(p, err);
	if (s->pid < 0) {
		/* EPERM/ENOSPC/EUSERS: the host forbids or caps user namespaces. */
		if (errno == EPERM || errno == ENOSPC || errno == EUSERS) {
			cl_fail_errno(err, "creating the sandbox namespaces (run `cloister check` "
			              "to see what this host forbids and how to allow it)");
			cl_error_note_limit(err, p->ns_flags, true);
			/* Nothing of the sandbox ran: --runtime auto may try the
			 * next executor. */
			return CL_ERR_NO_NAMESPACES;
		}
		cl_fail_errno(err, "creating the sandbox namespaces");
		cl_error_note_limit(err, p->ns_flags, true);
		return cl_error_code(err);
	}
	if (s->pidfd < 0)
		return cl_fail_errno(err, "opening a pidfd for the sandbox");
	/* Maps before the cgroup attach and the "go": the child reads them
	 * first. */
	if (c->parent_maps &&
	    ns_idmap_after_clone(p, s->pid, c->pre_trees, c->pre_root, s->sync_fd, err) < 0)
		return child_error_first(s, err);
	if (s->attach_after_clone && cg_attach(s->cg, s->pid, err) < 0)
		return cl_error_code(err);
	return 0;
}

/* After the cgroup attach and the report documents: lets the child run the
 * command. A child that already failed has closed its end (EPIPE); its
 * setup error is still queued on the sync socket for supervise() to read,
 * so that is not an error of its own. Any other failure leaves a child
 * that waits for the "go" forever: an error (the caller kills it). */
static int release_child(const struct supervision *s, const struct ns_child *c, cl_error *err)
{
	int rc;

	if (!c->wait_go)
		return 0;
	rc = ns_msg_send(s->sync_fd, NS_MSG_GO, 0, 0, "go", "");
	if (rc == 0 || rc == -EPIPE || rc == -ECONNRESET)
		return 0;
	return cl_fail(err, -rc, "starting the sandbox's command (sync socket)");
}

/* A root caller's sandbox becomes an unprivileged host identity: its bind
 * sources are opened here, with the caller's rights, before it does. */
static int prepare_identity(const struct cl_policy *p, struct ns_child *c, cl_error *err)
{
	c->parent_maps = ns_idmap_by_parent(p);
	if (!c->parent_maps)
		return 0;
	c->pre_trees = calloc(2 * p->n_mounts + 1, sizeof(int));
	if (!c->pre_trees)
		return cl_fail(err, ENOMEM, "preparing mounts");
	return ns_idmap_open_trees(p, c->pre_trees, &c->pre_root, err);
}

/* Everything that can fail before clone, in the parent. */
static int prepare(const struct cl_policy *p, struct supervision *s, struct ns_child *c,
                   struct sc_program *prog, cl_error *err)
{
	int rc = sc_prepare(p, prog, err);

	if (rc < 0)
		return rc;
	rc = cg_create(p, &s->cg, err);
	if (rc < 0)
		return rc;
	s->sig_fd = setup_signals(&c->orig_mask, err);
	if (s->sig_fd < 0)
		return s->sig_fd;
	if (p->timeout_ms) {
		s->timer_fd = setup_timer(p->timeout_ms, err);
		if (s->timer_fd < 0)
			return s->timer_fd;
	}
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return cl_fail_errno(err, "creating the supervisor's epoll");
	/* Host listeners exist before the sandbox: a busy port fails here,
	 * with nothing started. */
	rc = ns_relay_open(p, s->epfd, &s->relay, err);
	if (rc < 0)
		return rc;
	/* Planned here: the drop in the sandbox runs partly in a vfork child,
	 * where libcap (it allocates) must not be called. */
	ns_caps_plan(&c->caps, p->caps_keep);
	c->caps.keep_bounding = p->hooks.caps_keep_bounding;
	c->caps.keep_current = p->hooks.caps_keep_current;
	rc = ns_output_open(p, s->epfd, &s->output, err);
	if (rc < 0)
		return rc;
	rc = ns_pty_open(p, s->epfd, &s->pty, err);
	if (rc < 0)
		return rc;
	c->exec_argv = exec_argv(p);
	if (!c->exec_argv)
		return cl_fail(err, ENOMEM, "preparing the command line");
	rc = prepare_identity(p, c, err);
	if (rc < 0)
		return rc;
	return ns_hooks_prepare(p, c, err);
}

static void release(struct supervision *s, struct ns_child *c, struct sc_program *prog)
{
	/* The caller's terminal before the signal mask: a pending SIGINT
	 * must not end us with the terminal still raw. */
	ns_pty_close(s->pty);
	ns_relay_close(s->relay);
	/* Before the caller's mask comes back: it consumes a pending SIGPIPE. */
	ns_output_close(s->output);
	cg_destroy(s->cg);
	sigprocmask(SIG_SETMASK, &c->orig_mask, NULL);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->pidfd >= 0)
		close(s->pidfd);
	if (s->sync_fd >= 0)
		close(s->sync_fd);
	if (s->sig_fd >= 0)
		close(s->sig_fd);
	if (s->timer_fd >= 0)
		close(s->timer_fd);
	free(c->exec_argv);
	for (size_t i = 0; c->pre_trees && i < 2 * c->p->n_mounts; i++)
		if (c->pre_trees[i] >= 0)
			close(c->pre_trees[i]);
	free(c->pre_trees);
	if (c->pre_root >= 0)
		close(c->pre_root);
	sc_program_free(prog);
	ns_hooks_release(c);
}

/* bwrap's --die-with-parent covers the supervisor too: when the process
 * that started us dies (however it was killed) the kernel kills us, and
 * init's own parent-death signal then ends the sandbox. The parent may
 * already be gone before prctl takes effect: then we are an orphan and
 * stop. (Not for cloister run: the signal follows the starting *thread*,
 * and callers that spawn from short-lived threads would lose sandboxes.) */
static int die_with_parent(const struct cl_policy *p, cl_error *err)
{
	int rc;

	if (!p->die_with_parent || !p->hooks.supervisor_pdeathsig)
		return 0;
	rc = ns_pdeathsig(getppid(), -1, err);
	if (rc > 0)
		raise(SIGKILL);
	return rc < 0 ? rc : 0;
}

/* Session mode: blocks until init reports it is up (messages sent during
 * setup, such as --forward-out listeners, are handled on the way). */
const struct ns_sess_kind ns_sess_kinds[NS_SESS_N] = {
	[NS_SESS_USER] = {"user", CLONE_NEWUSER}, [NS_SESS_MNT] = {"mnt", CLONE_NEWNS},
	[NS_SESS_PID] = {"pid", CLONE_NEWPID}, [NS_SESS_NET] = {"net", CLONE_NEWNET},
	[NS_SESS_IPC] = {"ipc", CLONE_NEWIPC}, [NS_SESS_UTS] = {"uts", CLONE_NEWUTS},
	[NS_SESS_CGROUP] = {"cgroup", CLONE_NEWCGROUP},
};

static int wait_ready(struct supervision *s, int *ns_fds, cl_error *err)
{
	struct pollfd pfd = {.fd = s->sync_fd, .events = POLLIN};
	struct ns_msg m;
	int fd, rc;

	for (;;) {
		if (poll(&pfd, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return cl_fail_errno(err, "waiting for the session's init");
		}
		rc = ns_msg_recv_fd(s->sync_fd, &m, &fd);
		if (rc == -EAGAIN || rc == -EPROTO)
			continue;
		if (rc <= 0)
			return cl_fail(err, rc < 0 ? -rc : EPIPE, "the session's init ended during setup");
		if (m.type == NS_MSG_READY) {
			if (fd >= 0)
				close(fd);
			return 0;
		}
		if (m.type == NS_MSG_NSFD && m.id < NS_SESS_N && ns_fds[m.id] < 0) {
			ns_fds[m.id] = fd;
			continue;
		}
		handle_msg(s, &m, fd);
		if (s->setup_failed || s->exec_failed) {
			*err = s->child_err;
			return cl_error_code(err);
		}
	}
}

static int start_session(const struct cl_policy *p, struct supervision *s,
                         const struct ns_child *c, const struct sc_program *prog,
                         cl_error *err)
{
	struct ns_live l = {.p = p, .init_pid = s->pid, .init_pidfd = s->pidfd, .epfd = s->epfd,
	                    .cg = s->cg, .prog = prog, .caps = &c->caps, .orig_mask = c->orig_mask};
	int rc;

	for (int i = 0; i < NS_SESS_N; i++)
		l.ns_fds[i] = -1;
	rc = wait_ready(s, l.ns_fds, err);
	for (int i = 0; rc == 0 && i < NS_SESS_N; i++)
		if ((p->ns_flags & ns_sess_kinds[i].flag) && l.ns_fds[i] < 0)
			rc = cl_fail(err, EPROTO, "the session's init did not hand over its %s namespace",
			             ns_sess_kinds[i].name);
	if (rc == 0)
		rc = s->session->ready(s->session->ctx, &l, err);
	/* The server keeps its own copy of what it needs. */
	for (int i = 0; i < NS_SESS_N; i++)
		if (l.ns_fds[i] >= 0)
			close(l.ns_fds[i]);
	return rc;
}

static int launch_run(const struct cl_policy *p, const struct ns_session_ops *ops,
                      struct cl_status *st, cl_error *err)
{
	struct sc_program prog = {0};
	struct supervision s = {.pid = -1, .pidfd = -1, .sync_fd = -1, .sig_fd = -1,
	                        .timer_fd = -1, .epfd = -1, .session = ops};
	struct ns_child c = {.p = p, .prog = &prog, .outer_uid = getuid(), .outer_gid = getgid(),
	                     .envp = p->env, .exec_path = p->argv[0], .host_proc = -1,
	                     .lock_fd = -1, .ctty_fd = -1, .pre_root = -1};
	struct rusage ru = {0};
	double t0 = cl_mono_ms();
	int rc, init_status = 0;

	c.trace = ns_trace_enabled();
	ns_trace(c.trace, "parent", "start");
	sigprocmask(SIG_SETMASK, NULL, &c.orig_mask);
	rc = die_with_parent(p, err);
	if (rc == 0)
		rc = prepare(p, &s, &c, &prog, err);
	ns_trace(c.trace, "parent", "prepare");
	if (rc == 0)
		rc = ns_hooks_join(p, err);
	if (rc == 0)
		rc = launch(p, &s, &c, err);
	ns_trace(c.trace, "parent", "clone");
	if (rc == 0)
		rc = ns_hooks_started(p, s.pid, err);
	if (rc == 0)
		rc = release_child(&s, &c, err);
	/* After the "go": init only reports ready once it runs. */
	if (rc == 0 && ops)
		rc = start_session(p, &s, &c, &prog, err);
	if (s.pid > 0) {
		if (rc < 0)
			kill(s.pid, SIGKILL);
		else
			supervise(&s);
		ns_trace(c.trace, "parent", "supervise");
		while (wait4(s.pid, &init_status, 0, &ru) < 0 && errno == EINTR)
			;
		ns_trace(c.trace, "parent", "reap");
	}
	if (rc == 0 && s.setup_failed) {
		*err = s.child_err;
		rc = cl_error_code(err);
	} else if (rc == 0) {
		fill_status(&s, init_status, &ru, st);
		collect_cgroup(&s, st);
		st->output_truncated = ns_output_finish(s.output, !s.timed_out);
		if (st->output_truncated)
			fprintf(stderr, "%s: output cut at %llu bytes (%s); the rest was discarded\n",
			        cl_error_prog, (unsigned long long)p->output_limit,
			        p->hooks.bwrap_msgs ? "output_limit of the hardening policy"
			                            : "--output-limit");
		st->wall_ms = cl_mono_ms() - t0;
		/* The command never ran when exec failed: bwrap reports no
		 * exit-code then (clients read its absence as "not started"). */
		if (s.exec_failed)
			cl_error_print(&s.child_err);
		else
			ns_hooks_exited(p, st->exit_code);
	}
	release(&s, &c, &prog);
	ns_trace(c.trace, "parent", "release");
	return rc;
}

static int native_run(const struct cl_policy *p, struct cl_status *st, cl_error *err)
{
	return launch_run(p, NULL, st, err);
}

int ns_launch_session(const struct cl_policy *p, const struct ns_session_ops *ops,
                      struct cl_status *st, cl_error *err)
{
	return launch_run(p, ops, st, err);
}

static int native_available(const struct cl_policy *p, cl_error *err)
{
	return 0;
}

/* Native does create, ship, collect and cleanup inside its one launch
 * (a flat list of steps, docs/architecture.md): the interface's execute
 * is the whole of it, with no state of its own. */
static int native_execute(void *state, const struct cl_policy *p, struct cl_status *st,
                          cl_error *err)
{
	return native_run(p, st, err);
}

const struct cl_executor cl_native_executor = {
	.name = "native",
	.available = native_available,
	.execute = native_execute,
};
