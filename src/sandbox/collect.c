/* collect: the result JSON becomes a validated bundle, the review gate
 * runs, and the stdout result is built from what was validated. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/fdio.h"
#include "src/sandbox/bundle.h"
#include "src/util/fsafe.h"
#include "src/sandbox/provider.h"
#include "src/sandbox/run_internal.h"
#include "src/policy/status.h"
#include "src/workspace/apply.h"
#include "src/workspace/capture.h"

static int count_diff_lines(const char *text)
{
	int n = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, "+++", 3) == 0 || strncmp(l, "---", 3) == 0)
			continue;
		if (*l == '+' || *l == '-')
			n++;
	}
	return n;
}

/* Lines of the patch files and of the diff bundle. The patch files are
 * opened beneath the bundle's dirfd (the sandbox wrote them: no name is
 * reopened, no symlink followed). A workspace's bundle is counted from its
 * parsed form (wb), the one apply writes from. */
static int diff_lines(const struct sb_bundle *b, int bfd, const json_t *db, const struct ws_bundle *wb)
{
	json_t *p;
	int total = 0;
	size_t i;

	for (size_t k = 0; bfd >= 0 && k < b->n_patch_files; k++) {
		cl_autoclose int fd = cl_open_beneath(bfd, b->patch_files[k], O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
		cl_autofree char *text = NULL;
		size_t len;
		if (fd >= 0 && cl_read_all(fd, SB_MAX_BUNDLE_BYTES, &text, &len) == 0)
			total += count_diff_lines(text);
	}
	for (i = 0; wb->json && i < wb->n; i++)
		total += (int)(wb->patches[i].added + wb->patches[i].removed);
	if (!wb->json)
		json_array_foreach(json_object_get(db, "patches"), i, p)
			if (json_is_string(json_object_get(p, "diff")))
				total += count_diff_lines(json_string_value(json_object_get(p, "diff")));
	return total;
}

static size_t bundle_patches(const json_t *db)
{
	return json_is_object(db) && json_is_array(json_object_get(db, "patches"))
	       ? json_array_size(json_object_get(db, "patches")) : 0;
}

/* A captured bundle that was not applied stays next to result/ for a
 * later `cloister diff apply`. */
static const char *keep_bundle(struct run *r, const json_t *cap, char *path, size_t len)
{
	cl_autofree char *text = cap ? json_dumps(cap, JSON_COMPACT) : NULL;

	if (!text || cl_write_at(r->l.root_fd, "diff-bundle.json", text, strlen(text), 0644) < 0)
		return NULL;
	snprintf(path, len, "%s/diff-bundle.json", r->l.root);
	return path;
}

static int review_gate(struct run *r, const struct sb_bundle *b, int bfd, const json_t *db,
                       const json_t *cap, const struct ws_bundle *wb, size_t patches, struct sb_error *e)
{
	char kept[PATH_MAX + 32];

	if (!r->s->review_diffs || patches == 0)
		return 0;
	sb_run_event(r, "SandboxDiffReviewRequested",
	      json_pack("{s:I,s:i}", "patchCount", (json_int_t)patches, "totalDiffLines", diff_lines(b, bfd, db, wb)));
	if (!r->s->auto_accept_diffs) {
		sb_run_event(r, "SandboxDiffRejected",
		      json_pack("{s:s}", "reason", "Diff review approval is required before applying sandbox patches."));
		return sb_fail(e, SB_INVALID_INPUT, 0,
		               json_pack("{s:s,s:I,s:s?}", "sandboxId", r->s->sandbox_id, "patchCount",
		                         (json_int_t)patches, "diffBundlePath", keep_bundle(r, cap, kept, sizeof(kept))),
		               "Sandbox produced changes that require review approval.");
	}
	sb_run_event(r, "SandboxDiffAccepted", json_pack("{s:I}", "patchCount", (json_int_t)patches));
	return 0;
}

/* The run's work is never lost with its capture: the changes stay in
 * the state dir, named in the error's details with the command that
 * captures them again. */
static int capture_failed(struct run *r, enum ws_fail why, const cl_error *err, struct sb_error *e)
{
	char kept[4400], cmd[4500];
	cl_error kerr = {0};
	bool ok = ws_run_keep(&r->ws, ".smithers", kept, sizeof(kept), &kerr) == 0;

	snprintf(cmd, sizeof(cmd), "cloister diff capture %s FILE", kept);
	return sb_fail(e, SB_EXECUTION_FAILED, 0,
	               json_pack("{s:s,s:s?,s:s?}", "reason", why == WS_FAIL_LIMIT ? "diff-bundle-limit" : "diff-capture",
	                         "keptChangesPath", ok ? kept : NULL, "recaptureCommand", ok ? cmd : NULL),
	               "Sandbox workspace changes could not be captured: %s; %s%s", err->msg,
	               ok ? "they are kept in " : "keeping them failed too: ", ok ? kept : kerr.msg);
}

/* Spec "workspace": the overlay's changes as this run's diff bundle,
 * parsed once into wb for the gate and the apply. */
static int capture(struct run *r, json_t **cap, struct ws_bundle *wb, struct sb_error *e)
{
	cl_error err = {0};
	enum ws_fail why;
	json_t *skipped = NULL;
	int rc;

	*cap = NULL;
	if (!r->has_ws)
		return 0;
	rc = ws_capture(r->ws.lower_fd, r->ws.upper_fd, r->ws.copy, ".smithers", r->ws.git_ignore, r->ws.seq, cap, &skipped,
	                &why, &err);
	/* The run's events name what the bundle left out (its stderr is the
	 * caller's JSON). */
	if (rc == 0 && json_array_size(skipped))
		sb_run_event(r, "SandboxWorkspaceSkipped", json_pack("{s:O}", "skipped", skipped));
	json_decref(skipped);
	if (rc == 0 && ws_bundle_read(*cap, "of the workspace", wb, &err) < 0) {
		json_decref(*cap);
		*cap = NULL;
		rc = -1;
		why = WS_FAIL_IO;
	}
	if (rc < 0)
		return capture_failed(r, why, &err, e);
	/* A sticky workspace's next bundle gets the next seq. */
	if (ws_sticky_commit_seq(&r->ws, &err) < 0)
		return sb_from_cl(e, SB_EXECUTION_FAILED, &err);
	return 0;
}

/* Accepted (or not reviewed): the captured bundle lands on rootDir, all
 * or nothing; a refusal keeps the bundle and names the paths. */
static int apply_accepted(struct run *r, const json_t *cap, const struct ws_bundle *wb, struct sb_error *e)
{
	char *report = NULL, kept[PATH_MAX + 32];
	size_t rlen = 0;
	FILE *f;
	cl_error err = {0};
	enum ws_apply_result res;
	int rc = 0;

	if (!cap || !wb->n || (r->s->review_diffs && !r->s->auto_accept_diffs))
		return 0;
	if (!(f = open_memstream(&report, &rlen)))
		return sb_fail(e, SB_EXECUTION_FAILED, ENOMEM, NULL, "applying the sandbox's diff");
	res = ws_apply(wb, r->s->root_dir, false, f, &err);
	fclose(f);
	if (res != WS_APPLIED)
		rc = sb_fail(e, SB_EXECUTION_FAILED, 0,
		             json_pack("{s:s,s:s?}", "sandboxId", r->s->sandbox_id, "diffBundlePath",
		                       keep_bundle(r, cap, kept, sizeof(kept))),
		             "Sandbox diff could not be applied to rootDir: %s",
		             res == WS_CONFLICT ? report : err.msg);
	free(report);
	return rc;
}

static json_t *ids(struct run *r, const struct sb_materialized *m)
{
	return json_pack("{s:s,s:s,s:s?,s:s?,s:s?}", "runId", r->s->run_id, "sandboxId", r->s->sandbox_id,
	                 "remoteRunId", m->remote_run_id, "workspaceId", m->workspace_id,
	                 "containerId", m->container_id);
}

static json_t *execution_json(const struct sb_exec_result *x)
{
	cl_autofree char *st = cl_status_to_json(&x->st);
	json_t *o = st ? json_loads(st, 0, NULL) : json_object();

	json_object_set_new(o, "stdout", json_string(x->out.data ? x->out.data : ""));
	json_object_set_new(o, "stderr", json_string(x->err.data ? x->err.data : ""));
	return o;
}

int sb_step_collect(struct run *r, const struct sb_exec_result *x, json_t *pres,
                        json_t **result, struct sb_error *e)
{
	struct sb_materialized m;
	struct sb_bundle b;
	size_t patches;
	json_t *out, *cap = NULL, *db;
	struct ws_bundle wb = {0};
	cl_autoclose int bfd = -1;
	int rc;

	if ((rc = sb_provider_materialize(pres, &r->l, r->secrets, &m, e)) < 0) {
		if (m.artifacts)
			json_decref(m.artifacts);
		return rc;
	}
	/* By fd beneath result/, never by name: the sandbox wrote the tree. */
	rc = sb_bundle_validate_at(r->l.result_fd, m.bundle_rel, m.bundle_path, &b, e);
	if (rc < 0) {
		if (m.artifacts)
			json_decref(m.artifacts);
		return rc;
	}
	/* A workspace's captured bundle is the run's diff bundle. */
	if ((rc = capture(r, &cap, &wb, e)) < 0) {
		if (m.artifacts)
			json_decref(m.artifacts);
		sb_bundle_free(&b);
		return rc;
	}
	db = cap ? cap : json_object_get(b.manifest, "diffBundle");
	bfd = cl_open_beneath(r->l.result_fd, m.bundle_rel, O_RDONLY | O_DIRECTORY);
	patches = b.n_patch_files + (cap ? wb.n : bundle_patches(db));
	sb_run_progress(r, "bundle-collected", 85, json_pack("{s:s,s:I}", "bundlePath", m.bundle_path,
	                                              "patchCount", (json_int_t)patches));
	sb_run_event(r, "SandboxBundleReceived",
	      json_pack("{s:I,s:I,s:b}", "bundleSizeBytes", (json_int_t)b.size_bytes, "patchCount",
	                (json_int_t)patches, "hasOutputs", json_object_get(b.manifest, "outputs") != NULL));
	rc = review_gate(r, &b, bfd, db, cap, &wb, patches, e);
	if (rc == 0)
		rc = apply_accepted(r, cap, &wb, e);
	if (rc == 0) {
		out = ids(r, &m);
		if (m.passthrough) {
			json_object_set_new(out, "bundlePath", json_string(m.bundle_path));
		} else {
			json_t *mp = json_object_get(b.manifest, "patches");
			char logs[PATH_MAX * 2 + 32];
			snprintf(logs, sizeof(logs), "%s/logs/stream.ndjson", m.bundle_path);
			json_object_set_new(out, "status", json_string(b.status));
			json_object_set(out, "output", json_object_get(b.manifest, "outputs")
			                ? json_object_get(b.manifest, "outputs") : json_null());
			if (db)
				json_object_set(out, "diffBundle", db);
			json_object_set_new(out, "patches", json_is_array(mp) ? json_incref(mp) : json_array());
			json_object_set_new(out, "artifacts", m.artifacts ? json_incref(m.artifacts) : json_array());
			json_object_set_new(out, "streamLogPath", b.has_logs ? json_string(logs) : json_null());
		}
		json_object_set_new(out, "execution", execution_json(x));
		sb_run_finish(r, b.status, json_pack("{s:s?,s:s?,s:s?,s:s}", "remoteRunId", m.remote_run_id,
		                             "workspaceId", m.workspace_id, "containerId", m.container_id,
		                             "bundlePath", m.bundle_path),
		              "SandboxCompleted",
		              json_pack("{s:s?,s:s,s:s,s:f}", "remoteRunId", m.remote_run_id, "runtime",
		                        r->s->runtime, "status", b.status, "durationMs",
		                        sb_run_mono_ms() - r->child_started));
		sb_run_progress(r, "completed", 100, json_pack("{s:s}", "status", b.status));
		*result = out;
	}
	if (m.artifacts)
		json_decref(m.artifacts);
	json_decref(cap);
	ws_bundle_free(&wb);
	sb_bundle_free(&b);
	return rc;
}

int sb_step_timed_out(struct run *r, const struct sb_exec_result *x, json_t **result, struct sb_error *e)
{
	static const char readme[] = "{\n  \"outputs\": {\"reason\": \"timeout\"},\n  \"status\": \"failed\"\n}\n";
	json_t *out;
	int rc;

	/* The runner's partial result is not trusted: the bundle says failed. */
	rc = cl_write_at(r->l.result_fd, "README.md", readme, sizeof(readme) - 1, 0644);
	if (rc == -ELOOP || rc == -EMLINK)
		return sb_fail(e, SB_TOOL_PATH_ESCAPE, 0, NULL, "Sandbox bundle README.md may not be a %s.",
		               rc == -ELOOP ? "symlink" : "hard link");
	if (rc < 0)
		return sb_fail(e, SB_EXECUTION_FAILED, -rc, NULL, "writing the failed result README.md");
	sb_fail(e, SB_EXECUTION_FAILED, 0, json_pack("{s:s,s:I}", "reason", "timeout", "toolTimeoutMs",
	                                             (json_int_t)r->s->tool_timeout_ms),
	        "Sandbox %s timed out after %llu ms.", r->s->sandbox_id,
	        (unsigned long long)r->s->tool_timeout_ms);
	out = json_pack("{s:s,s:s,s:s,s:s,s:n,s:[],s:[],s:n}", "status", "failed", "reason", "timeout",
	                "runId", r->s->run_id, "sandboxId", r->s->sandbox_id, "output", "patches",
	                "artifacts", "streamLogPath");
	json_object_set_new(out, "execution", execution_json(x));
	*result = out;
	return -ETIMEDOUT;
}

