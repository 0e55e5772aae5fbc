/* Unit tests of the bwrap front-end: argv -> policy (operation order,
 * --perms/--size scope, --args FD, env, caps) and bwrap's error wording. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "src/cli/bwrap/bwrap.h"
#include "unit.h"

static int parse(struct cl_policy *p, struct cl_bwrap *b, cl_error *err, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	memset(b, 0, sizeof(*b));
	memset(err, 0, sizeof(*err));
	b->p = p;
	return cl_bwrap_parse(b, argc, argv, err);
}

static void test_order_and_modifiers(void)
{
	struct cl_policy p;
	struct cl_bwrap b;
	cl_error err;
	char *av[] = {"bwrap", "--ro-bind", "/usr", "/usr", "--perms", "0700", "--size", "4096",
	              "--tmpfs", "/t", "--dir", "/t/d", "--perms", "01777", "--dir", "/t/e",
	              "--symlink", "usr/bin", "/bin", "--chmod", "0750", "/t", "--remount-ro", "/usr",
	              "true", NULL};
	int rc = parse(&p, &b, &err, av);

	CHECK("ordered argv parses", rc == 0);
	CHECK("seven operations in order", p.n_mounts == 7 && p.mounts[0].kind == CL_MNT_BIND &&
	      p.mounts[1].kind == CL_MNT_TMPFS && p.mounts[2].kind == CL_MNT_DIR &&
	      p.mounts[3].kind == CL_MNT_DIR && p.mounts[4].kind == CL_MNT_SYMLINK &&
	      p.mounts[5].kind == CL_MNT_CHMOD && p.mounts[6].kind == CL_MNT_REMOUNT_RO);
	CHECK("--ro-bind is read-only", p.mounts[0].flags & CL_MF_RO);
	CHECK("--perms/--size go to the next op", p.mounts[1].mode == 0700 && p.mounts[1].size == 4096);
	CHECK("--perms does not leak to later ops", p.mounts[2].mode == (mode_t)-1);
	CHECK("second --perms applies", p.mounts[3].mode == 01777);
	CHECK("--chmod mode", p.mounts[5].mode == 0750);
	CHECK("command", p.argv && strcmp(p.argv[0], "true") == 0 && !p.argv[1]);
	CHECK("bwrap defaults: shares namespaces, root writable, no seccomp",
	      (p.ns_flags & CLONE_NEWNS) && !(p.ns_flags & (CLONE_NEWPID | CLONE_NEWNET)) &&
	      !p.root_readonly && p.seccomp == CL_SC_UNCONFINED && !p.new_session &&
	      p.hooks.keep_fds && p.no_new_privs);
	CHECK("user namespace only when unprivileged",
	      !!(p.ns_flags & CLONE_NEWUSER) == (getuid() != 0));
	cl_policy_free(&p);
}

static void test_errors(void)
{
	static const struct {
		char *av[8];
		const char *msg;
	} cases[] = {
		{{"bwrap", "--bind", "/", NULL}, "--bind takes two arguments"},
		{{"bwrap", "--chdir", NULL}, "--chdir takes one argument"},
		{{"bwrap", "--tmpfs", NULL}, "--tmpfs takes an argument"},
		{{"bwrap", "--perms", "0755", "--bind", "/", "/", "true", NULL},
		 "--perms must be followed by an option that creates a file"},
		{{"bwrap", "--size", "0", "--tmpfs", "/x", "true", NULL},
		 "--size takes a non-zero number of bytes"},
		{{"bwrap", "--perms", "8", NULL}, "--perms takes an octal argument <= 07777"},
		{{"bwrap", "--info-fd", "x", "true", NULL}, "Invalid fd: x"},
		{{"bwrap", "--nope", NULL}, "Unknown option --nope"},
		{{"bwrap", "--hostname", "h", "true", NULL}, "Specifying --hostname requires --unshare-uts"},
		{{"bwrap", "--unshare-pid", "--as-pid-1", "--unshare-user", "--uid", "x", NULL}, "Invalid uid: x"},
		{{"bwrap", "--cap-add", "CAP_NOPE", NULL}, "unknown cap: CAP_NOPE"},
		{{"bwrap", "--exec-label", "l", NULL}, "labeling not supported on this system"},
		/* The option's own error comes before a pending modifier's. */
		{{"bwrap", "--perms", "0700", "--uid", "x", "true", NULL}, "Invalid uid: x"},
		{{"bwrap", "--size", "1", "--perms", "0700", "--dir", "/x", NULL},
		 "--size must be followed by --tmpfs"},
		{{"bwrap", "--argv0", "a", "--argv0", "b", "true", NULL}, "--argv0 used multiple times"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct cl_policy p;
		struct cl_bwrap b;
		cl_error err;
		int rc = parse(&p, &b, &err, (char **)cases[i].av);
		CHECK(cases[i].msg, rc < 0 && strcmp(err.msg, cases[i].msg) == 0);
		cl_policy_free(&p);
		cl_strv_free(b.ovl_src);
	}
}

/* bwrap stops reading options at the command: a --perms or --size still
 * pending there is ignored, not an error, and creates nothing. */
static void test_pending_modifiers_before_command(void)
{
	struct cl_policy p;
	struct cl_bwrap b;
	cl_error err;
	char *av[] = {"bwrap", "--ro-bind", "/", "/", "--perms", "0700", "--size", "1", "--",
	              "true", NULL};
	int rc = parse(&p, &b, &err, av);

	CHECK("pending --perms/--size before the command are ignored",
	      rc == 0 && p.n_mounts == 1 && p.argv && strcmp(p.argv[0], "true") == 0);
	cl_policy_free(&p);
	cl_strv_free(b.ovl_src);
}

static void test_args_fd_and_env(void)
{
	static const char data[] = "--setenv\0A\0one\0--unshare-net\0--setenv\0B\0two";
	struct cl_policy p;
	struct cl_bwrap b;
	cl_error err;
	char fdbuf[16];
	int fds[2], rc;

	if (pipe(fds) < 0 || write(fds[1], data, sizeof(data) - 1) < 0)
		return;
	close(fds[1]);
	snprintf(fdbuf, sizeof(fdbuf), "%d", fds[0]);
	{
		char *av[] = {"bwrap", "--clearenv", "--args", fdbuf, "--unsetenv", "A", "echo", "x", NULL};
		rc = parse(&p, &b, &err, av);
	}
	CHECK("--args parses", rc == 0);
	CHECK("--args options applied in place", (p.ns_flags & CLONE_NEWNET) &&
	      !cl_policy_getenv(&p, "A") && cl_policy_getenv(&p, "B") &&
	      strcmp(cl_policy_getenv(&p, "B"), "two") == 0);
	CHECK("--clearenv: only B and PWD remain", cl_strv_len(p.env) == 2 &&
	      cl_policy_getenv(&p, "PWD"));
	CHECK("command after --args", p.argv && strcmp(p.argv[0], "echo") == 0);
	cl_policy_free(&p);
}

static void test_caps(void)
{
	struct cl_policy p;
	struct cl_bwrap b;
	cl_error err;
	char *av[] = {"bwrap", "--unshare-user", "--cap-add", "CAP_NET_ADMIN", "--cap-add",
	              "CAP_CHOWN", "--cap-drop", "CAP_CHOWN", "true", NULL};
	int rc = parse(&p, &b, &err, av);

	CHECK("caps parse", rc == 0);
	CHECK("--cap-add then --cap-drop", (p.caps_keep & (1ULL << 12)) && !(p.caps_keep & 1ULL));
	if (getuid() != 0)
		CHECK("unprivileged keeps only added caps", p.caps_keep == (1ULL << 12));
	cl_policy_free(&p);
}

int main(void)
{
	test_order_and_modifiers();
	test_errors();
	test_pending_modifiers_before_command();
	test_args_fd_and_env();
	test_caps();
	UNIT_MAIN_END;
}
