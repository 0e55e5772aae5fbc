/* Session supervisor: accepts control connections from the session's own
 * user only (peer credentials and user namespace checked), reads one
 * request per connection, forks a worker per exec or copy, stops the
 * sandbox on `rm` or after the idle timeout, and cleans up after it. */
#define _GNU_SOURCE
#include "src/session/server.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/util/clock.h"
#include "src/util/limits.h"
#include "src/session/proto.h"
#include "cgroups/cgroup.h"
#include "src/session/snap.h"
#include "src/session/worker.h"
#include "src/workspace/snapshot.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

#define MAX_CONNS 128
#define MAX_WORKERS 256
/* How often the session checks that its directory and socket are still
 * there: the longest a removed session runs on unreachable. */
#define DIR_CHECK_MS 1000

/* A connection that has not sent its request yet. */
struct conn {
	struct ns_ev ev;
	bool used;
	double deadline;   /* monotonic ms: dropped if no request came by then */
};

struct worker {
	struct ns_ev ev;   /* pidfd */
	pid_t pid;
	bool snap;         /* a workspace snapshot: the session may be frozen */
	int conn;          /* snap: our copy of its client's connection, or -1 */
};

struct ss_server {
	struct ns_session_ops ops;
	const struct ns_live *live;   /* valid from ready() on */
	struct ns_live live_copy;
	char dir[4096];
	struct ss_info info;
	int notify_fd;
	struct ns_ev listen_ev;
	struct ns_ev idle_ev;
	struct ns_ev req_ev;          /* timerfd: the earliest request deadline or dir check */
	struct stat dir_st, sock_st;  /* what the directory and socket were at ready() */
	double next_check;            /* monotonic ms of the next directory check */
	uint64_t request_ms;          /* how long a connection has to send its request */
	struct conn conns[MAX_CONNS];
	struct worker workers[MAX_WORKERS];
	size_t n_workers;
	int stoppers[MAX_CONNS];      /* `rm` connections answered at the end */
	size_t n_stoppers;
	bool stopping;
	const struct ws_run *ws;      /* the session's --workspace, or NULL */
	struct ss_req req;            /* one request at a time (large: not on the stack) */
	char buf[SS_REQ_MAX];
};

static void stop(struct ss_server *s)
{
	if (s->stopping)
		return;
	s->stopping = true;
	/* SIGKILL of pid 1 ends the whole pid namespace; the launch then
	 * sees init exit, reaps it and removes the cgroup. */
	syscall(SYS_pidfd_send_signal, s->live->init_pidfd, SIGKILL, NULL, 0);
}

static int watch(struct ss_server *s, struct ns_ev *ev, int fd)
{
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = ev};

	ev->kind = NS_EV_SESSION;
	ev->fd = fd;
	ev->owner = s;
	return epoll_ctl(s->live->epfd, EPOLL_CTL_ADD, fd, &e);
}

static void unwatch(struct ss_server *s, struct ns_ev *ev)
{
	epoll_ctl(s->live->epfd, EPOLL_CTL_DEL, ev->fd, NULL);
	close(ev->fd);
	ev->fd = -1;
}

/* Idle: no request and no worker for idle_s seconds. Re-armed by every
 * request and every worker's end; a connection that sends nothing is not
 * activity (it would keep the session up for as long as it stays). */
static void arm_idle(struct ss_server *s)
{
	struct itimerspec its = {.it_value = {(time_t)s->info.idle_s, 0}};

	if (s->idle_ev.fd >= 0)
		timerfd_settime(s->idle_ev.fd, 0, &its, NULL);
}

/* The request timer, set to the earliest of the deadlines of the
 * connections still waiting for theirs and the next directory check (none
 * once the session is stopping: disarmed when there is nothing left). */
static void arm_requests(struct ss_server *s)
{
	struct itimerspec its = {0};
	double first = s->stopping ? 0 : s->next_check, now = cl_mono_ms();

	for (size_t i = 0; i < MAX_CONNS; i++)
		if (s->conns[i].used && (first == 0 || s->conns[i].deadline < first))
			first = s->conns[i].deadline;
	if (first != 0) {
		/* Never zero: that would disarm it. */
		uint64_t ns = (uint64_t)((first > now ? first - now : 0) * 1e6) + 1;
		its.it_value.tv_sec = (time_t)(ns / 1000000000u);
		its.it_value.tv_nsec = (long)(ns % 1000000000u);
	}
	timerfd_settime(s->req_ev.fd, 0, &its, NULL);
}

/* Same user, and not a process of any sandbox: a peer in a user namespace
 * other than ours (the session's own processes, should its directory ever
 * be bound into it) is refused even though its uid maps to ours. */
static bool peer_ok(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	struct stat mine, theirs;
	char path[64];
	int pidfd = -1;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.uid != geteuid())
		return false;
	len = sizeof(pidfd);
	/* The pidfd pins the peer: its pid cannot be reused while we look. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0)
		pidfd = -1;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)cr.pid);
	bool ok = cr.pid > 0 && stat("/proc/self/ns/user", &mine) == 0 &&
	          stat(path, &theirs) == 0 && mine.st_ino == theirs.st_ino &&
	          mine.st_dev == theirs.st_dev;
	/* Still the same process after the check (pid not reused). */
	if (ok && pidfd >= 0)
		ok = syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
	if (pidfd >= 0)
		close(pidfd);
	return ok;
}

static void on_accept(struct ss_server *s)
{
	int fd;

	while ((fd = accept4(s->listen_ev.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		size_t i;
		if (!peer_ok(fd)) {
			ss_reply_send(fd, 125, 0, "cloister: this session belongs to another user");
			close(fd);
			continue;
		}
		for (i = 0; i < MAX_CONNS && s->conns[i].used; i++)
			;
		if (i == MAX_CONNS || s->stopping) {
			ss_reply_send(fd, 125, 0, s->stopping ? "cloister: the session is being removed"
			              : "cloister: too many pending requests to this session");
			close(fd);
			continue;
		}
		s->conns[i].used = true;
		s->conns[i].deadline = cl_mono_ms() + (double)s->request_ms;
		if (watch(s, &s->conns[i].ev, fd) < 0) {
			s->conns[i].used = false;
			close(fd);
		}
		arm_requests(s);
	}
}

static bool same_file(const char *path, const struct stat *was)
{
	struct stat st;

	return lstat(path, &st) == 0 && st.st_dev == was->st_dev && st.st_ino == was->st_ino;
}

/* The session's directory or socket was removed, moved or replaced (say,
 * an `rm -rf` of the runtime dir): nobody can reach the session any more,
 * so it ends instead of running on unreachable. A stat of each every
 * DIR_CHECK_MS on the timer the session has anyway, not an inotify
 * instance: those are few per user (fs.inotify.max_user_instances, 128 on
 * Debian), and one per session capped the sessions a user could have. */
static void check_dir(struct ss_server *s, double now)
{
	char sock[sizeof(s->dir) + 8];

	if (s->stopping || now < s->next_check)
		return;
	s->next_check = now + DIR_CHECK_MS;
	snprintf(sock, sizeof(sock), "%s/sock", s->dir);
	if (!same_file(s->dir, &s->dir_st) || !same_file(sock, &s->sock_st))
		stop(s);
}

/* Connections past their deadline without a request are dropped: a peer
 * that connects and says nothing must not hold a slot forever. The same
 * timer runs the directory check. */
static void on_request_deadline(struct ss_server *s)
{
	uint64_t ticks;
	double now = cl_mono_ms();

	if (read(s->req_ev.fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return;
	check_dir(s, now);
	for (size_t i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &s->conns[i];
		if (!c->used || c->deadline > now)
			continue;
		ss_reply_send(c->ev.fd, 125, 0, "cloister: no request within %llu ms: connection "
		              "dropped", (unsigned long long)s->request_ms);
		unwatch(s, &c->ev);
		c->used = false;
	}
	arm_requests(s);
}

static void close_server_fds(struct ss_server *s)
{
	if (s->listen_ev.fd >= 0)
		close(s->listen_ev.fd);
	if (s->idle_ev.fd >= 0)
		close(s->idle_ev.fd);
	if (s->req_ev.fd >= 0)
		close(s->req_ev.fd);
	for (size_t i = 0; i < MAX_CONNS; i++)
		if (s->conns[i].used)
			close(s->conns[i].ev.fd);
	for (size_t i = 0; i < MAX_WORKERS; i++) {
		if (s->workers[i].pid)
			close(s->workers[i].ev.fd);
		if (s->workers[i].conn >= 0)
			close(s->workers[i].conn);
	}
	for (size_t i = 0; i < s->n_stoppers; i++)
		close(s->stoppers[i]);
}

static void close_conn(struct worker *w)
{
	if (w->conn >= 0)
		close(w->conn);
	w->conn = -1;
}

/* After a worker is reaped. A snapshot worker killed between its freeze
 * and its thaw left the session frozen and its build unfinished: thawed
 * and swept here, and only then the client's connection closed, so that
 * its hang-up means the session runs again and nothing half-made is left. */
static void reaped(struct ss_server *s, struct worker *w)
{
	if (w->snap) {
		cg_thaw(s->live->cg);
		ws_snap_sweep();
	}
	close_conn(w);
	w->snap = false;
}

/* Snapshots one at a time: one's thaw must not end another's freeze. */
static bool snapping(const struct ss_server *s)
{
	for (size_t i = 0; i < MAX_WORKERS; i++)
		if (s->workers[i].pid && s->workers[i].snap)
			return true;
	return false;
}

static void spawn(struct ss_server *s, int fd)
{
	size_t i;
	pid_t pid;
	int pidfd;

	for (i = 0; i < MAX_WORKERS && s->workers[i].pid; i++)
		;
	if (i == MAX_WORKERS) {
		ss_reply_send(fd, 125, 0, "cloister: too many commands running in this session");
		return;
	}
	/* A snapshot's client hears the end only from us: we hold its
	 * connection until we have thawed after the worker (see reaped). */
	s->workers[i].snap = s->req.op == SS_OP_SNAP;
	if (s->workers[i].snap && (s->workers[i].conn = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
		ss_reply_send(fd, 125, 0, "cloister: starting a snapshot: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		/* ===== worker: a copy of the supervisor, one request =====
		 * The supervisor's own ends go first: a worker outliving it must
		 * not keep the socket bound (clients would queue on it forever). */
		close_server_fds(s);
		if (s->req.op == SS_OP_SNAP)
			ss_snap_main(s->live, s->ws, s->info.id, &s->req, fd);
		ss_worker_main(s->live, &s->req, fd);
	}
	if (pid < 0) {
		char note[CL_ERROR_NOTE_MAX];
		int e = errno;
		cl_limit_note(e, 0, true, note, sizeof(note));
		ss_reply_send(fd, 125, 0, "cloister: starting a worker: %s%s%s%s", strerror(e),
		              note[0] ? " (" : "", note, note[0] ? ")" : "");
		close_conn(&s->workers[i]);
		return;
	}
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	s->workers[i].pid = pid;
	s->n_workers++;
	if (pidfd < 0 || watch(s, &s->workers[i].ev, pidfd) < 0) {
		/* Cannot track it: do not leave it unaccounted. */
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		reaped(s, &s->workers[i]);
		s->workers[i].pid = 0;
		s->n_workers--;
		if (pidfd >= 0)
			close(pidfd);
	}
}

/* Returns whether a request was taken (good or bad: the connection is
 * done either way). */
static bool on_request(struct ss_server *s, struct conn *c)
{
	int fds[SS_MAX_FDS], fd = c->ev.fd;
	size_t n_fds = 0;
	cl_error err = {0};
	ssize_t n;

	n = ss_recv(fd, s->buf, sizeof(s->buf), fds, &n_fds);
	if (n == -EAGAIN)
		return false;
	epoll_ctl(s->live->epfd, EPOLL_CTL_DEL, fd, NULL);
	c->used = false;
	c->ev.fd = -1;
	arm_requests(s);
	if (n < 0 || ss_req_parse(s->buf, (size_t)n, fds, n_fds, &s->req, &err) < 0) {
		if (n == 0)
			;  /* hung up without a request */
		else if (n < 0)
			ss_reply_send(fd, 125, 0, "cloister: malformed request: %s", strerror((int)-n));
		else
			ss_reply_send(fd, 125, 0, "cloister: %s", err.msg);
		for (size_t i = 0; i < n_fds; i++)
			close(fds[i]);
		close(fd);
		return n != 0;
	}
	arm_idle(s);
	switch (s->req.op) {
	case SS_OP_PING:
		ss_reply_send(fd, 0, 0, "%s", "");
		break;
	case SS_OP_STOP:
		if (s->n_stoppers < MAX_CONNS) {
			s->stoppers[s->n_stoppers++] = fd;
			fd = -1;
		}
		stop(s);
		break;
	case SS_OP_SNAP:
		if (!s->ws)
			ss_reply_send(fd, 125, 0, "cloister: workspace snapshot: session %s has no workspace "
			              "(it was created without --workspace)", s->info.id);
		else if (snapping(s))
			ss_reply_send(fd, 125, 0, "cloister: workspace snapshot: a snapshot of session %s is "
			              "being taken; try again when it is done", s->info.id);
		else if (s->stopping)
			ss_reply_send(fd, 125, 0, "cloister: the session is being removed");
		else
			spawn(s, fd);
		break;
	default:
		if (s->stopping)
			ss_reply_send(fd, 125, 0, "cloister: the session is being removed");
		else
			spawn(s, fd);
		break;
	}
	for (size_t i = 0; i < n_fds; i++)
		close(fds[i]);
	if (fd >= 0)
		close(fd);
	return true;
}

static void on_worker_exit(struct ss_server *s, struct worker *w)
{
	siginfo_t si;

	waitid(P_PIDFD, (id_t)w->ev.fd, &si, WEXITED | WNOHANG);
	unwatch(s, &w->ev);
	reaped(s, w);
	w->pid = 0;
	s->n_workers--;
	arm_idle(s);
}

static void on_idle(struct ss_server *s)
{
	uint64_t ticks;
	bool served = false;

	if (read(s->idle_ev.fd, &ticks, sizeof(ticks)) < 0)
		return;
	/* A request that is already here (its event later in this batch, or
	 * in the next) is served first: it is activity, and re-arms. */
	for (size_t i = 0; i < MAX_CONNS; i++) {
		struct pollfd pf = {.fd = s->conns[i].ev.fd, .events = POLLIN};
		if (s->conns[i].used && poll(&pf, 1, 0) == 1 && on_request(s, &s->conns[i]))
			served = true;
	}
	if (served || s->stopping)
		return;
	/* Connections still silent do not count. */
	if (s->n_workers == 0)
		stop(s);
	else
		arm_idle(s);
}

static void event(void *ctx, struct ns_ev *ev, uint32_t events)
{
	struct ss_server *s = ctx;

	if (ev == &s->listen_ev)
		on_accept(s);
	else if (ev == &s->idle_ev)
		on_idle(s);
	else if (ev == &s->req_ev)
		on_request_deadline(s);
	else if (ev >= &s->conns[0].ev && ev <= &s->conns[MAX_CONNS - 1].ev) {
		/* A connection the idle timer or the request deadline closed
		 * earlier in this batch: its event is stale, and its old fd
		 * number may belong to something else by now. */
		if (((struct conn *)ev)->used)
			on_request(s, (struct conn *)ev);
	}
	else
		on_worker_exit(s, (struct worker *)ev);
}

static int listen_on(const char *dir, cl_error *err)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	mode_t old;

	if (fd < 0)
		return cl_fail_errno(err, "creating the session's control socket");
	if (snprintf(a.sun_path, sizeof(a.sun_path), "%s/sock", dir) >= (int)sizeof(a.sun_path)) {
		close(fd);
		return cl_fail(err, 0, "session socket path too long: %s", dir);
	}
	/* 0600 from the start: the directory is 0700 already, this is the
	 * second fence. */
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0) {
		umask(old);
		close(fd);
		return cl_fail_errno(err, "binding the session's control socket %s", a.sun_path);
	}
	umask(old);
	return fd;
}

static int ready(void *ctx, const struct ns_live *l, cl_error *err)
{
	struct ss_server *s = ctx;
	int fd;
	char msg[64];

	s->live_copy = *l;
	s->live = &s->live_copy;
	for (int i = 0; i < NS_SESS_N; i++)
		if (l->ns_fds[i] >= 0 &&
		    (s->live_copy.ns_fds[i] = fcntl(l->ns_fds[i], F_DUPFD_CLOEXEC, 3)) < 0)
			return cl_fail_errno(err, "keeping the session's namespaces");
	s->info.init_pid = l->init_pid;
	s->info.init_start = ss_proc_start(l->init_pid);
	fd = listen_on(s->dir, err);
	if (fd < 0)
		return fd;
	if (watch(s, &s->listen_ev, fd) < 0) {
		close(fd);
		return cl_fail_errno(err, "watching the control socket");
	}
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (fd < 0 || watch(s, &s->req_ev, fd) < 0) {
		if (fd >= 0)
			close(fd);
		return cl_fail_errno(err, "arming the request deadline");
	}
	if (s->info.idle_s) {
		fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (fd < 0 || watch(s, &s->idle_ev, fd) < 0)
			return cl_fail_errno(err, "arming the idle timeout");
		arm_idle(s);
	}
	/* After the socket exists: its removal is one of the changes
	 * check_dir looks for. */
	char sock[sizeof(s->dir) + 8];
	snprintf(sock, sizeof(sock), "%s/sock", s->dir);
	if (lstat(s->dir, &s->dir_st) < 0 || lstat(sock, &s->sock_st) < 0)
		return cl_fail_errno(err, "checking the session directory %s", s->dir);
	s->next_check = cl_mono_ms() + DIR_CHECK_MS;
	arm_requests(s);
	/* The info file last: `ls` lists a session only once it can serve. */
	if (ss_info_write(s->dir, &s->info, err) < 0)
		return -1;
	snprintf(msg, sizeof(msg), "K%s", s->info.id);
	if (write(s->notify_fd, msg, strlen(msg)) < 0) {
		/* `create` is gone: the session serves anyway */
	}
	close(s->notify_fd);
	s->notify_fd = -1;
	return 0;
}

struct ss_server *ss_server_new(const char *dir, const struct ss_info *info, int notify_fd,
                                 uint64_t request_ms)
{
	struct ss_server *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	snprintf(s->dir, sizeof(s->dir), "%s", dir);
	s->info = *info;
	s->notify_fd = notify_fd;
	s->listen_ev.fd = -1;
	s->idle_ev.fd = -1;
	s->req_ev.fd = -1;
	s->request_ms = request_ms;
	for (size_t i = 0; i < MAX_WORKERS; i++)
		s->workers[i].conn = -1;
	s->ops.ctx = s;
	s->ops.ready = ready;
	s->ops.event = event;
	return s;
}

void ss_server_set_workspace(struct ss_server *s, const struct ws_run *w)
{
	s->ws = w;
}

const struct ns_session_ops *ss_server_ops(struct ss_server *s)
{
	return &s->ops;
}

void ss_server_drain(struct ss_server *s)
{
	/* Their children were in the session's pid namespace (create insists
	 * on one), which died with init, so each worker is only sending its
	 * reply now: wait for it, nothing of the session outlives rm. */
	for (size_t i = 0; i < MAX_WORKERS; i++)
		if (s->workers[i].pid) {
			waitpid(s->workers[i].pid, NULL, 0);
			/* (the cgroup is gone by now: nothing to thaw) */
			close_conn(&s->workers[i]);
			s->workers[i].pid = 0;
		}
}

void ss_server_finish(struct ss_server *s, const char *fail)
{
	ss_server_drain(s);
	ss_dir_remove(s->dir);
	/* Last: `rm` returns only once everything above is gone. The
	 * connections stay open until our exit, which rm waits for. */
	for (size_t i = 0; i < s->n_stoppers; i++)
		ss_reply_send(s->stoppers[i], fail ? 125 : 0, 0, "%s", fail ? fail : "");
	free(s);
}
