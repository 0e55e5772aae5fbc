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
	struct ws_run w;
	json_t *bundle = NULL;
	enum ws_fail why;
	int rc;

	*after = false;
	if (!p->workspace)
		return cl_native_executor.run(p, st, err);
	if ((rc = ws_run_prepare(p, &w, err)) < 0)
		return rc;
	rc = cl_native_executor.run(p, st, err);
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
}
