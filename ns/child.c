/* The sandbox side of the launch: a flat list of named setup steps run by the
 * cloned child (root of the new user namespace, pid 1 of the new pid
 * namespace), then the fork of the command, which drops everything and execs. */
#define _GNU_SOURCE
#include "ns/child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ns/caps.h"
#include "ns/hooks.h"
#include "ns/idmap.h"
#include "ns/init.h"
#include "ns/mounts.h"
#include "ns/net.h"
#include "ns/output.h"
#include "ns/pty.h"
#include "ns/sync.h"
#include "ns/trace.h"
#include "src/util/fdio.h"
#include "src/policy/parse.h"

/* ---- child (pid 1 in the sandbox, full caps in its own userns only) ---- */

int ns_pdeathsig(pid_t parent, int peer_fd, cl_error *err)
{
	struct pollfd pfd = {.fd = peer_fd, .events = POLLIN};

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return cl_fail_errno(err, "setting the parent-death signal");
	/* After the prctl: a parent that dies later is covered by the signal,
	 * one that died before shows here. */
	if (parent > 0 && getppid() != parent)
		return 1;
	if (peer_fd >= 0 && poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP))
		return 1;
	return 0;
}

static int step_die_with_parent(struct ns_child *c, cl_error *err)
{
	int rc;

	if (!c->p->die_with_parent)
		return 0;
	/* The parent may have died before prctl: its end of the sync socket
	 * is then closed. (getppid() is 0 across a pid namespace.) */
	rc = ns_pdeathsig(0, c->sync_fd, err);
	if (rc > 0)
		_exit(125);
	return rc;
}

static int write_file(const char *path, const char *data, cl_error *err)
{
	int rc = cl_write_file_at(AT_FDCWD, path, data);

	return rc < 0 ? cl_fail(err, -rc, "writing %s", path) : 0;
}

/* The child maps itself: a single id mapping of the creator's own euid is
 * allowed from inside the new user namespace, so no round trip to the
 * parent is needed. setgroups must be denied before gid_map (kernel rule). */
static int step_idmaps(struct ns_child *c, cl_error *err)
{
	char line[64];
	int rc;

	if (!(c->p->ns_flags & CLONE_NEWUSER))
		return 0;
	/* A root caller's sandbox maps to another host id: only the parent
	 * may write that, and we wait for it. */
	if (c->parent_maps) {
		if (ns_idmap_child_wait(c->p, c->sync_fd, err) < 0)
			return cl_error_code(err);
		/* A change of credentials clears the parent-death signal. */
		return step_die_with_parent(c, err);
	}
	/* --userns-block-fd: someone else writes the maps, then unblocks us. */
	rc = ns_hooks_userns_block(c, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (write_file("/proc/self/setgroups", "deny", err) < 0)
		return cl_error_code(err);
	cl_format_idmap(line, sizeof(line), c->p->uid, c->outer_uid);
	if (write_file("/proc/self/uid_map", line, err) < 0)
		return c->p->hooks.bwrap_msgs ? cl_fail(err, err->errnum, "setting up uid map") :
		                               cl_error_code(err);
	cl_format_idmap(line, sizeof(line), c->p->gid, c->outer_gid);
	if (write_file("/proc/self/gid_map", line, err) < 0)
		return c->p->hooks.bwrap_msgs ? cl_fail(err, err->errnum, "setting up gid map") :
		                               cl_error_code(err);
	return 0;
}

/* The parent may still have work on us after clone (a cgroup v1 attach,
 * the --info-fd/--json-status-fd documents): the command is not started
 * before its "go". */
static int step_wait_go(struct ns_child *c, cl_error *err)
{
	struct ns_msg m;
	int rc;

	if (c->wait_go) {
		rc = ns_msg_recv(c->sync_fd, &m);
		if (rc <= 0 || m.type != NS_MSG_GO)
			return cl_fail(err, rc < 0 ? -rc : EPIPE, "waiting for the parent (cgroup placement, report documents)");
	}
	/* Attached after clone, our cgroup ns is still rooted where the parent
	 * was; now that we sit in the sandbox cgroup, root a nested one here so
	 * the sandbox sees its own cgroup as "/". */
	if (c->cgns_unshare && unshare(CLONE_NEWCGROUP) < 0)
		return cl_fail_errno(err, "creating the cgroup namespace");
	return 0;
}

static int step_mounts(struct ns_child *c, cl_error *err)
{
	if (!(c->p->ns_flags & CLONE_NEWNS))
		return 0;
	return ns_mounts_setup(c->p, c->pre_trees, c->pre_root, err);
}

/* --forward-out: listen on 127.0.0.1:PORT inside before the command runs;
 * the supervisor accepts on it and dials the host side. */
static int forward_listeners(struct ns_child *c, cl_error *err)
{
	for (size_t i = 0; i < c->p->n_forwards; i++) {
		int port = c->p->forwards[i].sandbox_port;
		int fd = ns_net_listen_loopback((uint16_t)port, err);
		if (fd < 0)
			return fd;
		if (ns_msg_send_fd(c->sync_fd, NS_MSG_LISTENER, 0, 0, (int)i, fd) < 0) {
			close(fd);
			return cl_fail(err, EPIPE, "handing over the listener for port %d", port);
		}
		close(fd);
	}
	return 0;
}

static int step_network(struct ns_child *c, cl_error *err)
{
	if (!(c->p->ns_flags & CLONE_NEWNET))
		return 0;
	if (ns_net_loopback_up(err) < 0)
		return cl_error_code(err);
	return forward_listeners(c, err);
}

/* The caller's terminal is not handed in: its stdio fds that are terminals
 * become a pty of the sandbox's own devpts, relayed by the supervisor. */
static int step_terminal(struct ns_child *c, cl_error *err)
{
	int fd;

	if (!c->pty_mask)
		return 0;
	fd = ns_pty_child_setup(c->sync_fd, c->pty_mask, &c->pty_ws, err);
	if (fd < 0)
		return fd;
	c->ctty_fd = fd;
	return 0;
}

static int step_hostname(struct ns_child *c, cl_error *err)
{
	const char *h = c->p->hostname;

	if (!h || !(c->p->ns_flags & CLONE_NEWUTS))
		return 0;
	if (sethostname(h, strlen(h)) < 0)
		return cl_fail_errno(err, "setting hostname '%s'", h);
	return 0;
}

/* Tasks bounded without a cgroup: RLIMIT_NPROC counts per user namespace,
 * so in ours it counts the sandbox only (the caller's other processes run
 * in the parent namespace). Lowering needs no privilege; raising it back
 * needs CAP_SYS_RESOURCE over the parent namespace, which we lack. Has no
 * effect on a sandbox uid that is host root (the kernel exempts it). */
static int step_rlimits(struct ns_child *c, cl_error *err)
{
	struct rlimit r = {c->p->rlimit_nproc, c->p->rlimit_nproc};

	if (!c->p->rlimit_nproc)
		return 0;
	if (setrlimit(RLIMIT_NPROC, &r) < 0)
		return cl_fail_errno(err, "setting RLIMIT_NPROC to %llu",
		                     (unsigned long long)c->p->rlimit_nproc);
	return 0;
}

static int step_output(struct ns_child *c, cl_error *err)
{
	return ns_output_child(c->output, err);
}

static const struct {
	const char *name;
	int (*run)(struct ns_child *c, cl_error *err);
} child_steps[] = {
	/* Order: die-with-parent first so an orphaned child never proceeds;
	 * id maps before anything that checks credentials; mounts need the id
	 * maps (file access checks use the mapped ids); the terminal after the
	 * mounts (it comes from the sandbox's own devpts); hostname after them.
	 * The parent's "go" comes after the costly steps: on v1 the parent's
	 * attach waits for an RCU grace period in the kernel, and overlapping
	 * it with our setup hides that wait. Limits still hold before the
	 * command exists; only the setup's small kernel allocations are charged
	 * to the caller. rlimits after the id maps (the count is per user
	 * namespace) and before init forks the command, which inherits them. */
	{"die-with-parent", step_die_with_parent},
	{"report fds", ns_hooks_child_close},
	{"uid/gid maps", step_idmaps},
	{"user namespace limit", ns_hooks_userns_limit},
	{"mounts", step_mounts},
	{"terminal", step_terminal},
	{"network", step_network},
	{"hostname", step_hostname},
	{"lock file", ns_hooks_lock_file},
	{"disable user namespaces", ns_hooks_disable_userns},
	{"userns2", ns_hooks_userns2},
	{"parent go", step_wait_go},
	{"rlimits", step_rlimits},
	/* Last: setup's own trace lines still reach the caller directly. */
	{"output relay", step_output},
};

_Noreturn static void fail_setup(struct ns_child *c, const char *step, const cl_error *err)
{
	ns_msg_send(c->sync_fd, NS_MSG_SETUP_ERROR, err->errnum, 0, step, err->msg);
	_exit(125);
}

_Noreturn void ns_child_main(struct ns_child *c)
{
	cl_error err = {0};

	ns_trace(c->trace, "child", "start");
	for (size_t i = 0; i < sizeof(child_steps) / sizeof(*child_steps); i++) {
		if (child_steps[i].run(c, &err) < 0)
			fail_setup(c, child_steps[i].name, &err);
		ns_trace(c->trace, "child", child_steps[i].name);
	}
	/* This process becomes init. Without a pid namespace of its own the
	 * command checks its parent against it (in one, init's death ends the
	 * command anyway: no check, no syscalls). */
	if (c->p->die_with_parent && !(c->p->ns_flags & CLONE_NEWPID) && !c->p->hooks.as_pid_1)
		c->init_pid = getpid();
	ns_init_run(c);
}
