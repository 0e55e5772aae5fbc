/* The bwrap front-end: bubblewrap's command line (options, --args FD,
 * ordering rules, messages, exit codes) parsed into the shared policy. */
#ifndef CL_CLI_BWRAP_H
#define CL_CLI_BWRAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "src/util/error.h"
#include "src/policy/policy.h"

/* bwrap exits 1 for its own failures, whatever the cause. */
#define CL_BWRAP_EXIT_FAIL 1
/* The bubblewrap release whose command line and observable behaviour the
 * front-end implements (--version; docs/bwrap.md lists what differs). */
#define CL_BWRAP_VERSION "0.12.0"

/* Parser state that spans options (bwrap's "next operation" modifiers and
 * the facts checked once the whole command line is known). */
struct cl_bwrap {
	struct cl_policy *p;
	bool help, version;
	/* --perms/--size apply to the next operation only; left pending
	 * before the command (or "--") they are ignored, as in bwrap. */
	mode_t next_perms;
	bool perms_set;
	uint64_t next_size;
	bool size_set;
	char **ovl_src;           /* pending --overlay-src layers */
	/* Namespaces asked for (resolved into p->ns_flags at the end). */
	bool unshare_user, unshare_user_try, unshare_ipc, unshare_pid, unshare_net;
	bool unshare_uts, unshare_cgroup, unshare_cgroup_try;
	bool uid_set, gid_set;
	bool chdir_seen, seccomp_seen;
	uint64_t cap_add, cap_drop;
	bool caps_touched;
	bool not_a_security_boundary;   /* accepted, fail-closed all the same */
	int args_depth;
};

struct cl_bwrap_opt;
typedef int (*cl_bwrap_fn)(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a,
                           cl_error *err);

/* One option: name, argument count, handler, handler data. */
struct cl_bwrap_opt {
	const char *name;
	int nargs;
	cl_bwrap_fn fn;
	unsigned flags;       /* CL_MF_* for binds, or the mount kind */
	bool uses_perms;      /* consumes a preceding --perms/--size */
};

/* Applies the option at argv[*i] (advancing *i past its arguments);
 * *known is false for a name that is not an option. */
int cl_bwrap_apply(struct cl_bwrap *b, int argc, char **argv, int *i, bool *known,
                   cl_error *err);
/* bwrap's check after each option NAME: a --perms, --size or --overlay-src
 * that NAME did not consume is an error (the modifiers themselves and
 * --overlay-src may follow each other). */
int cl_bwrap_check_pending(const struct cl_bwrap *b, const char *name, cl_error *err);
/* cloister's additions (--memory, --timeout, ...) and --level-prefix. */
int cl_bwrap_ext_option(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a,
                        cl_error *err);

/* The opt-in hardening policy (docs/bwrap.md, "Hardening policy"): the
 * file named by CL_BWRAP_POLICY_ENV, else CL_BWRAP_POLICY_FILE if it exists. */
#define CL_BWRAP_POLICY_ENV "CLOISTER_BWRAP_POLICY"
#define CL_BWRAP_POLICY_FILE "/etc/cloister/bwrap.json"
struct cl_bwrap_hardening {
	bool active;              /* a policy file was read */
	uint64_t memory, pids, timeout_ms, output_limit;   /* 0 = not set */
	int64_t memory_swap;      /* -1 = not set */
	uint64_t cpu_quota_us, cpu_period_us;
	bool seccomp_set;
	enum cl_seccomp_mode seccomp;
	char *seccomp_path;
	bool new_session, drop_caps, proc_masks, own_tty;
};
/* Reads the policy file, if any; without one h->active stays false. p is
 * the parsed argv: a policy (or profile) its writable binds reach is
 * refused (src/policy/trust.h). */
int cl_bwrap_hardening_load(struct cl_bwrap_hardening *h, const struct cl_policy *p,
                            cl_error *err);
/* What must be known before namespaces are resolved (timeout: own pid ns). */
int cl_bwrap_hardening_pre(struct cl_bwrap *b, const struct cl_bwrap_hardening *h,
                           cl_error *err);
/* Tightens b->p with the policy, once the argv's own choices are resolved. */
void cl_bwrap_hardening_apply(struct cl_bwrap *b, struct cl_bwrap_hardening *h);
void cl_bwrap_hardening_free(struct cl_bwrap_hardening *h);

/* `cloister bwrap ARGS` / argv[0] "bwrap": parse, run, exit code. */
int cl_bwrap_main(int argc, char **argv);
/* Parses argv (argv[0] is the program name) into b->p. */
int cl_bwrap_parse(struct cl_bwrap *b, int argc, char **argv, cl_error *err);
/* Usage text; prog is the name bwrap was invoked as. */
void cl_bwrap_usage(FILE *f, const char *prog);
/* Reads NUL-separated arguments from fd (--args FD) into *out. */
int cl_bwrap_read_args(int fd, char ***out, cl_error *err);
/* "bwrap: MSG" on stderr ("<4>bwrap: " with --level-prefix). */
void cl_bwrap_warn(const char *msg);
/* Parses "12" as a file descriptor as bwrap does ("Invalid fd: %s"). */
int cl_bwrap_parse_fd(const char *s, int *fd, cl_error *err);

#endif
