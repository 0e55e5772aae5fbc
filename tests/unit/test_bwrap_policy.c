/* Unit tests of the bwrap hardening policy: a file's keys tighten what the
 * argv asked (never loosen), and override its capabilities and session. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "src/cli/bwrap/bwrap.h"
#include "unit.h"

static char policy_path[64];

static int parse_with(const char *doc, char **argv, struct cl_policy *p, cl_error *err)
{
	struct cl_bwrap b = {.p = p};
	FILE *f = fopen(policy_path, "w");
	int argc = 0;

	if (!f)
		return -1;
	fputs(doc, f);
	fclose(f);
	while (argv[argc])
		argc++;
	memset(err, 0, sizeof(*err));
	setenv(CL_BWRAP_POLICY_ENV, policy_path, 1);
	return cl_bwrap_parse(&b, argc, argv, err);
}

static void test_tightens(void)
{
	struct cl_policy p;
	cl_error err;
	char *av[] = {"bwrap", "--memory", "32m", "--cpus", "4", "--pids", "1000", "--cap-add", "ALL",
	              "--ro-bind", "/", "/", "true", NULL};
	int rc = parse_with("{\"memory\":\"64m\",\"cpus\":1,\"pids\":100,\"timeout\":\"2.5\","
	                    "\"output_limit\":\"1k\",\"seccomp\":\"default\",\"new_session\":true,"
	                    "\"drop_capabilities\":true,\"proc_masks\":true}", av, &p, &err);

	CHECK("policy parses", rc == 0);
	CHECK("the argv's smaller memory stays", p.limits.memory == 32ULL << 20);
	CHECK("the policy's smaller cpu quota wins (1 cpu, not 4)",
	      p.limits.cpu_period_us && p.limits.cpu_quota_us == p.limits.cpu_period_us);
	CHECK("the policy's smaller pids limit wins, RLIMIT_NPROC too",
	      p.limits.pids == 100 && p.rlimit_nproc == 100);
	CHECK("timeout in ms, with a pid namespace of its own",
	      p.timeout_ms == 2500 && (p.ns_flags & CLONE_NEWPID) && !p.hooks.as_pid_1);
	CHECK("output limit", p.output_limit == 1024);
	CHECK("default seccomp profile", p.seccomp == CL_SC_DEFAULT);
	CHECK("new session", p.new_session);
	CHECK("capabilities dropped despite --cap-add ALL",
	      p.caps_keep == 0 && !p.hooks.caps_keep_current && !p.hooks.caps_keep_bounding);
	CHECK("proc masks", p.hooks.proc_masks && p.hooks.bwrap_mounts);
	cl_policy_free(&p);
}

static void test_argv_stricter_timeout_kept(void)
{
	struct cl_policy p;
	cl_error err;
	char *av[] = {"bwrap", "--timeout", "1", "--ro-bind", "/", "/", "true", NULL};
	int rc = parse_with("{\"timeout\":60,\"seccomp\":\"unconfined\"}", av, &p, &err);

	CHECK("argv's shorter timeout stays", rc == 0 && p.timeout_ms == 1000);
	CHECK("\"unconfined\" adds no filter", p.seccomp == CL_SC_UNCONFINED);
	CHECK("keys not given change nothing", !p.new_session && !p.hooks.proc_masks &&
	      p.limits.memory == 0);
	cl_policy_free(&p);
}

static void test_pidns_conflict(void)
{
	struct cl_policy p;
	cl_error err;
	char *av[] = {"bwrap", "--pidns", "0", "--ro-bind", "/", "/", "true", NULL};
	int rc = parse_with("{\"timeout\":5}", av, &p, &err);

	CHECK("timeout with --pidns refused", rc < 0 && strstr(err.msg, "--pidns joins"));
	cl_policy_free(&p);
}

int main(void)
{
	int fd;

	snprintf(policy_path, sizeof(policy_path), "/tmp/cl-unit-policy.XXXXXX");
	fd = mkstemp(policy_path);
	if (fd < 0)
		return 2;
	close(fd);
	test_tightens();
	test_argv_stricter_timeout_kept();
	test_pidns_conflict();
	unlink(policy_path);
	UNIT_MAIN_END;
}
