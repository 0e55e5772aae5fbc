/* Host processes and the sandbox's own init: signal, trace, read or get a
 * handle on a process outside, or inspect pid 1 (cloister's init). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "probe.h"

static int need_pid(const struct ctx *c)
{
	return c->pid > 0 ? 0 : -1;
}

static int kill_host(const struct ctx *c)
{
	if (need_pid(c)) return broken("no pid= given");
	if (kill(c->pid, 0) == 0)
		return escaped("kill(%d, 0) reached the host process", c->pid);
	return blocked("kill(%d): %s", c->pid, ename(errno));
}

static int ptrace_host(const struct ctx *c)
{
	if (need_pid(c)) return broken("no pid= given");
	if (ptrace(PTRACE_SEIZE, c->pid, 0, 0) == 0) {
		ptrace(PTRACE_DETACH, c->pid, 0, 0);
		return escaped("PTRACE_SEIZE of host pid %d worked", c->pid);
	}
	return blocked("PTRACE_SEIZE(%d): %s", c->pid, ename(errno));
}

/* A bad remote address: EFAULT means the target was found and access
 * granted (only the copy failed). */
static int vm_read_host(const struct ctx *c)
{
	char b[8];
	struct iovec l = {b, sizeof(b)}, r = {(void *)8, sizeof(b)};
	if (need_pid(c)) return broken("no pid= given");
	long n = process_vm_readv(c->pid, &l, 1, &r, 1, 0);
	if (n >= 0 || errno == EFAULT)
		return escaped("process_vm_readv(%d) reached the host process (%s)", c->pid, ename(n < 0 ? errno : 0));
	return blocked("process_vm_readv(%d): %s", c->pid, ename(errno));
}

static int pidfd_host(const struct ctx *c)
{
	if (need_pid(c)) return broken("no pid= given");
	long fd = syscall(SYS_pidfd_open, c->pid, 0);
	if (fd >= 0)
		return escaped("pidfd_open(%d) gave a handle on the host process", c->pid);
	return blocked("pidfd_open(%d): %s", c->pid, ename(errno));
}

static int proc_file(const struct ctx *c, const char *what, const char *fmt)
{
	char p[64];
	if (need_pid(c)) return broken("no pid= given");
	snprintf(p, sizeof(p), fmt, (int)c->pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		char b[16];
		long n = read(fd, b, sizeof(b));
		close(fd);
		if (n >= 0)
			return escaped("%s of host pid %d readable", what, c->pid);
	}
	return blocked("%s: %s", p, ename(errno));
}
static int proc_root_host(const struct ctx *c)
{
	char p[64];
	if (need_pid(c)) return broken("no pid= given");
	snprintf(p, sizeof(p), "/proc/%d/root/", (int)c->pid);
	DIR *d = opendir(p);
	if (!d) return blocked("%s: %s", p, ename(errno));
	int n = 0;
	while (readdir(d)) n++;
	closedir(d);
	return escaped("/proc/%d/root/ listed (%d entries of the host's /)", c->pid, n);
}
static int proc_environ_host(const struct ctx *c) { return proc_file(c, "/proc/PID/environ", "/proc/%d/environ"); }

/* pid 1 is the sandbox's init (cloister's, or bwrap's own). */
static int init_environ(const struct ctx *c)
{
	int fd = open("/proc/1/environ", O_RDONLY | O_CLOEXEC);
	char b[16];
	if (fd >= 0 && read(fd, b, sizeof(b)) >= 0)
		return escaped("init's /proc/1/environ readable");
	return blocked("/proc/1/environ: %s", ename(errno));
}

/* An fd of init (a sync socket, the caller's terminal) would be ours to
 * reopen through /proc/1/fd/N. */
static int init_fds(const struct ctx *c)
{
	DIR *d = opendir("/proc/1/fd");
	if (!d)
		return blocked("/proc/1/fd: %s", ename(errno));
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') n++;
	closedir(d);
	return n ? escaped("init's fd table listed (%d fds)", n) : blocked("init holds no fds");
}

/* A handle on the runtime's binary is how CVE-2019-5736 overwrote runc. */
static int init_exe(const struct ctx *c)
{
	int fd = open("/proc/1/exe", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return escaped("/proc/1/exe (the runtime's binary) opened");
	}
	return blocked("/proc/1/exe: %s", ename(errno));
}

static int ptrace_init(const struct ctx *c)
{
	if (ptrace(PTRACE_SEIZE, 1, 0, 0) == 0) {
		ptrace(PTRACE_DETACH, 1, 0, 0);
		return escaped("PTRACE_SEIZE of pid 1 worked");
	}
	return blocked("PTRACE_SEIZE(1): %s", ename(errno));
}

/* The host's processes at all: more than the sandbox can have (init, the
 * shell of Smithers' argv, the probe) means the pid namespace is shared. */
static int proc_count(const struct ctx *c)
{
	DIR *d = opendir("/proc");
	if (!d) return blocked("/proc: %s", ename(errno));
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9') n++;
	closedir(d);
	/* init, the shell Smithers' argv starts, the probe: at most 3. */
	return n > 3 ? escaped("%d processes visible in /proc", n) : blocked("%d processes visible", n);
}

/* Take a copy of an fd init holds (a socket to the supervisor outside, its
 * signalfd) with pidfd_getfd: needs ptrace access to init. */
static int init_steal_fd(const struct ctx *c)
{
	long pfd = syscall(SYS_pidfd_open, 1, 0);
	if (pfd < 0) return blocked("pidfd_open(1): %s", ename(errno));
	int last = 0;
	for (int fd = 3; fd < 64; fd++) {
		long got = syscall(SYS_pidfd_getfd, pfd, fd, 0);
		if (got >= 0) {
			char p[64], t[256];
			snprintf(p, sizeof(p), "/proc/self/fd/%ld", got);
			long n = readlink(p, t, sizeof(t) - 1);
			t[n > 0 ? n : 0] = 0;
			return escaped("pidfd_getfd took init's fd %d (%s)", fd, t);
		}
		if (errno != EBADF) last = errno;
	}
	return blocked("pidfd_getfd of init's fds: %s", last ? ename(last) : "init holds no fd above 2");
}

static const struct probe probes[] = {
	{"proc_kill_host", "host processes", C_HOST, "kill(2) a host process of the same user", kill_host},
	{"proc_ptrace_host", "host processes", C_ROOT, "PTRACE_SEIZE a host process of the same user (host control as root only: for others Yama's ptrace_scope decides)", ptrace_host},
	{"proc_vm_readv_host", "host processes", C_ROOT, "process_vm_readv from a host process (host control as root only: Yama, as above)", vm_read_host},
	{"proc_pidfd_open_host", "host processes", C_HOST, "pidfd_open a host process", pidfd_host},
	{"proc_root_of_host_pid", "host processes", C_HOST, "/proc/PID/root of a host process (its whole filesystem)", proc_root_host},
	{"proc_environ_of_host_pid", "host processes", C_HOST, "/proc/PID/environ of a host process", proc_environ_host},
	{"proc_list_host", "host processes", C_HOST, "see the host's processes in /proc", proc_count},
	{"init_environ", "sandbox init", C_NONE, "read init's environment (no host control: the host's pid 1 is not a sandbox's init; Debian bwrap's column shows the attack)", init_environ},
	{"init_fds", "sandbox init", C_NONE, "list init's fds to reopen them (no host control, as above)", init_fds},
	{"init_exe_handle", "sandbox init", C_NONE, "open /proc/1/exe, the runtime's binary (CVE-2019-5736 class; no host control, as above)", init_exe},
	{"init_ptrace", "sandbox init", C_NONE, "PTRACE_SEIZE pid 1 (no host control, as above)", ptrace_init},
	{"init_steal_fd", "sandbox init", C_NONE, "pidfd_getfd an fd of init (no host control, as above)", init_steal_fd},
};
FAMILY(fam_proc, probes);
