/* The executor interface: every runtime (native, docker, codeplane) runs the
 * same validated policy through the same five stages and fills the same
 * status; src/policy/runtime.c picks one (--runtime, spec "runtime"). */
#ifndef CL_EXECUTOR_H
#define CL_EXECUTOR_H

#include "src/util/error.h"
#include "src/policy/policy.h"
#include "src/policy/status.h"

/* What native returns when the host will not let it create the sandbox's
 * namespaces (user namespaces forbidden or exhausted): the one failure
 * `--runtime auto` answers by trying the next executor. err says why. */
#define CL_ERR_NO_NAMESPACES (-4095)

/* Stages run in this order by cl_executor_run(); a NULL stage is skipped.
 * cleanup runs whenever create succeeded, whatever failed after it, and
 * must leave nothing behind (containers, workspaces, temp files). */
struct cl_executor {
	const char *name;
	/* 0 if this executor can run p here, else err says why not. Cheap:
	 * no sandbox is made. */
	int (*available)(const struct cl_policy *p, cl_error *err);
	/* Makes the sandbox (nothing runs yet); *state is the executor's own. */
	int (*create)(const struct cl_policy *p, void **state, cl_error *err);
	/* Puts the inputs (binds, request bundle) where the command sees them. */
	int (*ship)(void *state, const struct cl_policy *p, cl_error *err);
	/* Runs the command to completion. 0 once it ran (its outcome is in st),
	 * or a negative code when it could not be started. */
	int (*execute)(void *state, const struct cl_policy *p, struct cl_status *st, cl_error *err);
	/* Reads what the run left: OOM, peaks, results. */
	int (*collect)(void *state, const struct cl_policy *p, struct cl_status *st, cl_error *err);
	void (*cleanup)(void *state);
};

/* Runs p on x through every stage. */
int cl_executor_run(const struct cl_executor *x, const struct cl_policy *p,
                    struct cl_status *st, cl_error *err);

#if CL_NATIVE
extern const struct cl_executor cl_native_executor;
#endif
extern const struct cl_executor cl_docker_executor;
extern const struct cl_executor cl_codeplane_executor;

#endif
