/* The root guard: a second seccomp filter for a root caller's sandbox that
 * is not host root, stacked under whatever profile the sandbox has. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp/guard.h"
#include "seccomp/profile.h"

/* Numbers libseccomp 2.5 may not know by name: the same on every arch of
 * the unified syscall table. */
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif

/* The calls that take a mode, and the argument it is in. */
static const struct {
	int nr;
	unsigned arg;
} mode_calls[] = {
#ifdef __NR_chmod
	{__NR_chmod, 1}, {__NR_creat, 1}, {__NR_open, 2}, {__NR_mknod, 1},
#endif
	{__NR_fchmod, 1}, {__NR_fchmodat, 2}, {__NR_fchmodat2, 2},
	{__NR_openat, 3}, {__NR_mknodat, 2},
};

static const int xattr_calls[] = {
	__NR_setxattr, __NR_lsetxattr, __NR_fsetxattr, __NR_setxattrat,
};

static void ctx_release(scmp_filter_ctx *c)
{
	if (*c)
		seccomp_release(*c);
}

/* Mode rules: each of S_ISUID and S_ISGID set in the mode argument is
 * EPERM (two rules, ORed: libseccomp has no "masked not equal"). */
static int add_mode_rules(scmp_filter_ctx ctx)
{
	static const unsigned bits[] = {S_ISUID, S_ISGID};
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < sizeof(mode_calls) / sizeof(mode_calls[0]); i++)
		for (size_t b = 0; rc == 0 && b < 2; b++) {
			struct scmp_arg_cmp c = {mode_calls[i].arg, SCMP_CMP_MASKED_EQ, bits[b], bits[b]};
			rc = seccomp_rule_add_exact_array(ctx, SCMP_ACT_ERRNO(EPERM), mode_calls[i].nr, 1, &c);
		}
	return rc;
}

/* Whether any process of the sandbox can hold CAP_SETFCAP over the files
 * of its binds: kept by --cap-add, or had in full in a nested user
 * namespace (which maps the same host id, so also owns them). */
static bool can_set_fcaps(const struct cl_policy *p)
{
	return p->allow_nested || (p->caps_keep & (1ULL << CAP_SETFCAP));
}

int sc_guard_build(const struct cl_policy *p, struct sc_program *out, cl_error *err)
{
	__attribute__((cleanup(ctx_release))) scmp_filter_ctx ctx = NULL;
	struct sock_filter *filter = NULL;
	size_t n = 0;
	int rc;

	out->guard = NULL;
	out->guard_len = 0;
	if (!cl_policy_root_guarded(p))
		return 0;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return cl_fail(err, EINVAL, "setting up libseccomp for the root guard");
	/* A foreign ABI (int 0x80, x32) would carry the same calls under
	 * other numbers: the guard kills it, as the default profile does. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc == 0)
		rc = add_mode_rules(ctx);
	/* openat2 takes its mode in a struct seccomp cannot read; programs
	 * fall back to openat on ENOSYS. io_uring's operations (openat, fchmod
	 * to come) bypass seccomp altogether. */
	if (rc == 0)
		rc = seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(ENOSYS), __NR_openat2, 0);
	if (rc == 0)
		rc = seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), __NR_io_uring_setup, 0);
	/* security.capability needs CAP_SETFCAP; without it anywhere in the
	 * sandbox the kernel refuses, and user xattrs keep working. With it,
	 * the name cannot be matched here: every setxattr is refused. */
	for (size_t i = 0; rc == 0 && can_set_fcaps(p) && i < sizeof(xattr_calls) / sizeof(xattr_calls[0]); i++)
		rc = seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(EPERM), xattr_calls[i], 0);
	if (rc < 0)
		return cl_fail(err, -rc, "building the root guard's seccomp rules");
	rc = sc_export(ctx, &filter, &n, err);
	if (rc < 0)
		return rc;
	out->guard = filter;
	out->guard_len = (unsigned short)n;
	return 0;
}
