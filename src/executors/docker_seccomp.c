/* The policy's seccomp choice as the text docker's seccomp= option takes:
 * the same resolved profile native compiles, rendered as Docker JSON. */
#define _GNU_SOURCE
#include "src/executors/docker_seccomp.h"

#include <errno.h>
#include <jansson.h>
#if CL_NATIVE
#include <seccomp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seccomp/guard.h"
#include "seccomp/profile.h"
#include "src/util/fdio.h"

#if CL_NATIVE
int cl_docker_seccomp(const struct cl_policy *p, char **out, cl_error *err)
{
	struct sc_context ctx = {.caps = p->caps_keep, .allow_nested = p->allow_nested};
	struct sc_profile prof = {.default_action = SCMP_ACT_ALLOW, .badarch_action = SCMP_ACT_ALLOW};
	json_t *j;
	int rc;

	*out = NULL;
	/* A root caller's container is host root (docker_body.c): the root
	 * guard goes into its profile, unconfined included (a profile of the
	 * guard alone). */
	if (p->seccomp == CL_SC_UNCONFINED && !cl_policy_root_guarded(p))
		return (*out = strdup("unconfined")) ? 0 : cl_fail(err, ENOMEM, "seccomp");
	if (p->seccomp == CL_SC_BPF)
		return cl_fail(err, 0, "--seccomp-bpf cannot be given to docker; use a JSON profile");
	rc = p->seccomp == CL_SC_UNCONFINED
	         ? 0
	         : sc_profile_load(p->seccomp == CL_SC_DEFAULT ? "default" : p->seccomp_path, &ctx,
	                           &prof, err);
	if (rc == 0)
		rc = sc_guard_fold(p, &prof, err);
	if (rc < 0) {
		sc_profile_free(&prof);
		return rc;
	}
	j = sc_profile_to_json(&prof);
	sc_profile_free(&prof);
	*out = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	return *out ? 0 : cl_fail(err, ENOMEM, "rendering the seccomp profile for docker");
}
#else
/* NATIVE=0 has no libseccomp to resolve profiles: a JSON profile is
 * checked to be JSON and handed to docker as it is (docker resolves it),
 * and "default" is docker's own default profile (docs/executors.md). */
int cl_docker_seccomp(const struct cl_policy *p, char **out, cl_error *err)
{
	json_error_t je;
	json_t *j;

	*out = NULL;
	if (p->seccomp == CL_SC_UNCONFINED)
		return (*out = strdup("unconfined")) ? 0 : cl_fail(err, ENOMEM, "seccomp");
	if (p->seccomp == CL_SC_BPF)
		return cl_fail(err, 0, "--seccomp-bpf cannot be given to docker; use a JSON profile");
	if (p->seccomp == CL_SC_DEFAULT)
		return 0;
	j = json_load_file(p->seccomp_path, JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(j)) {
		json_decref(j);
		return cl_fail(err, 0, "seccomp profile %s: not a JSON object (%s)", p->seccomp_path,
		               je.text);
	}
	*out = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return *out ? 0 : cl_fail(err, ENOMEM, "seccomp profile %s", p->seccomp_path);
}
#endif
