/* Runtime resolution: which executor runs a policy, and the fallbacks the
 * issue fixes (auto tries native first at no extra cost; docker without a
 * daemon becomes native with a warning; native never falls back). */
#define _GNU_SOURCE
#include "src/policy/runtime.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "src/policy/executor.h"

static const char *const names[] = {
	[CL_RT_AUTO] = "auto", [CL_RT_NATIVE] = "native",
	[CL_RT_DOCKER] = "docker", [CL_RT_CODEPLANE] = "codeplane",
};

int cl_runtime_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (strcmp(name, names[i]) == 0)
			return (int)i;
	return -1;
}

const char *cl_runtime_name(int rt)
{
	return rt >= 0 && rt < (int)(sizeof(names) / sizeof(*names)) ? names[rt] : "?";
}

int cl_executor_run(const struct cl_executor *x, const struct cl_policy *p,
                    struct cl_status *st, cl_error *err)
{
	void *state = NULL;
	int rc = 0;

	/* Named before create: a run this executor could not even create
	 * (a missing image) is still reported as its. */
	st->runtime = x->name;
	if (x->create)
		rc = x->create(p, &state, err);
	if (rc < 0)
		return rc;
	if (x->ship)
		rc = x->ship(state, p, err);
	if (rc == 0)
		rc = x->execute(state, p, st, err);
	/* Collect even after a timeout or cancel: OOM and exit state are read
	 * before cleanup removes the sandbox they live in. */
	if (rc == 0 && x->collect)
		rc = x->collect(state, p, st, err);
	if (x->cleanup)
		x->cleanup(state);
	return rc;
}

static int run_native(const struct cl_policy *p, struct cl_status *st, cl_error *err)
{
#if CL_NATIVE
	return cl_executor_run(&cl_native_executor, p, st, err);
#else
	(void)p;
	(void)st;
	return cl_fail(err, 0, "the native runtime is not part of this build (built with "
	               "NATIVE=0); use --runtime docker or codeplane");
#endif
}

static void reason(char *buf, size_t len, const cl_error *e)
{
	cl_error_format(e, buf, len);
}

static int run_docker_or_native(const struct cl_policy *p, struct cl_status *st, cl_error *err)
{
	cl_error why = {0};
	char msg[200];

	if (cl_docker_executor.available(p, &why) == 0)
		return cl_executor_run(&cl_docker_executor, p, st, err);
	reason(msg, sizeof(msg), &why);
	/* Published ports with the network allowed exist only on docker. */
	if (p->n_ports && !(p->ns_flags & CLONE_NEWNET))
		return cl_fail(err, 0, "--runtime docker: %s; native cannot publish ports with the "
		               "network allowed, so there is no fallback", msg);
#if !CL_NATIVE
	return cl_fail(err, 0, "--runtime docker: %s; this build has no native runtime to fall "
	               "back to (NATIVE=0)", msg);
#endif
	/* Smithers' behaviour: an explicit docker request with no daemon runs
	 * natively, said out loud and recorded in the status. */
	fprintf(stderr, "cloister: warning: --runtime docker: %s; running on the native "
	        "runtime instead\n", msg);
	snprintf(st->fallback, sizeof(st->fallback), "docker unavailable (%s): ran native", msg);
	return run_native(p, st, err);
}

/* auto: native first. Its probe is the launch itself (no check on the
 * fast path): only CL_ERR_NO_NAMESPACES, returned before anything of the
 * sandbox exists, moves on to docker, then codeplane. */
static int run_auto(const struct cl_policy *p, struct cl_status *st, cl_error *err)
{
	char why_native[200], why_docker[200], why_cp[160];
	cl_error e = {0};
#if CL_NATIVE
	int rc = run_native(p, st, err);

	if (rc != CL_ERR_NO_NAMESPACES)
		return rc;
#else
	run_native(p, st, err);   /* only says why not */
#endif
	reason(why_native, sizeof(why_native), err);
	if (cl_docker_executor.available(p, &e) == 0) {
		snprintf(st->fallback, sizeof(st->fallback), "native unavailable (%s): ran docker",
		         why_native);
		/* A NATIVE=0 build has only docker and codeplane: no news. */
		if (CL_NATIVE)
			fprintf(stderr, "cloister: note: native runtime unavailable (%s); using docker\n",
			        why_native);
		memset(err, 0, sizeof(*err));
		return cl_executor_run(&cl_docker_executor, p, st, err);
	}
	reason(why_docker, sizeof(why_docker), &e);
	memset(&e, 0, sizeof(e));
	if (cl_codeplane_executor.available(p, &e) == 0) {
		snprintf(st->fallback, sizeof(st->fallback), "native unavailable (%.90s), docker "
		         "unavailable (%.90s): ran codeplane", why_native, why_docker);
		fprintf(stderr, "cloister: note: native and docker unavailable; using codeplane\n");
		memset(err, 0, sizeof(*err));
		return cl_executor_run(&cl_codeplane_executor, p, st, err);
	}
	reason(why_cp, sizeof(why_cp), &e);
	return cl_fail(err, 0, "no runtime can run this sandbox: native: %s; docker: %s; "
	               "codeplane: %s", why_native, why_docker, why_cp);
}

int cl_runtime_run(const struct cl_policy *p, struct cl_status *st, cl_error *err)
{
	cl_error e = {0};
	char msg[200];

	switch (p->runtime) {
	case CL_RT_NATIVE:
		return run_native(p, st, err);
	case CL_RT_DOCKER:
		return run_docker_or_native(p, st, err);
	case CL_RT_CODEPLANE:
		/* Explicit: no fallback (the caller asked for a remote machine). */
		if (cl_codeplane_executor.available(p, &e) < 0) {
			reason(msg, sizeof(msg), &e);
			return cl_fail(err, 0, "--runtime codeplane: %s", msg);
		}
		return cl_executor_run(&cl_codeplane_executor, p, st, err);
	case CL_RT_AUTO:
		break;
	}
	return run_auto(p, st, err);
}
