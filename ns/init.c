/* The sandbox's init (pid 1) and the command's last steps before exec.
 * init holds the sync socket, is non-dumpable and keeps no capabilities;
 * the command gets neither the socket nor any fd above 2 after exec. */
#define _GNU_SOURCE
#include "ns/init.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ns/caps.h"
#include "ns/hooks.h"
#include "ns/session.h"
#include "ns/sync.h"
#include "ns/trace.h"
#include "src/policy/parse.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

/* ---- command (child of init): last steps, then exec ---- */

static int cmd_prepare(struct ns_child *c, cl_error *err)
{
	const struct cl_policy *p = c->p;
	const char *wd = p->workdir ? p->workdir : "/";
	int rc;

	/* Die with init too. In a pid namespace init's death already ends
	 * the command; without one (bwrap without --unshare-pid) this is all
	 * there is, and init may have been killed (it dies with the
	 * supervisor) before this prctl: the command would then run on,
	 * orphaned. So, after the prctl, a parent other than init means it is
	 * gone; nobody is left to report to. */
	if (p->die_with_parent && (rc = ns_pdeathsig(c->init_pid, -1, err)) != 0) {
		if (rc < 0)
			return rc;
		_exit(125);
	}
	/* New session: the command cannot reach the caller's terminal with
	 * TIOCSTI and is not in the caller's process group. */
	if ((p->new_session || c->ctty_fd >= 0) && setsid() < 0)
		return cl_fail_errno(err, "starting a new session");
	/* After setsid (only a session leader without one may take a
	 * terminal): the pty becomes the session's controlling terminal, so
	 * /dev/tty, job control and ^C work inside. */
	if (c->ctty_fd >= 0 && ioctl(c->ctty_fd, TIOCSCTTY, 0) < 0)
		return cl_fail_errno(err, "making the pty the command's controlling terminal");
	if (p->hooks.cwd_fallback) {
		if (ns_hooks_chdir(c, err) < 0)
			return cl_error_code(err);
	} else if (chdir(wd) < 0) {
		return cl_fail_errno(err, p->hooks.bwrap_msgs ? "Can't chdir to %s" :
		                     "changing to working directory %s", wd);
	}
	/* CLOEXEC, not close: the sync socket must survive until exec so an
	 * exec failure can still be reported. bwrap passes fds on (keep_fds);
	 * cloister's own fds are all CLOEXEC already. */
	if (!p->hooks.keep_fds && syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		return cl_fail_errno(err, "closing inherited file descriptors");
	/* init limited the capability sets before starting us (see
	 * ns_init_run); what is left is making kept caps survive exec. */
	if (ns_caps_raise_ambient(&c->caps, err) < 0)
		return cl_error_code(err);
	if (p->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return cl_fail_errno(err, "setting no_new_privs");
	if (ns_hooks_block(c, err) < 0)
		return cl_error_code(err);
	/* Seccomp last: the filters may deny the calls used above. bwrap's
	 * --seccomp/--add-seccomp-fd programs stack on top of the policy's. */
	if (sc_load(c->prog) < 0)
		return cl_fail_errno(err, "loading the seccomp filter");
	ns_hooks_seccomp_install(c);
	return 0;
}

/* A failure of the vfork child, for init to send. The child shares init's
 * memory until exec, so it writes its report here and _exits; init sends
 * it as its own message once vfork returns. The supervisor accepts
 * messages only from init's pid (SCM_CREDENTIALS), and after exec the
 * command has the child's pid: a command holding a copy of init's socket
 * must not be able to pass for it. Without a vfork (--as-pid-1) the
 * child is init and sends directly. Written only by the child, read only
 * after vfork returned (the child has exec'd or exited by then). */
static struct {
	uint32_t type;          /* 0: nothing to report */
	int errnum;
	char step[16];
	char text[CL_ERROR_MSG_MAX];
} cmd_report;

_Noreturn static void cmd_fail(struct ns_child *c, uint32_t type, int errnum, const char *step,
                               const char *text, int code)
{
	if (c->p->hooks.as_pid_1) {
		ns_msg_send(c->sync_fd, type, errnum, 0, step, text);
	} else {
		cmd_report.errnum = errnum;
		snprintf(cmd_report.step, sizeof(cmd_report.step), "%s", step);
		snprintf(cmd_report.text, sizeof(cmd_report.text), "%s", text);
		cmd_report.type = type;
	}
	_exit(code);
}

/* The kernel's struct sigaction (rt_sigaction(2)): libc's wrapper refuses
 * glibc's own two real-time signals, which an ignoring parent (an ASan
 * runtime's, say) can also have left ignored. */
struct k_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

/* Raw rt_sigaction only: this runs in init's vfork child, whose signal
 * handlers are its own (vfork does not share them). */
void ns_reset_ignored_signals(void)
{
	const struct k_sigaction dfl = {.handler = SIG_DFL};
	struct k_sigaction cur;

	for (int sig = 1; sig <= 64; sig++)
		if (sig != SIGKILL && sig != SIGSTOP &&
		    syscall(SYS_rt_sigaction, sig, NULL, &cur, sizeof(cur.mask)) == 0 &&
		    cur.handler == SIG_IGN)
			syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));
}

_Noreturn static void cmd_exec(struct ns_child *c)
{
	cl_error err = {0};
	char what[CL_ERROR_MSG_MAX];
	int e;

	if (!c->p->hooks.keep_ignored_signals)
		ns_reset_ignored_signals();
	sigprocmask(SIG_SETMASK, &c->orig_mask, NULL);
	if (cmd_prepare(c, &err) < 0)
		cmd_fail(c, NS_MSG_SETUP_ERROR, err.errnum, "command", err.msg, 125);
	environ = c->envp;   /* execvp resolves with the sandbox's PATH */
	ns_trace(c->trace, "command", "pre-exec");
	execvp(c->exec_path, c->exec_argv);
	e = errno;
	snprintf(what, sizeof(what), "%s %s", c->p->hooks.exec_fail_code ? "execvp" : "executing",
	         c->exec_path);
	cmd_fail(c, NS_MSG_EXEC_ERROR, e, "exec", what,
	         c->p->hooks.exec_fail_code ? c->p->hooks.exec_fail_code : cl_exit_code_of_exec_errno(e));
}

/* ---- init (pid 1) ---- */

/* Forward a signal unless the command already got it from the terminal
 * (same session, kernel-generated). */
static void forward(struct ns_child *c, pid_t cmd, int sig, int code)
{
	if (!c->p->new_session && code == SI_KERNEL)
		return;
	kill(cmd, sig);
}

/* Reaps everything; returns true once the command itself was reaped. */
static bool reap(pid_t cmd, int *status)
{
	bool done = false;
	int st;
	pid_t r;

	while ((r = waitpid(-1, &st, WNOHANG)) > 0)
		if (r == cmd) {
			*status = st;
			done = true;
		}
	return done;
}

/* A socket in the sandbox's network namespace for the supervisor's relay.
 * Only the two socket types are served, only AF_INET: the supervisor
 * connects it to 127.0.0.1 itself. */
static void serve_socket_request(int sync_fd)
{
	struct ns_msg m;
	int fd = -1, type;

	if (ns_msg_recv(sync_fd, &m) <= 0 || m.type != NS_MSG_SOCKET_REQ)
		return;
	type = m.status == SOCK_DGRAM ? SOCK_DGRAM : SOCK_STREAM;
	fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ns_msg_send_fd(sync_fd, NS_MSG_SOCKET, m.id, fd < 0 ? errno : 0, 0, fd);
	if (fd >= 0)
		close(fd);
}

/* Waits for init's next signal, serving socket requests meanwhile. */
static void next_signal(struct ns_child *c, int sfd, struct signalfd_siginfo *si)
{
	for (;;) {
		struct pollfd pfd[2] = {
			{.fd = sfd, .events = POLLIN},
			{.fd = c->serve_sockets ? c->sync_fd : -1, .events = POLLIN},
		};
		if (poll(pfd, 2, -1) < 0)
			continue;
		if (pfd[1].revents & POLLIN)
			serve_socket_request(c->sync_fd);
		if ((pfd[0].revents & POLLIN) && read(sfd, si, sizeof(*si)) == (ssize_t)sizeof(*si))
			return;
	}
}

/* Waits for the command, serving signals and socket requests. */
static int init_loop(struct ns_child *c, pid_t cmd, int sfd)
{
	struct signalfd_siginfo si;
	int status = 0;

	for (;;) {
		next_signal(c, sfd, &si);
		if (si.ssi_signo != SIGCHLD) {
			forward(c, cmd, (int)si.ssi_signo, si.ssi_code);
			continue;
		}
		if (reap(cmd, &status))
			return status;
	}
}

_Noreturn static void init_fail(struct ns_child *c, const char *what)
{
	ns_msg_send(c->sync_fd, NS_MSG_SETUP_ERROR, errno, 0, "init", what);
	_exit(125);
}

/* Capabilities, before the command exists: bounding set and ambient empty,
 * the other sets down to what the command keeps. init needs nothing more
 * from here on, and the command inherits exactly this. Like every other
 * setup failure, a failed drop is fatal: the command is never started. */
static void init_limit_caps(struct ns_child *c)
{
	cl_error err = {0};

	if (ns_caps_limit(&c->caps, &err) < 0) {
		cl_wrap(&err, "init");
		errno = err.errnum;
		init_fail(c, err.msg);
	}
}

/* After the command started: the caps it kept leave init too. Fatal as
 * well; init exiting takes the command and the pid namespace with it. */
static void init_clear_caps(struct ns_child *c, pid_t cmd)
{
	cl_error err = {0};

	if (c->caps.keep && ns_caps_clear(&err) < 0) {
		kill(cmd, SIGKILL);
		cl_wrap(&err, "init, after starting the command");
		errno = err.errnum;
		init_fail(c, err.msg);
	}
}

/* The namespaces the sandbox has of its own go to the supervisor, which
 * lets each exec join them. Opening our own /proc/self/ns needs nothing;
 * one that cannot be sent is a setup failure. */
static void send_namespaces(struct ns_child *c)
{
	char path[64];

	for (int i = 0; i < NS_SESS_N; i++) {
		int fd;
		if (!(c->p->ns_flags & ns_sess_kinds[i].flag))
			continue;
		snprintf(path, sizeof(path), "/proc/self/ns/%s", ns_sess_kinds[i].name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			init_fail(c, "opening the session's namespaces");
		if (ns_msg_send_fd(c->sync_fd, NS_MSG_NSFD, (uint32_t)i, 0, 0, fd) < 0)
			init_fail(c, "handing over the session's namespaces");
		close(fd);
	}
}

/* init is a fork of the cloister process, so its /proc/PID/cmdline is the
 * caller's whole command line, and cmdline is readable by everyone who
 * sees pid 1, dumpable or not. Its argument area (arg_start..arg_end in
 * /proc/self/stat) becomes "cloister-init": the title, then NULs, and a
 * last byte that is not NUL, which tells the kernel the area was
 * rewritten (setproctitle) so that cmdline ends at the title's NUL. Safe
 * at any point after parsing: every string of the policy, the command's
 * argv included, is a copy the policy owns, none points into this area.
 * Without /proc inside there is nothing to read it through, and nothing
 * is done. */
static void init_hide_argv(void)
{
	static const char title[] = "cloister-init";
	char buf[2048];
	unsigned long start = 0, end = 0;
	char *next = NULL, *last = NULL;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), field = 2;
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	const char *at;

	if (fd >= 0)
		close(fd);
	prctl(PR_SET_NAME, title, 0, 0, 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	/* Fields counted after the comm's last ')' (it may hold spaces). */
	for (at = strrchr(buf, ')'); at && *at && field < 48; at++)
		field += *at == ' ';
	if (!at || !*at)
		return;
	errno = 0;
	start = strtoul(at, &next, 10);
	end = next != at ? strtoul(next, &last, 10) : 0;
	if (errno || next == at || last == next || end <= start + 2)
		return;
	size_t len = end - start, t = len - 2 < sizeof(title) - 1 ? len - 2 : sizeof(title) - 1;
	memset((char *)start, 0, len);
	memcpy((char *)start, title, t);
	((char *)start)[len - 1] = ' ';
}

/* A session's init runs no command: it reaps what the session's execs
 * leave behind (orphans come to pid 1), serves --publish socket requests,
 * and ends the sandbox on SIGTERM/SIGINT/SIGHUP (its exit kills the pid
 * namespace). It holds no capability: nothing is ever started from it. */
_Noreturn static void session_loop(struct ns_child *c, int sfd)
{
	struct signalfd_siginfo si;
	cl_error err = {0};

	ns_hooks_close_fds_except(c->sync_fd, c->lock_fd, sfd);
	send_namespaces(c);
	if (ns_caps_clear(&err) < 0) {
		errno = err.errnum;
		init_fail(c, err.msg);
	}
	/* After the drop: the supervisor lets execs in only once init holds
	 * nothing an exec could take from it. */
	ns_msg_send(c->sync_fd, NS_MSG_READY, 0, 0, "ready", "");
	for (;;) {
		next_signal(c, sfd, &si);
		if (si.ssi_signo == SIGCHLD)
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
		else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT || si.ssi_signo == SIGHUP)
			_exit(0);
	}
}

_Noreturn void ns_init_run(struct ns_child *c)
{
	sigset_t set;
	int status, sfd;
	pid_t cmd;

	/* --as-pid-1: no reaper, the command itself is pid 1. */
	if (c->p->hooks.as_pid_1) {
		init_limit_caps(c);
		cmd_exec(c);
	}

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++)
		sigaddset(&set, forwarded[i]);
	/* Block before fork so no SIGCHLD or forwarded signal is lost. */
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0)
		init_fail(c, "creating init's signalfd");
	/* init leaves the caller's session only with the command, so terminal
	 * signals reach them exactly once (see forward()). */
	if (c->p->new_session)
		setsid();
	/* Non-dumpable before the command exists: once it has exec'd it runs
	 * beside init (same uid), and must never be able to ptrace init or
	 * open its /proc files while init still holds capabilities. exec
	 * resets the command's own dumpable flag. bwrap mode keeps init
	 * dumpable (its callers open /proc/PID/ns, as with bwrap's own init)
	 * and relies on the kernel's rule that a process without init's
	 * capabilities cannot ptrace it. */
	if (!c->p->hooks.init_dumpable && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		init_fail(c, "making init non-dumpable");
	/* After the dumpable flag (no window where a same-uid process could
	 * attach to a capable init), before vfork (the command inherits the
	 * limited sets; the bounding set needs our CAP_SETPCAP). */
	init_limit_caps(c);
	/* Before the command exists (after its exec it could read cmdline
	 * before init got to run again). */
	init_hide_argv();
	if (c->p->session)
		session_loop(c, sfd);
	/* vfork: the command only runs its last steps and execs, so copying
	 * init's page tables is wasted work. init is suspended meanwhile; the
	 * command never returns from cmd_exec (it execs or _exits), and it
	 * has its own fd table, fs state, credentials and seccomp filter. */
	/* NOLINTNEXTLINE(clang-analyzer-security.insecureAPI.vfork): see above */
	cmd = vfork();
	if (cmd < 0)
		init_fail(c, "starting the command");
	if (cmd == 0) {
		/* ===== command: vfork child, init's memory, uid as mapped =====
		 * It shares init's address space until exec: no malloc/free,
		 * no stdio, no libcap, nothing that takes a lock or changes a
		 * heap or global init still uses. Everything it needs was
		 * prepared before the vfork (argv, envp, seccomp programs, the
		 * capability plan); it makes raw syscalls and writes only its
		 * own stack, the command's environ and static buffers init
		 * never reads, except its failure report (cmd_report, then _exit). */
		cmd_exec(c);
	}

	/* ===== init: pid 1, no exec from here on ===== */
	ns_trace(c->trace, "init", "fork");
	/* Before the loop: the supervisor sees the command's failure before
	 * the exit status that follows it, as when the child sent it. */
	if (cmd_report.type)
		ns_msg_send(c->sync_fd, cmd_report.type, cmd_report.errnum, 0, cmd_report.step,
		            cmd_report.text);
	/* Keep only stdio, the sync socket, the lock and the signalfd: mount
	 * trees and other setup fds must not outlive setup in a process the
	 * command shares namespaces with. */
	ns_hooks_close_fds_except(c->sync_fd, c->lock_fd, sfd);
	init_clear_caps(c, cmd);
	status = init_loop(c, cmd, sfd);
	ns_trace(c->trace, "init", "command reaped");
	ns_msg_send(c->sync_fd, NS_MSG_EXIT, 0, status, "exit", "");
	/* Exiting kills everything left in the pid namespace. */
	_exit(cl_exit_code_of_status(status) & 0xff);
}
