/* Seccomp as the launch path sees it: the parent turns the policy into a raw
 * cBPF program once (built in, or compiled now); the child only loads it. */
#ifndef SC_SECCOMP_H
#define SC_SECCOMP_H

#include <linux/filter.h>
#include <stdbool.h>

#include "src/util/error.h"
#include "src/policy/policy.h"

struct sc_program {
	struct sock_filter *filter;  /* NULL/len 0 = no filter (unconfined) */
	unsigned short len;
	unsigned flags;              /* SECCOMP_FILTER_FLAG_* for seccomp(2) */
	bool builtin;                /* filter is the built-in program: not ours to free */
	/* The root guard (seccomp/guard.h), stacked with filter; NULL = none. */
	struct sock_filter *guard;
	unsigned short guard_len;
};

/* Parent side, before clone: resolve p->seccomp into a program. */
int sc_prepare(const struct cl_policy *p, struct sc_program *out, cl_error *err);
/* Child side, the very last step before exec (after no_new_privs).
 * Async-signal-safe: no allocation. Returns 0 or -errno. */
int sc_load(const struct sc_program *prog);
void sc_program_free(struct sc_program *prog);

#endif
