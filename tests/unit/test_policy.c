#define _GNU_SOURCE
/* Unit tests for the run front-end and policy validation: argv in, policy
 * (or the exact one-line error) out. No kernel involved. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "src/cli/cli.h"
#include "src/util/error.h"
#include "src/policy/policy.h"
#include "src/policy/policy_json.h"
#include "unit.h"

static int parse(struct cl_policy *p, struct cl_run_opts *o, cl_error *err, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	memset(err, 0, sizeof(*err));
	return cl_cli_run_parse(argc, argv, p, o, err);
}

static const struct cl_mount *find_mount(const struct cl_policy *p, const char *dest)
{
	const struct cl_mount *m = NULL;

	for (size_t i = 0; i < p->n_mounts; i++)
		if (p->mounts[i].dest && strcmp(p->mounts[i].dest, dest) == 0)
			m = &p->mounts[i];
	return m;
}

/* Rows: argv, expected rc (0 or < 0), substring expected in the error. */
static const struct { const char *argv[8]; int ok; const char *msg; } rows[] = {
	{{"run", "true"}, 1, NULL},
	{{"run", "--", "true", "--ro"}, 1, NULL},
	{{"run"}, 0, "no command given"},
	{{"run", "--bogus", "true"}, 0, "unknown option '--bogus'"},
	{{"run", "--ro"}, 0, "needs a value"},
	{{"run", "--ro", "relative", "true"}, 0, "must be absolute"},
	{{"run", "--rw", "/a:rel", "true"}, 0, "must be absolute"},
	{{"run", "--ro", "/a:/x/../y", "true"}, 0, "without '..'"},
	{{"run", "--tmpfs", "/t:size=0", "true"}, 0, "DEST[:size=N]"},
	{{"run", "--tmpfs", "/t:mode=1", "true"}, 0, "DEST[:size=N]"},
	{{"run", "--network", "bridge", "true"}, 0, "expected none or host"},
	{{"run", "--uid", "-1", "true"}, 0, "--uid '-1'"},
	{{"run", "--timeout", "0", "true"}, 0, "--timeout '0'"},
	{{"run", "--memory", "12x", "true"}, 0, "--memory '12x'"},
	{{"run", "--cpus", "0", "true"}, 0, "--cpus '0'"},
	{{"run", "--pids", "0", "true"}, 0, "--pids '0'"},
	{{"run", "--memory-swap", "1g", "true"}, 0, "needs --memory"},
	{{"run", "--memory", "1g", "--memory-swap", "512m", "true"}, 0, "at least --memory"},
	{{"run", "--cap-add", "CAP_BOGUS", "true"}, 0, "unknown capability"},
	{{"run", "-w", "rel", "true"}, 0, "absolute path"},
	{{"run", "--hostname", "", "true"}, 0, "1 to 64"},
	{{"run", "--json-status", "fd:x", "true"}, 0, "FILE or fd:N"},
	{{"run", "--publish", "80", "true"}, 0, "--publish '80'"},
	{{"run", "--publish", "8080:80", "--network", "host", "true"}, 0, "need the sandbox's own network"},
	{{"run", "--forward-out", "80:h:1", "--forward-out", "80:h:2", "true"}, 0, "used twice"},
	{{"run", "--output-limit", "0", "true"}, 0, "--output-limit '0'"},
	{{"run", "--output-limit", "1x", "true"}, 0, "--output-limit '1x'"},
	{{"run", "--forward-out", "3128:127.0.0.1:8080", "--publish", "[::1]:8080:80/udp", "true"}, 1, NULL},
};

static void table(void)
{
	char name[160];

	for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
		struct cl_policy p;
		struct cl_run_opts o;
		cl_error err;
		int rc = parse(&p, &o, &err, (char **)rows[i].argv);
		snprintf(name, sizeof(name), "row %zu (%s %s)", i, rows[i].argv[1] ? rows[i].argv[1] : "",
		         rows[i].msg ? rows[i].msg : "ok");
		if (rows[i].ok)
			CHECK(name, rc == 0);
		else
			CHECK(name, rc < 0 && err.errnum == 0 && strstr(err.msg, rows[i].msg) != NULL);
		cl_policy_free(&p);
	}
}

static void defaults(void)
{
	char *argv[] = {"run", "--env", "FOO=bar", "--ro", "/srv:/data", "--", "ls", "-l", NULL};
	struct cl_policy p;
	struct cl_run_opts o;
	cl_error err;
	const struct cl_mount *m;
	int all = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
	          CLONE_NEWUTS | CLONE_NEWCGROUP;

	CHECK("defaults parse", parse(&p, &o, &err, argv) == 0);
	CHECK("all namespaces by default", (p.ns_flags & all) == all);
	CHECK("argv kept after --", p.argv && strcmp(p.argv[0], "ls") == 0 &&
	                            strcmp(p.argv[1], "-l") == 0 && !p.argv[2]);
	CHECK("env has FOO", cl_policy_getenv(&p, "FOO") && !strcmp(cl_policy_getenv(&p, "FOO"), "bar"));
	CHECK("env has PATH", cl_policy_getenv(&p, "PATH") != NULL);
	CHECK("env cleared (no HOME)", cl_policy_getenv(&p, "HOME") == NULL);
	CHECK("/usr bound read-only", (m = find_mount(&p, "/usr")) && m->kind == CL_MNT_BIND &&
	                              (m->flags & CL_MF_RO));
	CHECK("/proc mounted", (m = find_mount(&p, "/proc")) && m->kind == CL_MNT_PROC);
	CHECK("/tmp tmpfs 1777", (m = find_mount(&p, "/tmp")) && m->kind == CL_MNT_TMPFS &&
	                         m->mode == 01777);
	CHECK("/tmp capped by default", m && m->size == cl_policy_default_tmpfs_size() &&
	                                m->size > 0 && m->size <= (1ULL << 30));
	CHECK("/dev capped at 64 MiB", (m = find_mount(&p, "/dev")) && m->kind == CL_MNT_DEV &&
	                               m->size == (64ULL << 20));
	CHECK("RLIMIT_NPROC 2048 by default", p.rlimit_nproc == 2048);
	CHECK("no output limit by default (passthrough)", p.output_limit == 0);
	CHECK("user bind after defaults", p.mounts[p.n_mounts - 1].kind == CL_MNT_BIND &&
	                                  !strcmp(p.mounts[p.n_mounts - 1].dest, "/data"));
	CHECK("seccomp default", p.seccomp == CL_SC_DEFAULT);
	CHECK("no caps kept", p.caps_keep == 0);
	CHECK("hostname set", p.hostname && !strcmp(p.hostname, "cloister"));
	CHECK("workdir /", p.workdir == NULL);
	char *json = cl_policy_to_json(&p);
	CHECK("dry-run json has mounts", json && strstr(json, "\"destination\": \"/data\""));
	free(json);
	cl_policy_free(&p);
}

static void bounds_options(void)
{
	char *argv[] = {"run", "--output-limit", "2k", "--pids", "64", "--tmpfs", "/t",
	                "--tmpfs", "/u:size=8m", "true", NULL};
	struct cl_policy p;
	struct cl_run_opts o;
	cl_error err;
	const struct cl_mount *m;

	CHECK("bounds options parse", parse(&p, &o, &err, argv) == 0);
	CHECK("--output-limit 2k", p.output_limit == 2048);
	CHECK("--pids sets RLIMIT_NPROC too", p.rlimit_nproc == 64 && p.limits.pids == 64);
	CHECK("--tmpfs without size= gets the default cap",
	      (m = find_mount(&p, "/t")) && m->size == cl_policy_default_tmpfs_size());
	CHECK("--tmpfs size= wins", (m = find_mount(&p, "/u")) && m->size == (8ULL << 20));
	cl_policy_free(&p);
}

static void options(void)
{
	char *argv[] = {"run", "--network", "host", "--uid", "0", "--cap-add", "NET_BIND_SERVICE",
	                "--timeout", "1.5", "true", NULL};
	char *argv2[] = {"run", "--cap-add", "ALL", "--cap-drop", "CAP_SYS_ADMIN", "--here", "x", NULL};
	struct cl_policy p;
	struct cl_run_opts o;
	cl_error err;

	CHECK("options parse", parse(&p, &o, &err, argv) == 0);
	CHECK("host network keeps netns", !(p.ns_flags & CLONE_NEWNET));
	CHECK("uid 0", p.uid == 0);
	CHECK("cap kept", p.caps_keep == (1ULL << 10));
	CHECK("timeout ms", p.timeout_ms == 1500);
	cl_policy_free(&p);
	CHECK("cap add all, drop one", parse(&p, &o, &err, argv2) == 0 && p.caps_keep &&
	                               !(p.caps_keep & (1ULL << 21)) && (p.caps_keep & 1));
	CHECK("--here sets workdir", p.workdir && p.workdir[0] == '/');
	cl_policy_free(&p);
}

static void env_ops(void)
{
	struct cl_policy p;

	cl_policy_init(&p);
	CHECK("setenv", cl_policy_setenv(&p, "A", "1") == 0 && cl_policy_setenv(&p, "B", "2") == 0);
	CHECK("replace", cl_policy_setenv(&p, "A", "3") == 0 && !strcmp(cl_policy_getenv(&p, "A"), "3"));
	cl_policy_unsetenv(&p, "A");
	CHECK("unset", cl_policy_getenv(&p, "A") == NULL && !strcmp(cl_policy_getenv(&p, "B"), "2"));
	CHECK("prefix is not a match", cl_policy_getenv(&p, "") == NULL);
	cl_policy_free(&p);
}

static void errors(void)
{
	cl_error err = {0};
	char line[600];

	CHECK("fail returns -errno", cl_fail(&err, EACCES, "mounting %s read-only", "/usr") == -EACCES);
	cl_error_format(&err, line, sizeof(line));
	CHECK("format with strerror", !strcmp(line, "mounting /usr read-only: Permission denied"));
	CHECK("wrap keeps code", cl_wrap(&err, "step %d", 3) == -EACCES);
	cl_error_format(&err, line, sizeof(line));
	CHECK("wrap prefixes", !strcmp(line, "step 3: mounting /usr read-only: Permission denied"));
	CHECK("bad input is EINVAL", cl_fail(&err, 0, "bad") == -EINVAL);
	cl_error_format(&err, line, sizeof(line));
	CHECK("bad input has no strerror", !strcmp(line, "bad"));
}

int main(void)
{
	setenv("HOME", "/root", 1);
	table();
	defaults();
	bounds_options();
	options();
	env_ops();
	errors();
	UNIT_MAIN_END;
}
