/* What the parent hands to the cloned child: everything is prepared before
 * clone so the child only performs its named steps. */
#ifndef NS_CHILD_H
#define NS_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include "ns/caps.h"
#include "seccomp/seccomp.h"
struct ns_output;
#include "src/policy/policy.h"

struct ns_child {
	const struct cl_policy *p;
	const struct sc_program *prog;
	int sync_fd;          /* child's end of the sync socket */
	uid_t outer_uid;      /* caller's ids, mapped to p->uid/p->gid inside */
	gid_t outer_gid;
	bool wait_go;         /* wait for NS_MSG_GO (cgroup attach, report documents) */
	bool cgns_unshare;    /* after the "go": a cgroup ns rooted at the sandbox cgroup */
	bool serve_sockets;   /* init answers NS_MSG_SOCKET_REQ (--publish) */
	char **envp;          /* final environment of the command */
	const char *exec_path;  /* argv[0] to resolve (may be p->argv[0]) */
	char **exec_argv;     /* argv as the command sees it (argv0 applied) */
	sigset_t orig_mask;   /* the caller's signal mask, restored for the command */
	struct sc_program *hook_progs;  /* bwrap --seccomp/--add-seccomp-fd programs */
	size_t n_hook_progs;
	int host_proc;        /* O_PATH host /proc kept across pivot, or -1 */
	int lock_fd;          /* --lock-file, held by init, or -1 */
	bool trace;           /* CLOISTER_TRACE stamps (ns/trace.h) */
	struct ns_caps_plan caps;  /* the capability drop, planned before clone */
	pid_t init_pid;       /* init's pid for the command's die-with-parent check, or 0 */
	const struct ns_output *output;  /* --output-limit pipes, or NULL */
	unsigned pty_mask;    /* stdio fds (bit n = fd n) that get a pty of the sandbox */
	struct winsize pty_ws;  /* the caller's window size, for that pty */
	int ctty_fd;          /* the pty on the command's stdio, made its ctty; or -1 */
	bool parent_maps;     /* the parent writes the id maps (ns/idmap.c) */
	int *pre_trees;       /* 2 per mount (ns/idmap.h): trees opened by the parent, or -1; or NULL */
	int pre_root;         /* --rootfs tree opened by the parent, or -1 */
};

/* Runs in the child after clone: setup steps, then becomes pid 1 (init)
 * and starts the command. Never returns. */
_Noreturn void ns_child_main(struct ns_child *c);
/* Sets the parent-death signal (SIGKILL), then tells whether the parent
 * died before it took effect: 1 if so, 0 if not, -errno with err set if
 * the prctl failed. The parent is identified by its pid (`parent` > 0:
 * getppid() must still say it) or, across a pid namespace where getppid()
 * says 0, by a socket whose peer it holds (`peer_fd` >= 0: hung up).
 * No allocation: used between fork and exec. */
int ns_pdeathsig(pid_t parent, int peer_fd, cl_error *err);

#endif
