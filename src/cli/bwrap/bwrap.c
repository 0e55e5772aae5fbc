/* `cloister bwrap` / argv[0] "bwrap": bubblewrap's defaults, the argument walk
 * (--args FD, "--", command), bwrap's final checks, the run and its exit code. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "src/policy/caps.h"
#include "src/cli/bwrap/bwrap.h"
#include "src/workspace/run.h"
#include "src/policy/executor.h"
#include "src/policy/status.h"

extern char **environ;

/* The policy as bwrap would build it before looking at any option: share
 * every namespace, keep the environment, no seccomp, no new session, a
 * writable empty root, the caller's ids, fds inherited. */
static int bwrap_defaults(struct cl_bwrap *b, cl_error *err)
{
	struct cl_policy *p = b->p;

	cl_policy_init(p);
	p->ns_flags = CLONE_NEWNS;
	p->root_readonly = false;
	p->new_session = false;
	p->die_with_parent = false;
	p->pty = false;                 /* bwrap shares the caller's terminal */
	p->no_new_privs = true;         /* bwrap always sets it */
	p->seccomp = CL_SC_UNCONFINED;
	p->network = CL_NET_HOST;
	p->hooks.keep_fds = true;
	p->hooks.keep_ignored_signals = true;   /* bwrap execs with what it inherited */
	p->hooks.exec_fail_code = CL_BWRAP_EXIT_FAIL;
	p->hooks.bwrap_msgs = true;
	p->hooks.bwrap_mounts = true;
	/* bwrap binds stdout's terminal on /dev/console (ttyname works inside). */
	if (ttyname_r(1, p->hooks.console_tty, sizeof(p->hooks.console_tty)) != 0)
		p->hooks.console_tty[0] = '\0';
	p->env = calloc(1, sizeof(char *));
	if (!p->env)
		return cl_fail(err, ENOMEM, "copying the environment");
	for (char **e = environ; *e; e++)
		if (strchr(*e, '=') && !cl_strv_push(&p->env, *e))
			return cl_fail(err, ENOMEM, "copying the environment");
	return 0;
}

static int parse_list(struct cl_bwrap *b, int n, char **v, int *pos, bool nested,
                      cl_error *err);

/* "--args FD": the NUL-separated arguments are parsed as options right
 * here, as bwrap does; a non-option inside them ends that list (bwrap
 * ignores the rest: the command comes from the real argv). The data may
 * not hold another --args (bwrap's rule), and a --perms, --size or
 * --overlay-src it leaves pending is an error right after it. */
static int parse_args_fd(struct cl_bwrap *b, const char *fdstr, cl_error *err)
{
	char **add = NULL;
	int fd, pos = 0, rc;

	if (b->args_depth > 0)
		return cl_fail(err, 0, "--args not supported in arguments file");
	if (cl_bwrap_parse_fd(fdstr, &fd, err) < 0)
		return -EINVAL;
	if (cl_bwrap_read_args(fd, &add, err) < 0)
		return cl_error_code(err);
	if (fd > 2)
		close(fd);
	b->args_depth++;
	rc = parse_list(b, (int)cl_strv_len(add), add, &pos, true, err);
	b->args_depth--;
	cl_strv_free(add);
	return rc < 0 ? rc : cl_bwrap_check_pending(b, "--args", err);
}

/* Options from v[*pos] on; stops at "--" (skipped) or a non-option. */
static int parse_list(struct cl_bwrap *b, int n, char **v, int *pos, bool nested,
                      cl_error *err)
{
	bool known;
	int i, rc = 0;

	for (i = *pos; rc == 0 && i < n && !b->help && !b->version; i++) {
		if (strcmp(v[i], "--") == 0) {
			i++;
			break;
		}
		if (v[i][0] != '-')
			break;
		if (strcmp(v[i], "--args") == 0) {
			if (i + 1 >= n)
				return cl_fail(err, 0, "--args takes an argument");
			rc = parse_args_fd(b, v[++i], err);
			continue;
		}
		rc = cl_bwrap_apply(b, n, v, &i, &known, err);
		if (rc == 0 && !known)
			rc = cl_fail(err, 0, "Unknown option %s", v[i]);
	}
	*pos = i;
	return rc;
}

static bool userns_requested(const struct cl_bwrap *b)
{
	return b->unshare_user || b->unshare_user_try;
}

/* Unprivileged (bwrap not setuid) a user namespace is always created,
 * unless an existing one is joined (--userns). */
static bool userns_created(const struct cl_bwrap *b)
{
	return b->p->hooks.userns_fd < 0 && (userns_requested(b) || getuid() != 0);
}

/* The checks bwrap makes once every option is known, in its wording. */
static int check_combinations(struct cl_bwrap *b, cl_error *err)
{
	const struct cl_policy *p = b->p;

	/* A --perms or --size still pending here came right before the
	 * command: bwrap stops reading options there and never looks at
	 * them again. A pending --overlay-src it does check. */
	if (b->ovl_src)
		return cl_fail(err, 0, "--overlay-src must be followed by another --overlay-src "
		               "or one of --overlay, --tmp-overlay, or --ro-overlay");
	if (p->hooks.userns_fd >= 0 && b->unshare_user)
		return cl_fail(err, 0, "--userns not compatible --unshare-user");
	if (p->hooks.pidns_fd >= 0 && b->unshare_pid)
		return cl_fail(err, 0, "--pidns with --unshare-pid is not supported by cloister "
		               "yet; nothing was run");
	if (p->hooks.userns2_fd >= 0 && p->hooks.userns_fd < 0)
		return cl_fail(err, 0, "--userns2 requires --userns");
	if (p->hooks.userns_fd >= 0 && (b->uid_set || b->gid_set))
		return cl_fail(err, 0, "--uid/--gid with --userns are not supported by cloister "
		               "yet; nothing was run");
	if (b->uid_set && p->uid != getuid() && !userns_created(b))
		return cl_fail(err, 0, "Specifying --uid requires --unshare-user or --userns");
	if (b->gid_set && p->gid != getgid() && !userns_created(b))
		return cl_fail(err, 0, "Specifying --gid requires --unshare-user or --userns");
	if (p->hostname && !b->unshare_uts)
		return cl_fail(err, 0, "Specifying --hostname requires --unshare-uts");
	if (p->hooks.as_pid_1 && !b->unshare_pid)
		return cl_fail(err, 0, "Specifying --as-pid-1 requires --unshare-pid");
	if ((p->n_ports || p->n_forwards) && !b->unshare_net)
		return cl_fail(err, 0, "--publish and --forward-out need --unshare-net (the sandbox "
		               "shares the host's network otherwise)");
	if (p->hooks.disable_userns && !b->unshare_user)
		return cl_fail(err, 0, "--disable-userns requires --unshare-user");
	if (p->hooks.userns_block_fd >= 0 && !b->unshare_user)
		return cl_fail(err, 0, "--userns-block-fd requires --unshare-user");
	if (p->hooks.userns_block_fd >= 0 && p->hooks.info_fd < 0)
		return cl_fail(err, 0, "--userns-block-fd requires --info-fd");
	return 0;
}

/* Capabilities: a privileged caller keeps what it has (bounding set),
 * anyone else starts with none; --cap-add/--cap-drop adjust. */
static int resolve_caps(struct cl_bwrap *b, cl_error *err)
{
	uint64_t keep = 0;

	for (unsigned c = 0; getuid() == 0 && c <= cl_caps_last() && c < 64; c++) {
		int r = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
		if (r < 0 && errno == EINVAL)   /* past the kernel's last cap */
			break;
		if (r < 0)
			return cl_fail_errno(err, "reading capability %u of the bounding set", c);
		if (r == 1)
			keep |= 1ULL << c;
	}
	b->p->caps_keep = (keep | b->cap_add) & ~b->cap_drop;
	/* bwrap run by root: without --cap-add/--cap-drop the current sets
	 * (inheritable and ambient included) stay the caller's; the bounding
	 * set is only set when a user namespace is made (the kernel fills it
	 * then), to the caller's own or what the options ask. */
	if (getuid() == 0 && !b->caps_touched)
		b->p->hooks.caps_keep_current = true;
	if (getuid() == 0 && !(b->p->ns_flags & CLONE_NEWUSER))
		b->p->hooks.caps_keep_bounding = true;
	return 0;
}

static void resolve_namespaces(struct cl_bwrap *b)
{
	struct cl_policy *p = b->p;

	/* Without privilege a mount namespace needs a user namespace: bwrap
	 * (not setuid) implies --unshare-user then, and so do we. */
	if (userns_created(b))
		p->ns_flags |= CLONE_NEWUSER;
	if (b->unshare_ipc)
		p->ns_flags |= CLONE_NEWIPC;
	if (b->unshare_pid)
		p->ns_flags |= CLONE_NEWPID;
	if (b->unshare_net) {
		p->ns_flags |= CLONE_NEWNET;
		p->network = CL_NET_NONE;
	}
	if (b->unshare_uts)
		p->ns_flags |= CLONE_NEWUTS;
	if (b->unshare_cgroup || (b->unshare_cgroup_try && access("/proc/self/ns/cgroup", F_OK) == 0))
		p->ns_flags |= CLONE_NEWCGROUP;
	/* Without a pid namespace of its own bwrap has no init: the command
	 * is its child, and --info-fd's child-pid names the command. A lock
	 * file (init holds the lock for the whole run) and port relays (init
	 * makes their sockets in the sandbox's network) still need init. */
	if (!(p->ns_flags & CLONE_NEWPID) && p->hooks.pidns_fd < 0 && !p->hooks.lock_file &&
	    !p->n_ports && !p->n_forwards)
		p->hooks.as_pid_1 = true;
}

/* Working directory: --chdir, else the caller's cwd if it exists inside,
 * else $HOME, else / (decided in the sandbox); PWD follows. */
static int resolve_cwd(struct cl_bwrap *b, cl_error *err)
{
	struct cl_policy *p = b->p;
	char cwd[PATH_MAX];

	if (!p->workdir) {
		p->hooks.cwd_fallback = true;
		p->workdir = strdup(getcwd(cwd, sizeof(cwd)) ? cwd : "/");
		if (!p->workdir)
			return cl_fail(err, ENOMEM, "reading the current directory");
	}
	/* (p->workdir is the policy's: cl_policy_free frees it) */
	/* NOLINTNEXTLINE(clang-analyzer-unix.Malloc) */
	return cl_policy_setenv(p, "PWD", p->workdir) < 0 ? cl_fail(err, ENOMEM, "PWD") : 0;
}

/* fds given to options are bwrap's, not the command's: they do not survive
 * exec (0-2 stay, they are the command's stdio). */
static void cloexec_option_fds(const struct cl_policy *p)
{
	const struct cl_hooks *h = &p->hooks;
	int fds[] = {h->info_fd, h->status_fd, h->block_fd, h->userns_block_fd, h->userns_fd,
	             h->userns2_fd, h->pidns_fd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(*fds); i++)
		if (fds[i] > 2)
			fcntl(fds[i], F_SETFD, FD_CLOEXEC);
	for (size_t i = 0; i < h->n_seccomp_fds; i++)
		if (h->seccomp_fds[i] > 2)
			fcntl(h->seccomp_fds[i], F_SETFD, FD_CLOEXEC);
	for (size_t i = 0; i < p->n_mounts; i++)
		if (p->mounts[i].src_fd > 2)
			fcntl(p->mounts[i].src_fd, F_SETFD, FD_CLOEXEC);
}

/* Order: bwrap's own checks first (their messages win), then the
 * hardening policy's pid namespace before namespaces are resolved, its
 * tightening after the argv's capabilities are (so it overrides them). */
static int finish(struct cl_bwrap *b, cl_error *err)
{
	struct cl_bwrap_hardening h;
	int rc = check_combinations(b, err);

	if (rc < 0)
		return rc;
	rc = cl_bwrap_hardening_load(&h, b->p, err);
	if (rc == 0)
		rc = cl_bwrap_hardening_pre(b, &h, err);
	if (rc == 0) {
		resolve_namespaces(b);
		/* The child-pid that --info-fd/--json-status-fd publish (init with
		 * --unshare-pid) is a process whose namespaces the caller joins
		 * (--userns/--pidns of a second bwrap): /proc/PID/ns of a
		 * non-dumpable init would be root's. Only then does init stay
		 * dumpable, as bwrap's own: once init has dropped its capabilities
		 * the command (same uid) can ptrace it, so init must hold nothing
		 * the command may not have. Its sync socket is the one thing: the
		 * supervisor accepts messages only from init's pid (ns/sync.h). */
		b->p->hooks.init_dumpable = b->p->hooks.info_fd >= 0 || b->p->hooks.status_fd >= 0;
		rc = resolve_caps(b, err);
	}
	if (rc == 0)
		cl_bwrap_hardening_apply(b, &h);
	cl_bwrap_hardening_free(&h);
	return rc < 0 ? rc : resolve_cwd(b, err);
}

/* Walks argv[1..]: options in order, then the command (after "--" or at
 * the first non-option). */
int cl_bwrap_parse(struct cl_bwrap *b, int argc, char **argv, cl_error *err)
{
	int i = 1, rc = bwrap_defaults(b, err);

	if (rc == 0)
		rc = parse_list(b, argc, argv, &i, false, err);
	for (; rc == 0 && i < argc && !b->help && !b->version; i++)
		if (!cl_strv_push(&b->p->argv, argv[i]))
			rc = cl_fail(err, ENOMEM, "copying the command line");
	if (rc < 0 || b->help || b->version || !b->p->argv)
		return rc;
	return finish(b, err);
}

static void print_err(const cl_error *err)
{
	cl_error_print(err);
}

static int run(struct cl_bwrap *b)
{
	struct cl_policy *p = b->p;
	struct cl_status st;
	cl_error err = {0};
	bool after = false;
	int rc;

	if (p->diff_out && !p->workspace)
		cl_fail(&err, 0, "--diff-out needs --workspace DIR");
	if (err.msg[0] || cl_policy_validate(p, &err) < 0) {
		print_err(&err);
		return CL_BWRAP_EXIT_FAIL;
	}
	cloexec_option_fds(p);
	cl_status_init(&st);
	/* With --workspace: the overlay, then the diff once all is over. */
	rc = ws_run_native(p, &st, &after, &err);
	if (rc < 0 && !after) {
		print_err(&err);
		return CL_BWRAP_EXIT_FAIL;
	}
	if (p->json_status_path && cl_status_write(&st, p->json_status_path, -1, &err) < 0)
		print_err(&err);
	cl_status_release(&st);
	if (rc < 0) {
		print_err(&err);
		return CL_BWRAP_EXIT_FAIL;
	}
	return st.exit_code;
}

int cl_bwrap_main(int argc, char **argv)
{
	struct cl_policy p = {0};
	struct cl_bwrap b = {.p = &p};
	cl_error err = {0};
	int rc;

	cl_error_prog = "bwrap";
	rc = cl_bwrap_parse(&b, argc, argv, &err);
	cl_strv_free(b.ovl_src);
	if (rc < 0) {
		print_err(&err);
		rc = CL_BWRAP_EXIT_FAIL;
	} else if (b.help) {
		cl_bwrap_usage(stdout, argc > 0 ? argv[0] : "bwrap");
	} else if (b.version) {
		printf("bubblewrap %s (cloister)\n", CL_BWRAP_VERSION);
	} else if (!p.argv) {
		cl_bwrap_usage(stderr, argc > 0 ? argv[0] : "bwrap");
		rc = CL_BWRAP_EXIT_FAIL;
	} else {
		rc = run(&b);
	}
	cl_policy_free(&p);
	return rc;
}
