/* cloister's entry point: refuse setuid, pick the front-end by subcommand,
 * hand the validated policy to an executor, map the outcome to an exit code. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if CL_NATIVE
#include "cgroups/cgroup.h"
#include "src/cli/session.h"
#include "src/cli/seccomp.h"
#include "src/cli/bwrap/bwrap.h"
#endif
#include "src/cli/check.h"
#include "src/cli/cli.h"
#include "src/policy/executor.h"
#include "src/executors/docker_gc.h"
#include "src/policy/runtime.h"
#include "src/policy/policy_json.h"
#include "src/cli/sandbox.h"
#include "src/state/store.h"
#include "src/policy/status.h"
#include "src/cli/version.h"
#include "src/cli/workspace.h"
#include "src/workspace/run.h"
#include "src/workspace/state.h"

#define EXIT_SETUP 125

static void usage(FILE *f)
{
	fputs("usage: cloister COMMAND [ARGS]\n"
	      "  run [OPTIONS] [--] COMMAND [ARG...]   run COMMAND in a sandbox\n"
	      "  bwrap [BWRAP-OPTIONS] [--] COMMAND     bubblewrap's command line (also as argv[0] bwrap)\n"
	      "  check [--json]                        what this host allows, and why not\n"
	      "  seccomp compile|show PROFILE          compile a seccomp profile to BPF, or print it\n"
	      "  sandbox run --spec FILE|-             run a Smithers-shaped sandbox spec (docs/spec.md)\n"
	      "  bundle validate DIR [--json]          check a result bundle\n"
	      "  diff apply BUNDLE TARGET [--check]    apply a workspace diff bundle, all or nothing\n"
	      "  diff show BUNDLE [--stat]             print a diff bundle as git diff would\n"
	      "  workspace snapshot NAME [--id ID]     snapshot a sticky workspace (prints the id)\n"
	      "  workspace snapshots [--json] | rm-snapshot ID   list or remove snapshots\n"
	      "  ps [--json] | events RUN_ID           sandbox runs and events (./.smithers or --root DIR)\n"
	      "  create [RUN-OPTIONS] [--name N] [--idle-timeout S]  a persistent sandbox (prints its id)\n"
	      "  exec ID [--env K=V] [-w DIR] [--timeout S] -- CMD   run CMD in it, same isolation\n"
	      "  cp [-r] SRC DEST                      copy a file or (-r) a tree in or out (ID:/path, - for stdio)\n"
	      "  ls [--json] | rm ID...                list or remove sessions (docs/sessions.md)\n"
	      "  gc [--cgroup-parent PATH]             remove cgroups, workspaces, sessions and containers left by dead runs\n"
	      "  version                               print the version\n"
	      "See cloister(1) and `cloister run --help`.\n", f);
}

/* cloister never runs with more privilege than its caller: a setuid or
 * setgid binary (or such a launch) is refused outright. */
static int refuse_setuid(void)
{
	struct stat st;

	if (getuid() != geteuid() || getgid() != getegid() ||
	    (stat("/proc/self/exe", &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)))) {
		fputs("cloister: refusing to run setuid or setgid; install it without those bits\n",
		      stderr);
		return -1;
	}
	return 0;
}

static int finish_run(const struct cl_policy *p, struct cl_status *st)
{
	cl_error err = {0};

	if ((p->json_status_path || p->json_status_fd >= 0) &&
	    cl_status_write(st, p->json_status_path, p->json_status_fd, &err) < 0)
		cl_error_print(&err);
	return st->exit_code;
}

static int cmd_run(int argc, char **argv)
{
	struct cl_policy p;
	struct cl_run_opts o;
	struct cl_status st;
	cl_error err = {0};
	bool after = false;
	int rc, code;

	rc = cl_cli_run_parse(argc, argv, &p, &o, &err);
	if (rc == 0 && o.help) {
		cl_cli_run_usage(stdout);
		cl_policy_free(&p);
		return 0;
	}
	if (rc < 0) {
		cl_error_print(&err);
		cl_policy_free(&p);
		return EXIT_SETUP;
	}
	if (o.dry_run) {
		rc = cl_policy_print_json(&p);
		cl_policy_free(&p);
		return rc < 0 ? EXIT_SETUP : 0;
	}
	cl_status_init(&st);
	/* A workspace's overlay and diff are the native runtime's (docker
	 * and codeplane refuse --workspace: src/workspace/run.c). */
	rc = p.workspace ? ws_run_native(&p, &st, &after, &err) : cl_runtime_run(&p, &st, &err);
	if (rc < 0) {
		cl_error_print(&err);
		if (!after)
			st.exit_code = EXIT_SETUP;
	}
	/* The status file says how the command ended even when its diff
	 * could not be captured; the exit code says cloister failed. */
	code = finish_run(&p, &st);
	cl_status_release(&st);
	rc = rc < 0 ? EXIT_SETUP : code;
	cl_policy_free(&p);
	return rc;
}

/* bubblewrap's command line: under any name containing "bwrap" (a link,
 * a renamed copy, flatpak-bwrap), and when the first argument is an option
 * cloister's own command line does not have. The latter is how a sandbox
 * re-runs its own binary through /proc/self/exe (argv[0] is then that path,
 * or whatever the caller chose), as bwrap's users do for nesting. */
static bool bwrap_mode(int argc, char **argv)
{
	const char *name;

	if (argc < 1)
		return false;
	name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	if (strstr(name, "bwrap"))
		return true;
	return argc > 1 && argv[1][0] == '-' && strcmp(argv[1], "--help") != 0 &&
	       strcmp(argv[1], "-h") != 0 && strcmp(argv[1], "--version") != 0;
}

/* Commands of the native runtime: in a NATIVE=0 build, refused by name.
 * The bwrap and seccomp macros there only let the one command table
 * compile: native_only refuses before either is reached. */
#if CL_NATIVE
static bool native_only(const char *cmd)
{
	return false;
}
#else
static bool native_only(const char *cmd)
{
	fprintf(stderr, "cloister: %s needs the native runtime, which this build does not have "
	        "(built with NATIVE=0)\n", cmd);
	return true;
}
#define cl_bwrap_main(c, v) EXIT_SETUP
#define sc_cli_main(c, v) EXIT_SETUP
#define cg_gc_main(c, v) 0   /* no cgroups of its own to sweep */
#define ss_cli_create_main(c, v) EXIT_SETUP
#define ss_cli_exec_main(c, v) EXIT_SETUP
#define ss_cli_cp_main(c, v) EXIT_SETUP
#define ss_cli_ls_main(c, v) EXIT_SETUP
#define ss_cli_rm_main(c, v) EXIT_SETUP
#endif

/* gc's docker part: containers of cloister runs that were killed. */
static int gc_containers(void)
{
	cl_error err = {0};
	int n;

	if (cl_docker_gc(&n, &err) < 0) {
		cl_error_print(&err);
		return -1;
	}
	if (n >= 0)
		printf("cloister gc: removed %d stale container%s\n", n, n == 1 ? "" : "s");
	return 0;
}

static int dispatch(int argc, char **argv)
{
	const char *cmd;

	if (refuse_setuid() < 0)
		return EXIT_SETUP;
	if (bwrap_mode(argc, argv))
		return native_only("bwrap") ? EXIT_SETUP : cl_bwrap_main(argc, argv);
	if (argc < 2) {
		usage(stderr);
		return EXIT_SETUP;
	}
	cmd = argv[1];
	if (strcmp(cmd, "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(cmd, "bwrap") == 0)
		return native_only("bwrap") ? EXIT_SETUP : cl_bwrap_main(argc - 1, argv + 1);
	if (strcmp(cmd, "seccomp") == 0)
		return native_only("seccomp") ? EXIT_SETUP : sc_cli_main(argc - 1, argv + 1);
	if (strcmp(cmd, "check") == 0)
		return cl_check_main(argc - 1, argv + 1);
	if (strcmp(cmd, "sandbox") == 0)
		return sb_cli_sandbox_main(argc - 1, argv + 1);
	if (strcmp(cmd, "diff") == 0)
		return ws_cli_diff_main(argc - 1, argv + 1);
	if (strcmp(cmd, "workspace") == 0)
		return native_only("workspace") ? EXIT_SETUP : ws_cli_workspace_main(argc - 1, argv + 1);
	if (strcmp(cmd, "bundle") == 0)
		return sb_cli_bundle_main(argc - 1, argv + 1);
	if (strcmp(cmd, "ps") == 0)
		return st_cli_ps_main(argc - 1, argv + 1);
	if (strcmp(cmd, "events") == 0)
		return st_cli_events_main(argc - 1, argv + 1);
	if (strcmp(cmd, "create") == 0)
		return native_only("create") ? EXIT_SETUP : ss_cli_create_main(argc - 1, argv + 1);
	if (strcmp(cmd, "exec") == 0)
		return native_only("exec") ? EXIT_SETUP : ss_cli_exec_main(argc - 1, argv + 1);
	if (strcmp(cmd, "cp") == 0)
		return native_only("cp") ? EXIT_SETUP : ss_cli_cp_main(argc - 1, argv + 1);
	if (strcmp(cmd, "ls") == 0)
		return native_only("ls") ? EXIT_SETUP : ss_cli_ls_main(argc - 1, argv + 1);
	if (strcmp(cmd, "rm") == 0)
		return native_only("rm") ? EXIT_SETUP : ss_cli_rm_main(argc - 1, argv + 1);
	if (strcmp(cmd, "gc") == 0) {
		st_gc_reconcile_cwd();
		ws_gc();
#if CL_NATIVE
		ss_gc_sweep();
#endif
		/* Containers first: a NATIVE=0 build has no cgroups of its own. */
		return gc_containers() < 0 ? EXIT_SETUP : cg_gc_main(argc - 1, argv + 1);
	}
	if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
		printf("cloister %s\n", CL_VERSION);
		return 0;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "cloister: unknown command '%s' (see cloister --help)\n", cmd);
	return EXIT_SETUP;
}

/* What a command printed must have reached stdout: a full disk or a
 * broken pipe is an error (125 if the command had succeeded), never a
 * silent exit 0 with the output lost. (Run and bwrap modes print nothing
 * there themselves: stdout is the sandboxed command's.) */
int main(int argc, char **argv)
{
	int rc = dispatch(argc, argv);

	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "cloister: writing to stdout: %s\n", strerror(errno ? errno : EIO));
		if (rc == 0)
			rc = EXIT_SETUP;
	}
	return rc;
}
