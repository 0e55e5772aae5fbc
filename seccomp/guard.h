/* The root guard (seccomp/guard.c): what keeps a root caller's sandbox from
 * making host root's files setuid, setgid or file-capable. Parent side. */
#ifndef SC_GUARD_H
#define SC_GUARD_H

#include "seccomp/seccomp.h"

/* Fills out->guard for a sandbox cl_policy_root_guarded() names, else
 * leaves it empty. Independent of p->seccomp: --seccomp=unconfined or a
 * profile of the caller's own does not lift it. */
int sc_guard_build(const struct cl_policy *p, struct sc_program *out, cl_error *err);

#endif
