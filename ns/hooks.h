/* Launch hooks for bwrap compatibility, each driven by one policy field
 * (p->hooks): status documents, blocking fds, lock file, extra seccomp
 * programs, bwrap's working-directory fallback. All are no-ops when off. */
#ifndef NS_HOOKS_H
#define NS_HOOKS_H

#include <sys/types.h>

#include "ns/child.h"
#include "src/util/error.h"
#include "src/policy/policy.h"

/* Parent, before clone: reads the raw BPF programs (--seccomp FD). */
int ns_hooks_prepare(const struct cl_policy *p, struct ns_child *c, cl_error *err);
/* Parent, just before clone: joins --userns, then --pidns (the sandbox is
 * created inside them; the supervisor stays their member, as bwrap does). */
int ns_hooks_join(const struct cl_policy *p, cl_error *err);
/* Child, after setup: --userns2. */
int ns_hooks_userns2(struct ns_child *c, cl_error *err);
/* Parent, after clone: --info-fd and the first --json-status-fd document. */
int ns_hooks_started(const struct cl_policy *p, pid_t pid, cl_error *err);
/* Parent, after the command ended: {"exit-code": N} on --json-status-fd. */
void ns_hooks_exited(const struct cl_policy *p, int exit_code);
void ns_hooks_release(struct ns_child *c);

/* Child, first: the report fds are the parent's; readers waiting for EOF
 * must not depend on the sandbox's lifetime. */
int ns_hooks_child_close(struct ns_child *c, cl_error *err);
/* Child: waits on --userns-block-fd; returns 1 if it did (maps are then
 * written by whoever unblocked us), 0 when unset. */
int ns_hooks_userns_block(struct ns_child *c, cl_error *err);
/* Child, after the mounts: --lock-file, held by init. */
int ns_hooks_lock_file(struct ns_child *c, cl_error *err);
/* Child, before the mounts: --disable-userns caps this user namespace's
 * user.max_user_namespaces at 1 (through the host /proc, kept open). */
int ns_hooks_userns_limit(struct ns_child *c, cl_error *err);
/* Child, after setup: enter the one nested user namespace the limit
 * allows (ids kept), so no further one can be made; then the
 * --assert-userns-disabled check. */
int ns_hooks_disable_userns(struct ns_child *c, cl_error *err);
/* init: closes every fd from 3 up except the three given (-1 = none). */
void ns_hooks_close_fds_except(int keep1, int keep2, int keep3);
/* Command: chdir with bwrap's fallback (cwd, $HOME, /) and PWD. */
int ns_hooks_chdir(struct ns_child *c, cl_error *err);
/* Command, last: installs the --seccomp/--add-seccomp-fd programs in
 * order with prctl(PR_SET_SECCOMP), as bwrap does (a user allowlist may
 * permit that call and not seccomp(2)). Once one is in, a failure is
 * reported with write(2) on stderr and _exit(1) only: the sync socket's
 * calls may be denied by then. */
void ns_hooks_seccomp_install(struct ns_child *c);
/* Command, before the seccomp filters (they may deny read): --block-fd. */
int ns_hooks_block(struct ns_child *c, cl_error *err);

#endif
