/* The command's own terminal: a pty from the sandbox's devpts whose master the
 * supervisor relays to and from the caller's terminal (kept raw meanwhile). */
#define _GNU_SOURCE
#include "ns/pty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "ns/sync.h"
#include "src/util/cleanup.h"
#include "src/util/term.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

/* Longest wait for the caller's terminal to take the sandbox's last output
 * once the sandbox is gone: a terminal paused for longer loses it. */
#define DRAIN_WAIT_MS 10000

struct pty_buf {
	char data[4096];
	size_t off, len;
};

struct pty_end {
	struct ns_ev ev;
	uint32_t events;      /* currently registered interest, 0 = none */
};

struct ns_pty {
	int epfd;
	unsigned mask;        /* bit n: fd n is a terminal, the command gets the slave */
	int term_fd;          /* caller's fd whose terminal goes raw and gives the size */
	int in_fd;            /* caller's terminal, own open file, non-blocking; or -1 */
	int out_fd;           /* likewise, where the sandbox's output goes; or -1 */
	int master;           /* -1 until it arrives from the sandbox, and once it is closed */
	struct pty_end in, out, mst;
	struct pty_buf to_sandbox, to_caller;
	struct winsize ws;
	bool raw;
};

/* A second open file of the same terminal: O_NONBLOCK on it leaves the
 * caller's own file (shared with its shell) as it was. Falls back to a
 * blocking dup when the terminal cannot be opened again (another user's,
 * or TIOCEXCL). */
static int reopen(int fd, int flags)
{
	char path[32];
	int nfd;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	nfd = open(path, flags | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (nfd >= 0 && isatty(nfd))
		return nfd;
	if (nfd >= 0)
		close(nfd);
	return fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

int ns_pty_open(const struct cl_policy *p, int epfd, struct ns_pty **out, cl_error *err)
{
	*out = NULL;
	if (!p->pty)
		return 0;
	return ns_pty_for_stdio(epfd, out, err);
}

int ns_pty_for_stdio(int epfd, struct ns_pty **out, cl_error *err)
{
	struct ns_pty *t;
	unsigned mask = 0;

	*out = NULL;
	for (int fd = 0; fd <= 2; fd++)
		if (isatty(fd))
			mask |= 1u << fd;
	if (!mask)
		return 0;
	t = calloc(1, sizeof(*t));
	if (!t)
		return cl_fail(err, ENOMEM, "preparing the command's terminal");
	t->epfd = epfd;
	t->mask = mask;
	t->master = -1;
	t->term_fd = (mask & 1) ? 0 : (mask & 2) ? 1 : 2;
	if (ioctl(t->term_fd, TIOCGWINSZ, &t->ws) < 0)
		memset(&t->ws, 0, sizeof(t->ws));
	/* Keystrokes only come from a terminal on stdin; the sandbox's output
	 * (and the pty's echo) goes to the terminal on stdout, else stderr,
	 * else the one on stdin. */
	t->in_fd = (mask & 1) ? reopen(0, O_RDONLY) : -1;
	t->out_fd = reopen((mask & 2) ? 1 : (mask & 4) ? 2 : 0, O_WRONLY);
	t->in.ev = (struct ns_ev){.kind = NS_EV_PTY, .fd = t->in_fd, .owner = &t->in};
	t->out.ev = (struct ns_ev){.kind = NS_EV_PTY, .fd = t->out_fd, .owner = &t->out};
	t->mst.ev = (struct ns_ev){.kind = NS_EV_PTY, .fd = -1, .owner = &t->mst};
	*out = t;
	return 0;
}

unsigned ns_pty_stdio_mask(const struct ns_pty *t)
{
	return t ? t->mask : 0;
}

const struct winsize *ns_pty_winsize(const struct ns_pty *t)
{
	return &t->ws;
}

static void set_interest(struct ns_pty *t, struct pty_end *e, uint32_t want)
{
	struct epoll_event ee = {.events = want, .data.ptr = &e->ev};
	int op = !e->events ? EPOLL_CTL_ADD : want ? EPOLL_CTL_MOD : EPOLL_CTL_DEL;

	if (e->ev.fd < 0 || e->events == want)
		return;
	/* Registered with nothing wanted would still report hangups forever. */
	if (epoll_ctl(t->epfd, op, e->ev.fd, &ee) == 0)
		e->events = want;
}

/* One buffer per direction; while it holds bytes its source is not read,
 * so a sandbox that never reads its input cannot make the supervisor block
 * (and miss its timeout), and neither can a slow terminal. */
static void update(struct ns_pty *t)
{
	bool live = t->master >= 0;

	set_interest(t, &t->in, live && !t->to_sandbox.len ? EPOLLIN : 0);
	set_interest(t, &t->mst, live ? ((t->to_caller.len ? 0 : EPOLLIN) |
	                                 (t->to_sandbox.len ? EPOLLOUT : 0)) : 0);
	set_interest(t, &t->out, t->to_caller.len ? EPOLLOUT : 0);
}

/* Writes what it can; -1 when fd is broken (the bytes are dropped). */
static int flush(struct pty_buf *b, int fd)
{
	if (fd < 0)
		b->len = 0;
	while (b->len) {
		ssize_t w = write(fd, b->data + b->off, b->len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return 0;
		if (w <= 0) {
			b->len = 0;
			return -1;
		}
		b->off += (size_t)w;
		b->len -= (size_t)w;
	}
	b->off = 0;
	return 0;
}

static ssize_t fill(struct pty_buf *b, int fd)
{
	ssize_t n;

	do
		n = read(fd, b->data, sizeof(b->data));
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		b->off = 0;
		b->len = (size_t)n;
	}
	return n;
}

static void close_master(struct ns_pty *t)
{
	set_interest(t, &t->mst, 0);
	close(t->master);
	t->master = t->mst.ev.fd = -1;
	t->to_sandbox.len = 0;
}

static void make_raw(struct ns_pty *t)
{
	/* Only a terminal we read keystrokes from goes raw: the pty inside
	 * does the line editing, echo and ^C now. */
	if (t->mask & 1)
		t->raw = cl_term_raw(t->term_fd) == 0;
}

static void restore(struct ns_pty *t)
{
	if (!t->raw)
		return;
	cl_term_restore();
	t->raw = false;
}

void ns_pty_on_master(struct ns_pty *t, int fd)
{
	if (!t || t->master >= 0) {
		close(fd);   /* not asked for, or a second one: ignored */
		return;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	t->master = t->mst.ev.fd = fd;
	make_raw(t);
	/* A resize between making the pty and now sent its SIGWINCH while
	 * there was no master to give it to. */
	ns_pty_winch(t);
	update(t);
}

void ns_pty_event(struct ns_pty *t, struct ns_ev *ev, uint32_t events)
{
	ssize_t n;

	if (ev->owner == &t->in && !t->to_sandbox.len) {
		n = fill(&t->to_sandbox, t->in_fd);
		/* The caller's terminal hung up: so does the sandbox's (SIGHUP
		 * to its session, as a real terminal would). */
		if (n == 0 || (n < 0 && errno != EAGAIN))
			close_master(t);
	}
	if (ev->owner == &t->mst && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !t->to_caller.len) {
		n = fill(&t->to_caller, t->master);
		/* EIO: every slave is closed and nothing is left to read. */
		if (n == 0 || (n < 0 && errno != EAGAIN))
			close_master(t);
	}
	if (t->master >= 0 && flush(&t->to_sandbox, t->master) < 0)
		close_master(t);
	if (flush(&t->to_caller, t->out_fd) < 0) {
		/* Nowhere to show output: keep reading it, so the sandbox does
		 * not block, and drop it. */
		set_interest(t, &t->out, 0);
		t->out_fd = t->out.ev.fd = -1;
	}
	update(t);
}

void ns_pty_winch(struct ns_pty *t)
{
	struct winsize ws;

	/* t->ws is the size the pty last got from here (it was made with it).
	 * Only a size that differs is pushed: the command may have set its
	 * own (stty rows), which the caller's unchanged size would undo. The
	 * kernel sends SIGWINCH to the pty's foreground group itself. */
	if (t->master < 0 || ioctl(t->term_fd, TIOCGWINSZ, &ws) < 0 ||
	    !memcmp(&ws, &t->ws, sizeof(ws)))
		return;
	if (ioctl(t->master, TIOCSWINSZ, &ws) == 0)
		t->ws = ws;
}

static int wait_writable(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLOUT};
	int n;

	do
		n = poll(&pfd, 1, DRAIN_WAIT_MS);
	while (n < 0 && errno == EINTR);
	return n == 1 && !(pfd.revents & (POLLERR | POLLHUP | POLLNVAL)) ? 0 : -1;
}

void ns_pty_drain(struct ns_pty *t)
{
	if (!t)
		return;
	/* Reading the master flushes the pty's pending input first, so bytes
	 * written before the last slave closed are all seen before EIO. A
	 * slave passed to someone outside gives EAGAIN instead: stop there. */
	while (t->master >= 0 || t->to_caller.len) {
		if (flush(&t->to_caller, t->out_fd) < 0 || (t->to_caller.len && wait_writable(t->out_fd) < 0))
			break;
		if (t->to_caller.len)
			continue;
		if (t->master < 0 || fill(&t->to_caller, t->master) <= 0)
			break;
	}
	/* Before any message cloister prints itself. */
	restore(t);
}

void ns_pty_close(struct ns_pty *t)
{
	if (!t)
		return;
	/* The caller's terminal first: everything after may print. */
	restore(t);
	if (t->master >= 0)
		close(t->master);
	if (t->in_fd >= 0)
		close(t->in_fd);
	if (t->out_fd >= 0)
		close(t->out_fd);
	free(t);
}

/* ---- child (inside the sandbox, before exec) ---- */

static int open_master(cl_error *err)
{
	int fd = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);

	/* Without a mount namespace there is no devpts of our own. */
	if (fd < 0 && errno == ENOENT)
		fd = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return cl_fail_errno(err, "opening a terminal for the command (/dev/pts/ptmx)");
	return fd;
}

int ns_pty_peer(int master, const struct winsize *ws, cl_error *err)
{
	int unlock = 0, slave;

	if (ioctl(master, TIOCSPTLCK, &unlock) < 0)
		return cl_fail_errno(err, "unlocking the command's terminal");
	/* The peer by fd, not by /dev/pts/N path: no lookup to race. */
	slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		return cl_fail_errno(err, "opening the command's terminal");
	/* Sized before the command can ask. */
	if ((ws->ws_row || ws->ws_col) && ioctl(master, TIOCSWINSZ, ws) < 0) {
		int e = errno;
		close(slave);
		return cl_fail(err, e, "sizing the command's terminal");
	}
	return slave;
}

int ns_pty_child_setup(int sync_fd, unsigned mask, const struct winsize *ws, cl_error *err)
{
	cl_autoclose int master = open_master(err);
	cl_autoclose int slave = -1;
	int first = -1;

	if (master < 0)
		return master;
	slave = ns_pty_peer(master, ws, err);
	if (slave < 0)
		return slave;
	if (ns_msg_send_fd(sync_fd, NS_MSG_PTY, 0, 0, 0, master) < 0)
		return cl_fail(err, EPIPE, "handing the terminal to the supervisor");
	/* init's stdio too: nothing in the sandbox keeps the caller's terminal. */
	for (int fd = 0; fd <= 2; fd++) {
		if (!(mask & (1u << fd)))
			continue;
		if (dup2(slave, fd) < 0)
			return cl_fail_errno(err, "attaching the terminal as fd %d", fd);
		if (first < 0)
			first = fd;
	}
	return first;
}
