/* The workspace around one native run: prepare (state dirs, overlay
 * mount), run, capture (only once every sandbox process is gone), clean. */
#define _GNU_SOURCE
#include "src/workspace/run.h"

#include <jansson.h>

#include "src/executor.h"
#include "src/workspace/capture.h"
#include "src/workspace/output.h"
#include "src/workspace/state.h"

int ws_run_native(struct cl_policy *p, struct cl_status *st, bool *after, cl_error *err)
{
#if !CL_NATIVE
	*after = false;
	return cl_fail(err, 0, "--workspace needs the native runtime, which this build does not "
	               "have (built with NATIVE=0)");
#else
	struct ws_run w;
	json_t *bundle = NULL;
	enum ws_fail why;
	int rc;

	*after = false;
	if (!p->workspace)
		return cl_executor_run(&cl_native_executor, p, st, err);
	/* The overlay is mounted by the native launch: docker and codeplane
	 * have no workspace yet, and must not run without one silently. */
	if (p->runtime == CL_RT_DOCKER || p->runtime == CL_RT_CODEPLANE)
		return cl_fail(err, 0, "--workspace needs the native runtime (--runtime %s has no "
		               "workspace overlay)", p->runtime == CL_RT_DOCKER ? "docker" : "codeplane");
	if ((rc = ws_run_prepare(p, &w, p->ws_snapshot, err)) < 0)
		return rc;
	rc = cl_executor_run(&cl_native_executor, p, st, err);
	/* The executor returns once the sandbox's pid namespace is gone:
	 * nothing writes the upper dir any more. */
	if (rc == 0 && p->diff_out) {
		*after = true;
		rc = ws_capture(w.lower_fd, w.upper_fd, w.copy, NULL, 1, &bundle, &why, err);
		if (rc == 0)
			rc = ws_bundle_write(bundle, p->diff_out, err);
		if (rc < 0)
			cl_wrap(err, "--workspace %s: capturing the diff", w.dir);
		json_decref(bundle);
	}
	ws_run_cleanup(&w);
	return rc;
#endif
}
