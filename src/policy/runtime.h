/* Which executor runs a policy (--runtime auto|native|docker|codeplane). */
#ifndef CL_RUNTIME_H
#define CL_RUNTIME_H

#include "src/util/error.h"
#include "src/policy/policy.h"
#include "src/policy/status.h"

/* Resolves p->runtime and runs p. auto: native, and when the host forbids
 * its namespaces, docker if a daemon answers, else codeplane if configured,
 * else an error naming why each was unusable. docker with no daemon: a
 * warning, st->fallback set, and native. native never falls back. */
int cl_runtime_run(const struct cl_policy *p, struct cl_status *st, cl_error *err);
/* "auto", "native", ... and back; -1 for an unknown name. */
int cl_runtime_parse(const char *name);
const char *cl_runtime_name(int rt);

#endif
