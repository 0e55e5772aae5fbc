/* bwrap-compatible launch hooks: info/status documents, blocking fds, lock
 * file, raw seccomp programs, user/pid namespace joins, bwrap's cwd rules. */
#define _GNU_SOURCE
#include "ns/hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/util/fdio.h"

static bool named_before(const struct cl_hooks *h, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (h->seccomp_fds[j] == h->seccomp_fds[i])
			return true;
	return false;
}

int ns_hooks_prepare(const struct cl_policy *p, struct ns_child *c, cl_error *err)
{
	const struct cl_hooks *h = &p->hooks;

	if (!h->n_seccomp_fds)
		return 0;
	c->hook_progs = calloc(h->n_seccomp_fds, sizeof(*c->hook_progs));
	if (!c->hook_progs)
		return cl_fail(err, ENOMEM, "reading seccomp programs");
	for (size_t i = 0; i < h->n_seccomp_fds; i++) {
		char *data = NULL;
		size_t len = 0;
		/* Each fd is consumed, as bwrap does: naming one twice fails as
		 * reading a closed fd would. cl_policy_free closes them (once). */
		int rc = named_before(h, i) ? -EBADF
		                            : cl_read_all(h->seccomp_fds[i], 0xffff * 8, &data, &len);
		if (rc == -EFBIG)
			return cl_fail(err, 0, "Invalid seccomp data: program too long");
		if (rc < 0)
			return cl_fail(err, -rc, "Can't read seccomp data");
		c->hook_progs[c->n_hook_progs].filter = (struct sock_filter *)data;
		c->hook_progs[c->n_hook_progs++].len = (unsigned short)(len / 8);
		if (len % 8 != 0)
			return cl_fail(err, 0, "Invalid seccomp data, must be multiple of 8");
		/* An empty program is left to the kernel to refuse, with bwrap's
		 * message (ns_hooks_seccomp_install). */
	}
	return 0;
}

void ns_hooks_release(struct ns_child *c)
{
	for (size_t i = 0; i < c->n_hook_progs; i++)
		sc_program_free(&c->hook_progs[i]);
	free(c->hook_progs);
	c->hook_progs = NULL;
	c->n_hook_progs = 0;
}

/* bwrap's names, in its order (alphabetical after child-pid). */
static const struct {
	int flag;
	const char *file, *key;
} ns_keys[] = {
	{CLONE_NEWCGROUP, "cgroup", "cgroup-namespace"}, {CLONE_NEWIPC, "ipc", "ipc-namespace"},
	{CLONE_NEWNS, "mnt", "mnt-namespace"}, {CLONE_NEWNET, "net", "net-namespace"},
	{CLONE_NEWPID, "pid", "pid-namespace"}, {CLONE_NEWUTS, "uts", "uts-namespace"},
};

/* {"child-pid": N, "<ns>-namespace": inode, ...}, pretty (info) or on one
 * line (status), as bwrap prints them. */
static int format_info(const struct cl_policy *p, pid_t pid, bool pretty, char *buf, size_t len)
{
	const char *sep = pretty ? ",\n    " : ", ";
	int n = snprintf(buf, len, pretty ? "{\n    \"child-pid\": %d" : "{ \"child-pid\": %d",
	                 (int)pid);

	for (size_t i = 0; i < sizeof(ns_keys) / sizeof(*ns_keys); i++) {
		char path[64];
		struct stat st;
		if (!(p->ns_flags & ns_keys[i].flag))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns_keys[i].file);
		if (stat(path, &st) < 0)
			continue;
		n += snprintf(buf + n, len - (size_t)n, "%s\"%s\": %llu", sep, ns_keys[i].key,
		              (unsigned long long)st.st_ino);
	}
	n += snprintf(buf + n, len - (size_t)n, pretty ? "\n}\n" : " }\n");
	return n;
}

int ns_hooks_started(const struct cl_policy *p, pid_t pid, cl_error *err)
{
	char buf[1024];
	int n, rc;

	if (p->hooks.info_fd >= 0) {
		n = format_info(p, pid, true, buf, sizeof(buf));
		rc = cl_write_all(p->hooks.info_fd, buf, (size_t)n);
		if (rc < 0)
			return cl_fail(err, -rc, "Write to info_fd");
		/* Closed now: a reader waiting for EOF learns the pid promptly. */
		close(p->hooks.info_fd);
	}
	if (p->hooks.status_fd >= 0) {
		n = format_info(p, pid, false, buf, sizeof(buf));
		rc = cl_write_all(p->hooks.status_fd, buf, (size_t)n);
		if (rc < 0)
			return cl_fail(err, -rc, "Write to json_status_fd");
	}
	return 0;
}

void ns_hooks_exited(const struct cl_policy *p, int exit_code)
{
	char buf[64];
	int n;

	if (p->hooks.status_fd < 0)
		return;
	n = snprintf(buf, sizeof(buf), "{ \"exit-code\": %d }\n", exit_code);
	cl_write_all(p->hooks.status_fd, buf, (size_t)n);
}

int ns_hooks_child_close(struct ns_child *c, cl_error *err)
{
	if (c->p->hooks.info_fd >= 0)
		close(c->p->hooks.info_fd);
	if (c->p->hooks.status_fd >= 0)
		close(c->p->hooks.status_fd);
	return 0;
}

/* Blocks until fd has data or is closed by every writer. */
static int block_on(int fd, const char *what, cl_error *err)
{
	char b;
	ssize_t n;

	do
		n = read(fd, &b, 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return cl_fail_errno(err, "reading %s", what);
	close(fd);
	return 0;
}

int ns_hooks_userns_block(struct ns_child *c, cl_error *err)
{
	int rc;

	if (c->p->hooks.userns_block_fd < 0)
		return 0;
	rc = block_on(c->p->hooks.userns_block_fd, "--userns-block-fd", err);
	return rc < 0 ? rc : 1;
}

int ns_hooks_lock_file(struct ns_child *c, cl_error *err)
{
	struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
	const char *path = c->p->hooks.lock_file;
	int fd;

	if (!path)
		return 0;
	/* Kept open (CLOEXEC) by init for the whole run: the lock lives as
	 * long as the sandbox does. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cl_fail_errno(err, "Unable to open lock file %s", path);
	while (fcntl(fd, F_SETLKW, &fl) < 0)
		if (errno != EINTR)
			return cl_fail_errno(err, "Unable to lock file %s", path);
	c->lock_fd = fd;
	return 0;
}

void ns_hooks_close_fds_except(int keep1, int keep2, int keep3)
{
	int keep[3] = {keep1, keep2, keep3};

	cl_close_fds_except(keep, 3);
}

/* Points the PWD entry of the command's environment at dir. The command
 * runs in a vfork child: no allocation, a static buffer instead. */
static void set_pwd(struct ns_child *c, const char *dir)
{
	static char kv[4096 + 5];

	for (char **e = c->envp; e && *e; e++) {
		if (strncmp(*e, "PWD=", 4) != 0)
			continue;
		snprintf(kv, sizeof(kv), "PWD=%s", dir);
		*e = kv;
		return;
	}
}

int ns_hooks_chdir(struct ns_child *c, cl_error *err)
{
	const char *home = getenv("HOME");

	if (chdir(c->p->workdir) == 0)
		return 0;
	if (home && chdir(home) == 0) {
		set_pwd(c, home);
		return 0;
	}
	if (chdir("/") < 0)
		return cl_fail_errno(err, "Can't chdir to /");
	set_pwd(c, "/");
	return 0;
}

/* The message and exit of bwrap's die(): nothing but write and exit. */
_Noreturn static void die_plain(const char *msg, int e)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "bwrap: %s%s%s\n", msg, e ? ": " : "",
	                 e ? strerror(e) : "");

	if (n > 0)
		(void)!write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	_exit(1);
}

void ns_hooks_seccomp_install(struct ns_child *c)
{
	for (size_t i = 0; i < c->n_hook_progs; i++) {
		struct sock_fprog fp = {.len = c->hook_progs[i].len,
		                        .filter = c->hook_progs[i].filter};
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) == 0)
			continue;
		if (errno == EINVAL)
			die_plain("Unable to set up system call filtering as requested: "
			          "prctl(PR_SET_SECCOMP) reported EINVAL. (Hint: this requires a "
			          "kernel configured with CONFIG_SECCOMP and CONFIG_SECCOMP_FILTER.)", 0);
		die_plain("prctl(PR_SET_SECCOMP)", errno);
	}
}

int ns_hooks_block(struct ns_child *c, cl_error *err)
{
	int fd = c->p->hooks.block_fd;

	return fd >= 0 ? block_on(fd, "--block-fd", err) : 0;
}

int ns_hooks_userns_limit(struct ns_child *c, cl_error *err)
{
	int rc;

	if (!c->p->hooks.disable_userns && !c->p->hooks.assert_userns_disabled)
		return 0;
	c->host_proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->host_proc < 0)
		return cl_fail_errno(err, "opening /proc");
	if (!c->p->hooks.disable_userns)
		return 0;
	/* The sysctl table is this user namespace's: the limit binds the
	 * sandbox, whatever it does to its own nested namespaces. */
	rc = cl_write_file_at(c->host_proc, "sys/user/max_user_namespaces", "1");
	return rc < 0 ? cl_fail(err, -rc, "sysctl user.max_user_namespaces = 1 failed") : 0;
}

static int write_at(int dirfd, const char *name, const char *data, cl_error *err)
{
	int rc = cl_write_file_at(dirfd, name, data);

	return rc < 0 ? cl_fail(err, -rc, "writing %s", name) : 0;
}

/* A throwaway child tries to create a user namespace. */
static int userns_creatable(void)
{
	int st;
	pid_t pid = fork();

	if (pid == 0)
		_exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int ns_hooks_disable_userns(struct ns_child *c, cl_error *err)
{
	char line[64];
	int rc = 0;

	if (c->host_proc < 0)
		return 0;
	if (c->p->hooks.disable_userns) {
		/* Maps of the nested namespace: the same ids, written by the
		 * namespace's own creator (one line of its own id). */
		if (unshare(CLONE_NEWUSER) < 0)
			rc = cl_fail_errno(err, "Creating new namespace failed");
		snprintf(line, sizeof(line), "%u %u 1\n", (unsigned)c->p->uid, (unsigned)c->p->uid);
		if (rc == 0)
			rc = write_at(c->host_proc, "thread-self/uid_map", line, err);
		if (rc == 0)
			rc = write_at(c->host_proc, "thread-self/setgroups", "deny", err);
		snprintf(line, sizeof(line), "%u %u 1\n", (unsigned)c->p->gid, (unsigned)c->p->gid);
		if (rc == 0)
			rc = write_at(c->host_proc, "thread-self/gid_map", line, err);
	}
	if (rc == 0 && c->p->hooks.assert_userns_disabled && userns_creatable() != 0)
		rc = cl_fail(err, 0, "creation of new user namespaces was not disabled as requested");
	close(c->host_proc);
	c->host_proc = -1;
	return rc;
}

int ns_hooks_join(const struct cl_policy *p, cl_error *err)
{
	if (p->hooks.userns_fd >= 0 && setns(p->hooks.userns_fd, CLONE_NEWUSER) < 0)
		return cl_fail_errno(err, "Joining specified user namespace failed");
	if (p->hooks.pidns_fd >= 0 && setns(p->hooks.pidns_fd, CLONE_NEWPID) < 0)
		return cl_fail_errno(err, "Setting pidns failed");
	return 0;
}

int ns_hooks_userns2(struct ns_child *c, cl_error *err)
{
	if (c->p->hooks.userns2_fd >= 0 && setns(c->p->hooks.userns2_fd, CLONE_NEWUSER) < 0)
		return cl_fail_errno(err, "Setting userns2 failed");
	return 0;
}
