/* The workspace around one native run: prepare (state dirs, overlay
 * mount), run, capture (only once every sandbox process is gone), clean. */
#define _GNU_SOURCE
#include "src/workspace/run.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "src/util/cleanup.h"

#include "src/policy/executor.h"
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
	json_t *bundle = NULL, *skipped = NULL;
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
		rc = ws_capture(w.lower_fd, w.upper_fd, w.copy, NULL, w.git_ignore, 1, &bundle, &skipped, &why, err);
		if (rc == 0) {
			char what[sizeof(w.dir) + 16];
			snprintf(what, sizeof(what), "--workspace %s", w.dir);
			ws_skipped_print(what, skipped);
			st->ws_skipped = json_incref(skipped);
		}
		json_decref(skipped);
		if (rc == 0)
			rc = ws_bundle_write(bundle, p->diff_out, err);
		/* Nothing of the run's work is lost: its changes stay (the
		 * caller prints err after the line saying where). */
		if (rc < 0) {
			cl_wrap(err, "--workspace %s: capturing the diff", w.dir);
			ws_run_keep_report(&w, NULL, p->diff_out);
		}
		json_decref(bundle);
	}
	ws_run_cleanup(&w);
	return rc;
#endif
}

static int read_kept(int kfd, const char *kept, const char *name, char *buf, size_t len, cl_error *err)
{
	int rc = ws_read_small(kfd, name, buf, len);

	if (rc < 0)
		return cl_fail(err, -rc, "%s: reading %s (is it a dir a failed capture kept?)", kept, name);
	return 0;
}

int ws_kept_capture(const char *kept, const char *file, cl_error *err)
{
	cl_autoclose int kfd = open(kept, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cl_autoclose int lower = -1;
	cl_autoclose int upper = -1;
	char low[4400], mode[16], skip[64], seq[32], ign[16] = "git";
	json_t *bundle = NULL, *skipped = NULL;
	enum ws_fail why;
	int rc;

	if (kfd < 0)
		return cl_fail_errno(err, "%s", kept);
	/* Shared: gc (exclusive, non-blocking) leaves it while this reads. */
	if (flock(kfd, LOCK_SH | LOCK_NB) < 0)
		return cl_fail_errno(err, "%s: locking it (a run or gc holds it)", kept);
	if ((rc = read_kept(kfd, kept, "kept-lower", low, sizeof(low), err)) < 0 ||
	    (rc = read_kept(kfd, kept, "kept-mode", mode, sizeof(mode), err)) < 0 ||
	    (rc = read_kept(kfd, kept, "kept-skip", skip, sizeof(skip), err)) < 0 ||
	    (rc = read_kept(kfd, kept, "kept-seq", seq, sizeof(seq), err)) < 0)
		return rc;
	/* Kept before the option existed: the default then, git's rules. */
	if ((rc = ws_read_small(kfd, "kept-ignore", ign, sizeof(ign))) < 0 && rc != -ENOENT)
		return cl_fail(err, -rc, "%s: reading kept-ignore", kept);
	if ((lower = open(low, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return cl_fail_errno(err, "%s: opening its base %s", kept, low);
	if ((upper = openat(kfd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return cl_fail_errno(err, "%s: opening its upper dir", kept);
	rc = ws_capture(lower, upper, !strcmp(mode, "copy"), skip[0] ? skip : NULL, strcmp(ign, "none") != 0, strtoull(seq, NULL, 10),
	                &bundle, &skipped, &why, err);
	if (rc == 0)
		ws_skipped_print(kept, skipped);
	if (rc == 0)
		rc = ws_bundle_write(bundle, file, err);
	json_decref(bundle);
	json_decref(skipped);
	if (rc < 0)
		cl_wrap(err, "capturing %s", kept);
	return rc;
}
