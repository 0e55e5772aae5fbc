/* The native launch in session mode: the sandbox is built as for `cloister
 * run`, but init runs no command and the supervisor hands control to a
 * session server (src/session/) until init exits. */
#ifndef NS_SESSION_H
#define NS_SESSION_H

#include <stdint.h>
#include <sys/types.h>

#include "ns/caps.h"
#include "ns/relay.h"
#include "seccomp/seccomp.h"
#include "src/util/error.h"
#include "src/policy/policy.h"
#include "src/policy/status.h"

struct cg_handle;

/* init's namespaces, handed over as fds (a pidfd setns or /proc/PID/ns
 * open would need ptrace access to init, which is non-dumpable). The user
 * namespace comes first: joining it grants what joining the others needs. */
enum { NS_SESS_USER, NS_SESS_MNT, NS_SESS_PID, NS_SESS_NET, NS_SESS_IPC, NS_SESS_UTS,
       NS_SESS_CGROUP, NS_SESS_N };
extern const struct ns_sess_kind { const char *name; int flag; } ns_sess_kinds[NS_SESS_N];

/* What a session's execs need to join the running sandbox. Owned by the
 * launch; valid from ready() until ns_launch_session returns. */
struct ns_live {
	const struct cl_policy *p;
	pid_t init_pid;
	int init_pidfd;
	int ns_fds[NS_SESS_N];          /* -1 where the sandbox shares the caller's */
	int epfd;                       /* the supervisor's epoll (NS_EV_SESSION events) */
	struct cg_handle *cg;           /* NULL when the sandbox has no cgroup */
	const struct sc_program *prog;  /* the sandbox's seccomp program */
	const struct ns_caps_plan *caps;
	sigset_t orig_mask;             /* the caller's signal mask, for commands */
};

struct ns_session_ops {
	void *ctx;
	/* init is running and holds nothing: start serving. An error kills
	 * the sandbox. */
	int (*ready)(void *ctx, const struct ns_live *l, cl_error *err);
	/* An NS_EV_SESSION registration fired. */
	void (*event)(void *ctx, struct ns_ev *ev, uint32_t events);
};

/* Builds p's sandbox (p->session must be set), calls ops->ready once init
 * is up, dispatches events until init exits, then cleans up as `cloister
 * run` does (cgroup removed). 0, or a negative code with err filled. */
int ns_launch_session(const struct cl_policy *p, const struct ns_session_ops *ops,
                      struct cl_status *st, cl_error *err);

#endif
