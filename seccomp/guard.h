/* The root guard (seccomp/guard.c): what keeps a root caller's sandbox from
 * making host root's files setuid, setgid or file-capable. Parent side. */
#ifndef SC_GUARD_H
#define SC_GUARD_H

#include "seccomp/seccomp.h"

/* Fills out->guard for a sandbox cl_policy_root_guarded() names, else
 * leaves it empty. Independent of p->seccomp: --seccomp=unconfined or a
 * profile of the caller's own does not lift it. */
int sc_guard_build(const struct cl_policy *p, struct sc_program *out, cl_error *err);

/* The same guard folded into a resolved profile, for the docker runtime
 * (its daemon takes one profile, and its root is host root in the initial
 * user namespace): rules that let a mode call through also require no
 * S_ISUID/S_ISGID in the mode, openat2 and io_uring_setup are stopped, the
 * setxattr family too when CAP_SETFCAP can be had. CAP_FSETID is refused
 * (an error naming it). Nothing is done unless cl_policy_root_guarded(p). */
struct sc_profile;
int sc_guard_fold(const struct cl_policy *p, struct sc_profile *prof, cl_error *err);

#endif
