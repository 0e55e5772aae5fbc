/* The executor interface: every runtime (native, docker, codeplane) runs the
 * same validated policy and fills the same status. */
#ifndef CL_EXECUTOR_H
#define CL_EXECUTOR_H

#include "src/error.h"
#include "src/policy.h"
#include "src/status.h"

struct cl_executor {
	const char *name;
	/* 0 if this executor can run p here, else err says why not. */
	int (*available)(const struct cl_policy *p, cl_error *err);
	/* Runs p to completion. Returns 0 once the command ran (its outcome is
	 * in st), or a negative code when the sandbox could not be set up. */
	int (*run)(const struct cl_policy *p, struct cl_status *st, cl_error *err);
};

extern const struct cl_executor cl_native_executor;

#endif
