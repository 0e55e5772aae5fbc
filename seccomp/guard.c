/* The root guard: a second seccomp filter for a root caller's sandbox that
 * is not host root, stacked under whatever profile the sandbox has. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
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
	const char *name;
} mode_calls[] = {
#ifdef __NR_chmod
	{__NR_chmod, 1, "chmod"}, {__NR_creat, 1, "creat"}, {__NR_open, 2, "open"},
	{__NR_mknod, 1, "mknod"},
#endif
	{__NR_fchmod, 1, "fchmod"}, {__NR_fchmodat, 2, "fchmodat"}, {__NR_fchmodat2, 2, "fchmodat2"},
	{__NR_openat, 3, "openat"}, {__NR_mknodat, 2, "mknodat"},
};

/* The calls stopped whatever their arguments, with the errno they get.
 * openat2 takes its mode in a struct seccomp cannot read; programs fall
 * back to openat on ENOSYS. io_uring's operations (openat, fchmod to
 * come) bypass seccomp altogether. security.capability needs CAP_SETFCAP:
 * without it anywhere in the sandbox the kernel refuses and user xattrs
 * keep working; with it, the name cannot be matched here, so the setxattr
 * family is stopped whole (fcaps). One table for the guard's own filter
 * and for the profile it is folded into (docker). */
static const struct {
	int nr;
	const char *name;
	int errnum;
	bool fcaps;   /* only when CAP_SETFCAP can be had (can_set_fcaps) */
} deny_calls[] = {
	{__NR_openat2, "openat2", ENOSYS, false},
	{__NR_io_uring_setup, "io_uring_setup", EPERM, false},
	{__NR_setxattr, "setxattr", EPERM, true},
	{__NR_lsetxattr, "lsetxattr", EPERM, true},
	{__NR_fsetxattr, "fsetxattr", EPERM, true},
	{__NR_setxattrat, "setxattrat", EPERM, true},
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
	for (size_t i = 0; rc == 0 && i < sizeof(deny_calls) / sizeof(deny_calls[0]); i++)
		if (!deny_calls[i].fcaps || can_set_fcaps(p))
			rc = seccomp_rule_add_exact(ctx, SCMP_ACT_ERRNO(deny_calls[i].errnum), deny_calls[i].nr, 0);
	if (rc < 0)
		return cl_fail(err, -rc, "building the root guard's seccomp rules");
	rc = sc_export(ctx, &filter, &n, err);
	if (rc < 0)
		return rc;
	out->guard = filter;
	out->guard_len = (unsigned short)n;
	return 0;
}

/* Actions that stop the call; everything else (allow, log, trace, notify)
 * lets it reach the kernel. */
static bool stops(uint32_t a)
{
	uint32_t k = a & 0xffff0000U;

	return a == SCMP_ACT_KILL_PROCESS || a == SCMP_ACT_KILL_THREAD || k == SCMP_ACT_ERRNO(0) ||
	       k == SCMP_ACT_TRAP;
}

static bool has_cond_on(const struct sc_rule *r, unsigned arg)
{
	for (unsigned c = 0; c < r->n_conds; c++)
		if (r->conds[c].arg == arg)
			return true;
	return false;
}

/* Whether name has a rule that stops it whatever its arguments: adding a
 * conditional rule of another action beside it would be refused by
 * libseccomp, and the call is stopped anyway. */
static bool stopped_always(const struct sc_profile *prof, const char *name)
{
	for (size_t i = 0; i < prof->n_rules; i++)
		if (strcmp(prof->rules[i].name, name) == 0 && prof->rules[i].n_conds == 0 &&
		    stops(prof->rules[i].action))
			return true;
	return false;
}

/* Every rule that lets name through gets "no S_ISUID/S_ISGID in the mode";
 * where the default lets it through, the two bits get EPERM rules. */
static int fold_mode_call(struct sc_profile *prof, const char *name, unsigned arg, cl_error *err)
{
	static const unsigned bits[] = {S_ISUID, S_ISGID};

	for (size_t i = 0; i < prof->n_rules; i++) {
		struct sc_rule *r = &prof->rules[i];
		if (strcmp(r->name, name) != 0 || stops(r->action))
			continue;
		/* libseccomp takes one comparison per argument and rule. */
		if (has_cond_on(r, arg) || r->n_conds == SC_MAX_ARGS)
			return cl_fail(err, 0, "seccomp profile: its rule for %s compares argument %u, "
			               "the mode the root guard must check; use --host-root", name, arg);
		r->conds[r->n_conds++] = (struct sc_cond){arg, SCMP_CMP_MASKED_EQ, S_ISUID | S_ISGID, 0};
	}
	if (stops(prof->default_action) || stopped_always(prof, name))
		return 0;
	for (size_t b = 0; b < 2; b++) {
		struct sc_cond c = {arg, SCMP_CMP_MASKED_EQ, bits[b], bits[b]};
		int rc = sc_profile_add(prof, name, SCMP_ACT_ERRNO(EPERM), &c, 1, NULL);
		if (rc < 0)
			return cl_fail(err, -rc, "adding the root guard to the seccomp profile");
	}
	return 0;
}

/* name is stopped with action whatever its arguments: the rules that let
 * it through go, and one rule stops it where the default would not. */
static int fold_deny(struct sc_profile *prof, const char *name, uint32_t action, cl_error *err)
{
	size_t k = 0;
	int rc;

	for (size_t i = 0; i < prof->n_rules; i++) {
		if (strcmp(prof->rules[i].name, name) == 0 && !stops(prof->rules[i].action)) {
			free(prof->rules[i].name);
			continue;
		}
		prof->rules[k++] = prof->rules[i];
	}
	prof->n_rules = k;
	if (stops(prof->default_action) || stopped_always(prof, name))
		return 0;
	rc = sc_profile_add(prof, name, action, NULL, 0, NULL);
	return rc < 0 ? cl_fail(err, -rc, "adding the root guard to the seccomp profile") : 0;
}

int sc_guard_fold(const struct cl_policy *p, struct sc_profile *prof, cl_error *err)
{
	int rc = 0;

	if (!cl_policy_root_guarded(p))
		return 0;
	/* The kernel keeps the setid bits of a file written by a holder of
	 * CAP_FSETID in the initial user namespace, which docker's root is:
	 * no rule can see that the written inode is setuid. */
	if (p->caps_keep & (1ULL << CAP_FSETID))
		return cl_fail(err, 0, "--cap-add FSETID (or ALL) with the docker runtime as root: "
		               "writes would keep the setuid bits of host root's files; use --host-root "
		               "or the native runtime");
	for (size_t i = 0; rc == 0 && i < sizeof(mode_calls) / sizeof(mode_calls[0]); i++)
		rc = fold_mode_call(prof, mode_calls[i].name, mode_calls[i].arg, err);
	for (size_t i = 0; rc == 0 && i < sizeof(deny_calls) / sizeof(deny_calls[0]); i++)
		if (!deny_calls[i].fcaps || can_set_fcaps(p))
			rc = fold_deny(prof, deny_calls[i].name, SCMP_ACT_ERRNO(deny_calls[i].errnum), err);
	return rc;
}
