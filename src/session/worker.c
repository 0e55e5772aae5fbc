/* The worker of one request. It joins the session's user, mount, pid, net,
 * ipc and uts namespaces (setns by init's pidfd), clones the confined
 * child into the session's cgroup, waits for it (timeout, client gone)
 * and sends the reply. The child takes the session's identity, cgroup
 * namespace, capability drop, no_new_privs and seccomp filter, in that
 * order, then execs the command or does the copy. */
#define _GNU_SOURCE
#include "src/session/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/securebits.h>

#include "cgroups/cgroup.h"
#include "ns/init.h"
#include "ns/pty.h"
#include "src/util/fdio.h"
#include "src/util/fsafe.h"
#include "src/session/tree.h"
#include "src/policy/parse.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* The child's verdict when it does not reach exec (or the copy failed):
 * written to the error pipe, which exec closes. */
struct verdict {
	int code;
	char msg[400];
};

struct job {
	const struct ns_live *l;
	struct ss_req *r;
	char **envp;
	int err_w;        /* child's end of the error pipe */
	int pty_w;        /* child's end of the pty socket (master to the worker), or -1 */
	int gate_r;       /* cgroup v1: wait for the attach, or -1 */
};

__attribute__((format(printf, 4, 5)))
_Noreturn static void child_fail(struct job *j, int code, int e, const char *fmt, ...)
{
	struct verdict v = {.code = code};
	char what[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(v.msg, sizeof(v.msg), e ? "%s: %s" : "%s", what, strerror(e));
	if (write(j->err_w, &v, sizeof(v)) < 0) {
		/* nobody left to tell */
	}
	_exit(code);
}

/* The session's uid/gid inside. A rootless session maps the caller's own
 * ids, which setns already gives us; a root caller's maps another host id,
 * so we switch (groups first, while we still may) keeping capabilities
 * across the change for the drop that follows. */
static int take_identity(const struct cl_policy *p)
{
	if (getuid() == p->uid && getgid() == p->gid)
		return 0;
	if (setgroups(0, NULL) < 0)
		return -1;
	if (prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP, 0, 0, 0) < 0)
		return -1;
	if (setresgid(p->gid, p->gid, p->gid) < 0 || setresuid(p->uid, p->uid, p->uid) < 0)
		return -1;
	return prctl(PR_SET_SECUREBITS, 0, 0, 0, 0);
}

static int open_in_root(int dirfd, const char *path, int flags, unsigned mode, unsigned long res);

/* The command's terminal, when the client asked for one: a pty of the
 * session's own devpts (as `cloister run` gives its command), never a
 * terminal of the host the command could reach other users through. Its
 * slave goes on the fds of the mask, becomes the controlling terminal
 * (setsid came first) and the master goes to the worker, for the client.
 * The path is the sandbox's: no link is followed, and what opens must be
 * a ptmx, so nothing the sandbox planted stands in for it. */
static void attach_pty(struct job *j)
{
	struct winsize ws = {.ws_row = j->r->rows, .ws_col = j->r->cols};
	cl_error err = {0};
	struct stat st;
	int master, slave, first = -1;

	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	master = root < 0 ? -1 : open_in_root(root, "/dev/pts/ptmx", O_RDWR | O_NOCTTY, 0,
	                                      RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS);
	if (master < 0)
		child_fail(j, 125, errno, "%s", "opening the session's /dev/pts/ptmx for the command's "
		           "terminal");
	if (fstat(master, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(5, 2))
		child_fail(j, 125, 0, "%s", "the session's /dev/pts/ptmx is not a pty multiplexer");
	slave = ns_pty_peer(master, &ws, &err);
	if (slave < 0)
		child_fail(j, 125, err.errnum, "%s", err.msg);
	for (int fd = 0; fd <= 2; fd++) {
		if (!(j->r->pty_mask & (1u << fd)))
			continue;
		if (dup2(slave, fd) < 0)
			child_fail(j, 125, errno, "attaching the terminal as fd %d", fd);
		if (first < 0)
			first = fd;
	}
	if (ioctl(first, TIOCSCTTY, 0) < 0)
		child_fail(j, 125, errno, "%s", "making the pty the command's controlling terminal");
	/* Last: the client goes raw only for a terminal that is all set. */
	if (ss_send(j->pty_w, "P", 1, &master, 1) < 0)
		child_fail(j, 125, EPIPE, "%s", "handing the terminal to the client");
	close(master);
	close(slave);
	close(root);
}

/* fds the child keeps: the request's at 0..n-1 (copies: the data fd at 0
 * for put, 1 for get, with /dev/null-like stdio from the supervisor on the
 * others), the error pipe at 3, nothing else. Order: the supervisor's 0..2
 * are always open, so a received fd is 3 or above; stdio is placed first
 * and the pipe (moved above 10 beforehand) last, so neither overwrites a
 * received fd it still needs. */
static void arrange_fds(struct job *j)
{
	struct ss_req *r = j->r;
	int e = fcntl(j->err_w, F_DUPFD_CLOEXEC, 10);

	if (e < 0)
		child_fail(j, 125, errno, "%s", "arranging file descriptors");
	j->err_w = e;
	if (r->op == SS_OP_EXEC) {
		for (int i = 0; i < 3; i++)
			if (dup2(r->fds[i], i) < 0)
				child_fail(j, 125, errno, "%s", "passing stdio");
	} else if (dup2(r->fds[0], r->op == SS_OP_PUT ? 0 : 1) < 0) {
		child_fail(j, 125, errno, "%s", "passing the file");
	}
	/* After stdio (the pty replaces some of it), before the pipe moves to
	 * 3, which could be the pty socket's number. */
	if (r->pty_mask)
		attach_pty(j);
	if (dup3(j->err_w, 3, O_CLOEXEC) < 0)
		child_fail(j, 125, errno, "%s", "arranging file descriptors");
	j->err_w = 3;
	syscall(SYS_close_range, 4U, ~0U, 0U);
}

/* A cp job runs cloister's own code to its end (no exec) and opens with
 * openat2, which the root guard refuses (it cannot read openat2's mode):
 * it takes the profile without the guard, which is for the command. No
 * process of the sandbox can reach it meanwhile: it is not dumpable. */
static const struct sc_program *confine_prog(const struct job *j, struct sc_program *unguarded)
{
	const struct sc_program *prog = j->l->prog;

	if (!prog || (j->r->op != SS_OP_PUT && j->r->op != SS_OP_GET))
		return prog;
	*unguarded = *prog;
	unguarded->guard = NULL;
	unguarded->guard_len = 0;
	return unguarded;
}

static void confine(struct job *j)
{
	struct sc_program unguarded;
	const struct cl_policy *p = j->l->p;
	cl_error err = {0};
	struct rlimit rl = {p->rlimit_nproc, p->rlimit_nproc};

	if (j->l->ns_fds[NS_SESS_CGROUP] >= 0 &&
	    setns(j->l->ns_fds[NS_SESS_CGROUP], CLONE_NEWCGROUP) < 0)
		child_fail(j, 125, errno, "%s", "joining the session's cgroup namespace");
	if (j->l->ns_fds[NS_SESS_CGROUP] >= 0)
		close(j->l->ns_fds[NS_SESS_CGROUP]);
	if (take_identity(p) < 0)
		child_fail(j, 125, errno, "%s", "taking the session's uid/gid");
	if (p->rlimit_nproc && setrlimit(RLIMIT_NPROC, &rl) < 0)
		child_fail(j, 125, errno, "%s", "setting RLIMIT_NPROC");
	/* Until exec nobody in the sandbox may attach to us: we still hold
	 * capabilities and the client's fds. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		child_fail(j, 125, errno, "%s", "making the exec non-dumpable");
	/* Before the pty (arrange_fds): only a session leader without a
	 * terminal may take one as its controlling terminal. */
	if ((p->new_session || j->r->pty_mask) && setsid() < 0)
		child_fail(j, 125, errno, "%s", "starting a new session");
	arrange_fds(j);
	/* Bounding set, then the sets themselves, then ambient (the order of
	 * ns_caps_limit/raise_ambient); no_new_privs before seccomp, which
	 * comes last: the filter may deny the calls above. */
	if (ns_caps_limit(j->l->caps, &err) < 0 || ns_caps_raise_ambient(j->l->caps, &err) < 0)
		child_fail(j, 125, err.errnum, "%s", err.msg);
	if (p->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(j, 125, errno, "%s", "setting no_new_privs");
	/* The session's supervisor inherited its dispositions from `create`'s
	 * caller: the exec starts clean, as a run does. */
	ns_reset_ignored_signals();
	sigprocmask(SIG_SETMASK, &j->l->orig_mask, NULL);
	if (sc_load(confine_prog(j, &unguarded)) < 0)
		child_fail(j, 125, errno, "%s", "loading the seccomp filter");
}

/* in to out, at most limit bytes (more: -1 with EFBIG). */
static int copy_fd(int in, int out, uint64_t limit)
{
	static char buf[65536];
	uint64_t total = 0;
	ssize_t n;

	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		total += (uint64_t)n;
		if (total > limit) {
			errno = EFBIG;
			return -1;
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return -1;
			off += w;
		}
	}
	return 0;
}

/* Paths resolve inside the sandbox's root (we are in its mount namespace
 * and "/" is its root); RESOLVE_IN_ROOT keeps absolute links and ".."
 * there too, and no magic link (/proc/self/fd/N, /proc/1/root) is ever
 * followed. */
static int open_in_root(int dirfd, const char *path, int flags, unsigned mode, unsigned long res)
{
	struct open_how how = {.flags = (uint64_t)flags | O_CLOEXEC, .mode = mode,
	                       .resolve = res | RESOLVE_NO_MAGICLINKS};

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* mkdir -p of path's parent, one component at a time: each parent is
 * resolved in the sandbox's root, and mkdirat makes a single name in it
 * (an existing name, link or not, is left as it is and resolved next). */
static int make_parents(int root, const char *path)
{
	char buf[4096];
	size_t len = strlen(path);
	int fd, rc;

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; (p = strchr(p, '/')) != NULL; p++) {
		char *name;
		*p = '\0';
		name = strrchr(buf, '/');
		*name = '\0';
		fd = open_in_root(root, buf[0] ? buf : "/", O_PATH | O_DIRECTORY, 0, RESOLVE_IN_ROOT);
		*name = '/';
		if (fd < 0)
			return -1;
		rc = mkdirat(fd, name + 1, 0755);
		close(fd);
		*p = '/';
		if (rc < 0 && errno != EEXIST)
			return -1;
	}
	return 0;
}

_Noreturn static void do_put(struct job *j)
{
	struct ss_req *r = j->r;
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int dir, fd;
	struct stat st;
	/* O_NONBLOCK: a fifo the sandbox planted at the destination opens at
	 * once (ENXIO without a reader) and is refused below, instead of
	 * holding the copy until a reader comes. */
	const int wflags = O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;

	umask(0);
	if (r->mkdirs && make_parents(root, r->path) < 0)
		child_fail(j, 125, errno, "creating the directories of %s", r->path);
	dir = open_in_root(root, r->path, O_PATH | O_DIRECTORY, 0, RESOLVE_IN_ROOT);
	if (dir >= 0 && r->name)
		fd = open_in_root(dir, r->name, wflags, r->mode & 0777,
		                  RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	else if (dir >= 0)
		child_fail(j, 125, EISDIR, "writing %s", r->path);
	else
		fd = open_in_root(root, r->path, wflags, r->mode & 0777, RESOLVE_IN_ROOT);
	if (fd < 0 && errno == ELOOP)
		child_fail(j, 125, 0, "writing %s: it is a symbolic link (cloister cp never writes "
		           "through one)", r->path);
	if (fd < 0 && errno == ENXIO)
		child_fail(j, 125, 0, "writing %s: not a regular file (a fifo)", r->path);
	if (fd < 0)
		child_fail(j, 125, errno, "writing %s", r->path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		child_fail(j, 125, 0, "writing %s: not a regular file", r->path);
	if (fcntl(fd, F_SETFL, 0) < 0)
		child_fail(j, 125, errno, "writing %s", r->path);
	if (copy_fd(0, fd, UINT64_MAX) < 0)
		child_fail(j, 125, errno, "writing %s", r->path);
	if (close(fd) < 0)
		child_fail(j, 125, errno, "writing %s", r->path);
	_exit(0);
}

_Noreturn static void do_get(struct job *j)
{
	struct ss_req *r = j->r;
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd = open_in_root(root, r->path, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0, RESOLVE_IN_ROOT);
	struct stat st;

	if (fd < 0)
		child_fail(j, 125, errno, "reading %s", r->path);
	/* Regular files only: a fifo or device the sandbox planted must not
	 * block the copy or feed it forever. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		child_fail(j, 125, 0, "reading %s: not a regular file", r->path);
	/* The limit of one copy (the client holds it too): a sparse file
	 * costs the sandbox nothing and would stream without end. */
	if ((uint64_t)st.st_size > SS_TREE_MAX_BYTES)
		child_fail(j, 125, 0, "%s: more than %llu bytes in one copy (the limit of cloister cp)",
		           r->path, (unsigned long long)SS_TREE_MAX_BYTES);
	fcntl(fd, F_SETFL, 0);
	if (copy_fd(fd, 1, SS_TREE_MAX_BYTES) < 0) {
		if (errno == EFBIG)
			child_fail(j, 125, 0, "%s: more than %llu bytes in one copy (the limit of "
			           "cloister cp)", r->path, (unsigned long long)SS_TREE_MAX_BYTES);
		child_fail(j, 125, errno, "copying %s", r->path);
	}
	_exit(0);
}

/* Where a tree copied in goes: into the directory at path under the
 * source's name, else at path itself (its parent must exist). *name
 * points into buf or the request. The parent's fd, or -1 with errno. */
static int tree_dest(int root, const struct ss_req *r, char *buf, size_t size, const char **name)
{
	int dir = open_in_root(root, r->path, O_PATH | O_DIRECTORY, 0, RESOLVE_IN_ROOT);
	char *slash;
	size_t len;

	if (dir >= 0) {
		*name = r->name;
		if (!r->name) {
			close(dir);
			errno = EISDIR;
			return -1;
		}
		return dir;
	}
	len = strlen(r->path);
	while (len > 1 && r->path[len - 1] == '/')
		len--;
	if (len >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, r->path, len);
	buf[len] = '\0';
	slash = strrchr(buf, '/');
	*name = slash + 1;
	if (!**name || !strcmp(*name, ".") || !strcmp(*name, "..")) {
		errno = EINVAL;
		return -1;
	}
	*slash = '\0';
	return open_in_root(root, buf[0] ? buf : "/", O_PATH | O_DIRECTORY, 0, RESOLVE_IN_ROOT);
}

/* A tree from stdin: built in a fresh directory beside its destination,
 * then renamed into place (an existing directory there is exchanged and
 * removed), so a failed copy leaves nothing and the destination is never
 * half-made. The parent resolves in the sandbox's root; below it every
 * step is an *at call on a directory we just made. */
_Noreturn static void do_put_tree(struct job *j)
{
	struct ss_req *r = j->r;
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char buf[4096], tmp[32];
	const char *name;
	cl_error err = {0};
	int parent, tfd;

	if (r->mkdirs && make_parents(root, r->path) < 0)
		child_fail(j, 125, errno, "creating the directories of %s", r->path);
	parent = tree_dest(root, r, buf, sizeof(buf), &name);
	if (parent < 0)
		child_fail(j, 125, errno, "writing %s", r->path);
	tfd = ss_tree_mktemp(parent, tmp, &err);
	if (tfd < 0)
		child_fail(j, 125, err.errnum, "writing %s: %s", r->path, err.msg);
	if (ss_tree_recv(0, tfd, &err) < 0 || ss_tree_commit(parent, tmp, name, r->path, &err) < 0) {
		/* Said in the one error the client gets (this child's stderr
		 * reaches nobody). */
		int left = cl_remove_tree_at(parent, tmp);
		child_fail(j, 125, err.errnum, "copying into %s: %s%s%s", r->path, err.msg,
		           left < 0 ? "; the partial copy could not be removed: " : "",
		           left < 0 ? strerror(-left) : "");
	}
	_exit(0);
}

_Noreturn static void do_get_tree(struct job *j)
{
	struct ss_req *r = j->r;
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd = open_in_root(root, r->path, O_RDONLY | O_DIRECTORY, 0, RESOLVE_IN_ROOT);
	cl_error err = {0};

	if (fd < 0)
		child_fail(j, 125, errno, "reading %s", r->path);
	/* A client that stopped reading is an error reply, not a kill. */
	signal(SIGPIPE, SIG_IGN);
	if (ss_tree_send(fd, 1, r->path, &err) < 0)
		child_fail(j, 125, err.errnum, "copying %s", err.msg);
	_exit(0);
}

/* Closes every fd of the supervisor the child does not need: it is in
 * the sandbox's pid namespace from the clone on, and what it holds (the
 * cgroup directory, the namespace and runtime-dir fds, the listening
 * socket) are host fds. Kept: 0..2 (replaced in arrange_fds), the
 * request's fds, the error pipe, the pty socket, the v1 gate and the
 * cgroup namespace (joined in confine, closed there). */
static void keep_only_needed(struct job *j)
{
	int keep[SS_MAX_FDS + 5], n = 0;

	for (size_t i = 0; i < j->r->n_fds; i++)
		keep[n++] = j->r->fds[i];
	keep[n++] = j->err_w;
	keep[n++] = j->pty_w;
	keep[n++] = j->gate_r;
	keep[n++] = j->l->ns_fds[NS_SESS_CGROUP];
	if (cl_close_fds_except(keep, (size_t)n) < 0)
		child_fail(j, 125, errno, "%s", "closing the supervisor's fds");
}

_Noreturn static void child_main(struct job *j)
{
	const struct cl_policy *p = j->l->p;
	const char *wd = j->r->workdir ? j->r->workdir : p->workdir ? p->workdir : "/";
	char go;

	/* First: nothing inside can take these, as the worker made us
	 * non-dumpable (ss_worker_main), but none should exist here at all. */
	keep_only_needed(j);
	/* Die with the worker: it is what the client and `rm` wait on. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (j->gate_r >= 0 && read(j->gate_r, &go, 1) != 1)
		_exit(125);
	confine(j);
	if (chdir(wd) < 0)
		child_fail(j, 125, errno, "changing to working directory %s", wd);
	if (j->r->op == SS_OP_PUT)
		j->r->tree ? do_put_tree(j) : do_put(j);
	if (j->r->op == SS_OP_GET)
		j->r->tree ? do_get_tree(j) : do_get(j);
	environ = j->envp;
	execvp(j->r->argv[0], (char **)j->r->argv);
	child_fail(j, cl_exit_code_of_exec_errno(errno), errno, "executing %s", j->r->argv[0]);
}

/* The session's environment with the request's K=V entries on top. */
static char **build_env(const struct cl_policy *p, const struct ss_req *r)
{
	size_t n = cl_strv_len(p->env), k = 0;
	char **e = calloc(n + r->n_env + 1, sizeof(char *));

	if (!e)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t kl = strcspn(p->env[i], "=");
		bool over = false;
		for (size_t m = 0; m < r->n_env && !over; m++)
			over = strncmp(r->env[m], p->env[i], kl + 1) == 0;
		if (!over)
			e[k++] = p->env[i];
	}
	for (size_t m = 0; m < r->n_env; m++)
		e[k++] = (char *)r->env[m];
	return e;
}

static int join_namespaces(const struct ns_live *l)
{
	/* The cgroup namespace is joined by the child, after it was cloned
	 * into the session's cgroup: from inside that namespace our own
	 * cgroup is out of view and the move would be refused. */
	for (int i = 0; i < NS_SESS_N; i++)
		if (i != NS_SESS_CGROUP && l->ns_fds[i] >= 0 &&
		    setns(l->ns_fds[i], ns_sess_kinds[i].flag) < 0)
			return -1;
	return 0;
}

static pid_t clone_child(const struct ns_live *l, int *pidfd)
{
	int cgfd = cg_clone_fd(l->cg);
	struct clone_args a = {.flags = CLONE_PIDFD, .pidfd = (uint64_t)(uintptr_t)pidfd,
	                       .exit_signal = SIGCHLD};

	if (cgfd >= 0) {
		a.flags |= CLONE_INTO_CGROUP;
		a.cgroup = (uint64_t)cgfd;
	}
	return (pid_t)syscall(SYS_clone3, &a, sizeof(a));
}

/* Waits for the child; the client hanging up or the timeout kills its
 * whole process group. Returns the wait status. */
static int wait_child(pid_t pid, int pidfd, int conn, uint64_t timeout_ms, bool *timed_out)
{
	struct itimerspec its = {.it_value = {(time_t)(timeout_ms / 1000),
	                                      (long)(timeout_ms % 1000) * 1000000L}};
	int tfd = timeout_ms ? timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC) : -1;
	siginfo_t si = {0};

	if (tfd >= 0)
		timerfd_settime(tfd, 0, &its, NULL);
	for (;;) {
		struct pollfd pf[3] = {{pidfd, POLLIN, 0}, {conn, POLLIN, 0}, {tfd, POLLIN, 0}};
		if (poll(pf, 3, -1) < 0)
			continue;
		if (pf[0].revents)
			break;
		if (pf[1].revents || pf[2].revents) {
			*timed_out = pf[2].revents != 0;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			conn = -1;
			tfd = -1;
		}
	}
	if (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0)
		return 125 << 8;
	/* Its group may outlive it (a background job): it goes too. */
	kill(-pid, SIGKILL);
	return si.si_code == CLD_EXITED ? (si.si_status & 0xff) << 8 : si.si_status & 0x7f;
}

/* The pty master from the child to the client, ahead of the reply. The
 * child sends it before exec, or fails and exits: either ends the wait
 * (its end of the socket closes with exec or exit). */
static void pass_master(int from, int conn)
{
	struct ss_reply m = {.magic = SS_REPLY_MAGIC, .flags = SS_RF_PTY};
	char buf[8];
	int fds[SS_MAX_FDS];
	size_t n_fds = 0;
	ssize_t n = ss_recv(from, buf, sizeof(buf), fds, &n_fds);

	if (n > 0 && n_fds == 1)
		ss_send(conn, &m, sizeof(m), fds, 1);
	for (size_t i = 0; i < n_fds; i++)
		close(fds[i]);
	close(from);
}

_Noreturn void ss_worker_main(const struct ns_live *l, struct ss_req *r, int conn)
{
	struct job j = {.l = l, .r = r, .err_w = -1, .pty_w = -1, .gate_r = -1};
	int ep[2], gate[2] = {-1, -1}, ps[2] = {-1, -1}, pidfd = -1, status;
	bool timed_out = false, v1 = l->cg && cg_clone_fd(l->cg) < 0;
	struct verdict v = {0};
	struct cg_window win;
	struct cg_stats cs;
	unsigned mem;
	cl_error err = {0};
	pid_t pid;

	j.envp = build_env(l->p, r);
	if (!j.envp || pipe2(ep, O_CLOEXEC) < 0 || (v1 && pipe2(gate, O_CLOEXEC) < 0) ||
	    (r->pty_mask && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ps) < 0)) {
		ss_reply_send(conn, 125, 0, "cloister: preparing the exec: %s", strerror(errno));
		_exit(0);
	}
	/* Before the namespaces and the clone: the child is in the sandbox's
	 * pid namespace from its first instruction and holds our fds until
	 * keep_only_needed. Non-dumpable is inherited by the clone, and its
	 * mm stays owned by the host's user namespace until exec, so no
	 * CAP_SYS_PTRACE inside lets a sandbox process ptrace it, take an fd
	 * with pidfd_getfd or read its /proc/PID/fd. exec resets it, after
	 * the fds are gone. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || join_namespaces(l) < 0) {
		ss_reply_send(conn, 125, 0, "cloister: joining the session's namespaces: %s",
		              strerror(errno));
		_exit(0);
	}
	/* Before the command can allocate anything: the window's start. */
	cg_window_begin(l->cg, &win);
	j.err_w = ep[1];
	j.pty_w = ps[1];
	j.gate_r = gate[0];
	pid = clone_child(l, &pidfd);
	if (pid == 0) {
		/* ===== child: in the sandbox's namespaces, caps in its userns ===== */
		close(ep[0]);
		if (ps[0] >= 0)
			close(ps[0]);
		close(conn);
		child_main(&j);
	}
	/* ===== worker: host pid namespace, the caller's credentials ===== */
	close(ep[1]);
	if (ps[1] >= 0)
		close(ps[1]);
	for (size_t i = 0; i < r->n_fds; i++)
		close(r->fds[i]);
	if (pid < 0) {
		ss_reply_send(conn, 125, 0, "cloister: starting the command in the session: %s",
		              strerror(errno));
		_exit(0);
	}
	/* cgroup v1 has no clone-into: the child waits for its attach. */
	if (v1 && cg_attach(l->cg, pid, &err) < 0) {
		kill(pid, SIGKILL);
		ss_reply_send(conn, 125, 0, "cloister: %s", err.msg);
		_exit(0);
	}
	if (v1 && write(gate[1], "g", 1) != 1)
		kill(pid, SIGKILL);
	/* After the gate: the child sets the pty up only once it may run. */
	if (ps[0] >= 0)
		pass_master(ps[0], conn);
	status = wait_child(pid, pidfd, conn, r->timeout_ms, &timed_out);
	/* After the wait, which also killed the command's group. */
	cg_window_end(l->cg, &win, &cs);
	mem = cs.oom_killed ? SS_RF_OOM : 0;
	if (timed_out)
		ss_reply_send_peak(conn, 124, SS_RF_TIMED_OUT | mem, cs.memory_peak,
		                   "cloister: command timed out after %llu ms",
		                   (unsigned long long)r->timeout_ms);
	else if (read(ep[0], &v, sizeof(v)) == (ssize_t)sizeof(v))
		ss_reply_send_peak(conn, v.code, mem, cs.memory_peak, "cloister: %.*s",
		                   (int)sizeof(v.msg) - 1, v.msg);
	else
		ss_reply_send_peak(conn, cl_exit_code_of_status(status),
		                   (WIFSIGNALED(status) ? (unsigned)WTERMSIG(status) << 8 : 0) | mem,
		                   cs.memory_peak, "%s", "");
	_exit(0);
}
