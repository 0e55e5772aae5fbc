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
#include "src/cli/session.h"
#include "src/cli/seccomp.h"
#include "src/cli/bwrap/bwrap.h"
#endif
#include "src/cli/check.h"
#include "src/cli/gc.h"
#include "src/cli/cli.h"
#include "src/policy/executor.h"
#include "src/policy/runtime.h"
#include "src/policy/policy_json.h"
#include "src/cli/sandbox.h"
#include "src/state/store.h"
#include "src/policy/status.h"
#include "src/cli/version.h"
#include "src/cli/workspace.h"
#include "src/workspace/run.h"

#define EXIT_SETUP 125

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

/* Commands of the native runtime: in a NATIVE=0 build, refused by name
 * (native_only) before the table's entry, NULL there, is reached. */
#if CL_NATIVE
#define NATIVE_CMD(fn) (fn)
static bool native_only(const char *cmd)
{
	return false;
}
#else
#define NATIVE_CMD(fn) NULL
static bool native_only(const char *cmd)
{
	fprintf(stderr, "cloister: %s needs the native runtime, which this build does not have "
	        "(built with NATIVE=0)\n", cmd);
	return true;
}
#endif

static int cmd_version(int argc, char **argv)
{
	printf("cloister %s\n", CL_VERSION);
	return 0;
}

static int cmd_help(int argc, char **argv);

/* One row a command: its handler gets argv from the command's name on.
 * help: its lines of `cloister --help`, in this order (NULL: another
 * row's line covers it). */
static const struct command {
	const char *name;
	int (*handler)(int argc, char **argv);
	bool native;
	const char *help;
} commands[] = {
	{"run", cmd_run, false, "run [OPTIONS] [--] COMMAND [ARG...]   run COMMAND in a sandbox"},
	{"bwrap", NATIVE_CMD(cl_bwrap_main), true,
	 "bwrap [BWRAP-OPTIONS] [--] COMMAND     bubblewrap's command line (also as argv[0] bwrap)"},
	{"check", cl_check_main, false, "check [--json]                        what this host allows, and why not"},
	{"seccomp", NATIVE_CMD(sc_cli_main), true,
	 "seccomp compile|show PROFILE          compile a seccomp profile to BPF, or print it"},
	{"sandbox", sb_cli_sandbox_main, false,
	 "sandbox run --spec FILE|-             run a Smithers-shaped sandbox spec (docs/spec.md)"},
	{"bundle", sb_cli_bundle_main, false, "bundle validate DIR [--json]          check a result bundle"},
	{"diff", ws_cli_diff_main, false,
	 "diff apply BUNDLE TARGET [--check]    apply a workspace diff bundle, all or nothing\n"
	 "  diff show BUNDLE [--stat]             print a diff bundle as git diff would"},
	{"workspace", NATIVE_CMD(ws_cli_workspace_main), true,
	 "workspace snapshot NAME [--id ID]     snapshot a sticky workspace (prints the id)\n"
	 "  workspace snapshots [--json] | rm-snapshot ID   list or remove snapshots"},
	{"ps", st_cli_ps_main, false,
	 "ps [--json] | events RUN_ID           sandbox runs and events (./.smithers or --root DIR)"},
	{"events", st_cli_events_main, false, NULL},
	{"create", NATIVE_CMD(ss_cli_create_main), true,
	 "create [RUN-OPTIONS] [--name N] [--idle-timeout S]  a persistent sandbox (prints its id)"},
	{"exec", NATIVE_CMD(ss_cli_exec_main), true,
	 "exec ID [--env K=V] [-w DIR] [--timeout S] -- CMD   run CMD in it, same isolation"},
	{"cp", NATIVE_CMD(ss_cli_cp_main), true,
	 "cp [-r] SRC DEST                      copy a file or (-r) a tree in or out (ID:/path, - for stdio)"},
	{"ls", NATIVE_CMD(ss_cli_ls_main), true,
	 "ls [--json] | rm ID...                list or remove sessions (docs/sessions.md)"},
	{"rm", NATIVE_CMD(ss_cli_rm_main), true, NULL},
	{"gc", cl_gc_main, false,
	 "gc [--cgroup-parent PATH]             remove cgroups, workspaces, sessions and containers left by dead runs"},
	{"version", cmd_version, false, "version                               print the version"},
	{"--version", cmd_version, false, NULL},
	{"--help", cmd_help, false, NULL},
	{"-h", cmd_help, false, NULL},
	{"help", cmd_help, false, NULL},
};

static void usage(FILE *f)
{
	fputs("usage: cloister COMMAND [ARGS]\n", f);
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		if (commands[i].help)
			fprintf(f, "  %s\n", commands[i].help);
	fputs("See cloister(1) and `cloister run --help`.\n", f);
}

static int cmd_help(int argc, char **argv)
{
	usage(stdout);
	return 0;
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* argv from the command's name (or, in bwrap mode, the program's) on. */
static int run_command(const struct command *c, int argc, char **argv)
{
	if (c->native && native_only(c->name))
		return EXIT_SETUP;
	return c->handler(argc, argv);
}

static int dispatch(int argc, char **argv)
{
	const struct command *c;

	if (refuse_setuid() < 0)
		return EXIT_SETUP;
	if (bwrap_mode(argc, argv))
		return run_command(find_command("bwrap"), argc, argv);
	if (argc < 2) {
		usage(stderr);
		return EXIT_SETUP;
	}
	c = find_command(argv[1]);
	if (!c) {
		fprintf(stderr, "cloister: unknown command '%s' (see cloister --help)\n", argv[1]);
		return EXIT_SETUP;
	}
	return run_command(c, argc - 1, argv + 1);
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
