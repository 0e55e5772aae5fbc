/* The provider protocol: request JSON in, result JSON out (stdout or the
 * result file), and an inline result written as a bundle into result/. */
#define _GNU_SOURCE
#include "src/sandbox/provider.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/fdio.h"
#include "src/sandbox/bundle.h"
#include "src/sandbox/egress.h"
#include <sys/stat.h>

#include "src/util/fsafe.h"
#include "src/sandbox/spec.h"

json_t *sb_provider_request(const struct sb_spec *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "runId", json_string(s->run_id));
	json_object_set_new(o, "sandboxId", json_string(s->sandbox_id));
	json_object_set_new(o, "input", s->input ? json_incref(s->input) : json_null());
	json_object_set_new(o, "config", s->config ? sb_redact_keys(s->config) : json_object());
	json_object_set_new(o, "allowNetwork", json_boolean(s->allow_network));
	json_object_set_new(o, "maxOutputBytes", json_integer((json_int_t)s->max_output_bytes));
	if (s->egress.present)
		json_object_set_new(o, "egress", sb_egress_redacted(&s->egress));
	return o;
}

int sb_provider_parse_result(const char *raw, const char *remote_id, const char *result_path,
                             const struct sb_secrets *secrets, json_t **out, struct sb_error *e)
{
	const char *s = raw ? raw : "", *end;
	json_error_t jerr;
	json_t *r;

	while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\n' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (s == end)
		return sb_fail(e, SB_EXECUTION_FAILED, 0, json_pack("{s:s,s:s}", "provider", "cloister", "remoteId", remote_id),
		               "Sandbox produced no result JSON: the runner must write result JSON to %s "
		               "(via SMITHERS_SANDBOX_RESULT_PATH) or print it to stdout.", result_path);
	r = json_loadb(s, (size_t)(end - s), JSON_DECODE_ANY, &jerr);
	if (!r) {
		char raw_head[501];
		cl_autofree char *scrubbed = NULL;
		snprintf(raw_head, sizeof(raw_head), "%.*s", (int)(end - s), s);
		scrubbed = sb_scrub(secrets, raw_head);
		return sb_fail(e, SB_EXECUTION_FAILED, 0, json_pack("{s:s,s:s}", "provider", "cloister", "remoteId", remote_id),
		               "Sandbox produced invalid result JSON: %s. Raw output: %s", jerr.text,
		               scrubbed ? scrubbed : "");
	}
	if (!json_is_object(r)) {
		json_decref(r);
		return sb_fail(e, SB_EXECUTION_FAILED, 0, json_pack("{s:s,s:s}", "provider", "cloister", "remoteId", remote_id),
		               "Sandbox result JSON must be an object.");
	}
	if (json_object_get(r, "bundlePath") && json_object_get(r, "status")) {
		json_decref(r);
		return sb_fail(e, SB_EXECUTION_FAILED, 0, json_pack("{s:s,s:s}", "provider", "cloister", "remoteId", remote_id),
		               "Sandbox result JSON contains both bundlePath and status, which are mutually "
		               "exclusive: bundlePath is a diff-bundle passthrough result and status is an "
		               "inline result. The runner must return exactly one shape.");
	}
	if (!json_is_string(json_object_get(r, "remoteRunId")))
		json_object_set_new(r, "remoteRunId", json_is_string(json_object_get(r, "runId"))
		                    ? json_incref(json_object_get(r, "runId")) : json_string(remote_id));
	if (!json_is_string(json_object_get(r, "workspaceId")))
		json_object_set_new(r, "workspaceId", json_string(remote_id));
	if (!json_is_string(json_object_get(r, "containerId")))
		json_object_set_new(r, "containerId", json_string(remote_id));
	*out = r;
	return 0;
}

/* An inside path of the result bundle -> the same path relative to result/
 * ("" for /result itself); anything else escapes. */
static int inside_result(const char *p, char *rel, size_t len, struct sb_error *e)
{
	char norm[PATH_MAX];

	if (!p || !*p)
		return sb_fail(e, SB_TOOL_PATH_INVALID, 0, NULL, "Path must be a string");
	if (p[0] == '/') {
		if (sb_path_normalize(p, norm, sizeof(norm)) < 0 || !sb_path_within(norm, "/result"))
			return sb_fail(e, SB_TOOL_PATH_ESCAPE, 0, json_pack("{s:s}", "path", p), "Path escapes sandbox root");
		snprintf(rel, len, "%s", norm[7] ? norm + 8 : "");
		return 0;
	}
	char joined[PATH_MAX + 16];
	if (snprintf(joined, sizeof(joined), "/result/%s", p) >= (int)sizeof(joined))
		return sb_fail(e, SB_TOOL_PATH_INVALID, 0, NULL, "Path is too long");
	return inside_result(joined, rel, len, e);
}

static int check_entries(json_t *arr, const char *field, struct sb_error *e)
{
	size_t i;
	json_t *it;

	if (!arr)
		return 0;
	if (!json_is_array(arr) || json_array_size(arr) > SB_MAX_PATCH_FILES)
		return sb_invalid(e, field, "%s must be an array of at most %d entries.", field, SB_MAX_PATCH_FILES);
	json_array_foreach(arr, i, it) {
		json_t *path = json_object_get(it, "path"), *content = json_object_get(it, "content");
		if (!json_is_string(path) || !json_is_string(content))
			return sb_invalid(e, field, "%s entries must be { path, content } strings.", field);
		if (sb_json_js_length(path) > SB_PATH_MAX)
			return sb_invalid(e, field, "%s path must be at most %d characters.", field, SB_PATH_MAX);
	}
	return 0;
}

static int write_entries(json_t *arr, int result_fd, json_t *paths, struct sb_error *e)
{
	size_t i;
	json_t *it;

	if (!arr)
		return 0;
	json_array_foreach(arr, i, it) {
		const char *path = json_string_value(json_object_get(it, "path"));
		json_t *content = json_object_get(it, "content");
		char rel[PATH_MAX];
		int rc;
		if ((rc = inside_result(path, rel, sizeof(rel), e)) < 0)
			return rc;
		if (!*rel)
			return sb_fail(e, SB_TOOL_PATH_INVALID, 0, NULL, "Path must be a string");
		rc = cl_write_at(result_fd, rel, json_string_value(content), json_string_length(content), 0644);
		if (rc == -ELOOP || rc == -EXDEV || rc == -EMLINK)
			return sb_fail(e, SB_TOOL_PATH_ESCAPE, 0, json_pack("{s:s}", "path", path),
			               "Path escapes sandbox root (via %s)", rc == -EMLINK ? "hard link" : "symlink");
		if (rc < 0)
			return sb_fail(e, SB_EXECUTION_FAILED, -rc, NULL, "writing %s into the result bundle", path);
		if (paths)
			json_array_append_new(paths, json_string(path));
	}
	return 0;
}

static int copy_stream_log(const char *inside, int result_fd, struct sb_error *e)
{
	char rel[PATH_MAX];
	cl_autoclose int fd = -1;
	cl_autofree char *data = NULL;
	size_t len;
	int rc;

	if ((rc = inside_result(inside, rel, sizeof(rel), e)) < 0)
		return rc;
	if (strcmp(rel, "logs/stream.ndjson") == 0)
		return 0;
	/* Every component, not only the last: the sandbox wrote result/. */
	fd = cl_open_beneath(result_fd, rel, O_RDONLY | O_NONBLOCK);
	if (fd == -ELOOP || fd == -EXDEV)
		return sb_fail(e, SB_TOOL_PATH_ESCAPE, 0, NULL, "Path escapes sandbox root (via symlink)");
	if (fd < 0)
		return 0;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;   /* only a regular file is a stream log */
	rc = cl_read_all(fd, SB_MAX_BUNDLE_BYTES, &data, &len);
	if (rc < 0)
		return sb_fail(e, SB_INVALID_INPUT, -rc, NULL, "reading the stream log %s", inside);
	rc = cl_write_at(result_fd, "logs/stream.ndjson", data, len, 0644);
	return rc < 0 ? sb_fail(e, SB_TOOL_PATH_ESCAPE, -rc, NULL, "writing logs/stream.ndjson") : 0;
}

static int write_inline(json_t *r, const struct sb_layout *l, const struct sb_secrets *secrets,
                        struct sb_materialized *m, struct sb_error *e)
{
	json_t *patches = json_object_get(r, "patches"), *artifacts = json_object_get(r, "artifacts");
	json_t *output = json_object_get(r, "outputs"), *readme, *names;
	const char *rid = m->remote_run_id;
	cl_autofree char *text = NULL;
	size_t i;
	json_t *it;
	int rc;

	if (!output)
		output = json_object_get(r, "output");
	if (!json_is_array(patches))
		patches = NULL;
	if (!json_is_array(artifacts))
		artifacts = NULL;
	if (rid && strlen(rid) > SB_ID_MAX)
		return sb_invalid(e, "runId", "runId must be at most %d characters.", SB_ID_MAX);
	if ((rc = check_entries(patches, "patches", e)) < 0 || (rc = check_entries(artifacts, "artifacts", e)) < 0 ||
	    (rc = sb_json_within_bounds(output, "output", e)) < 0)
		return rc;
	m->artifacts = json_array();
	if ((rc = write_entries(patches, l->result_fd, NULL, e)) < 0 ||
	    (rc = write_entries(artifacts, l->result_fd, m->artifacts, e)) < 0)
		return rc;
	if (json_is_string(json_object_get(r, "streamLogPath")) &&
	    (rc = copy_stream_log(json_string_value(json_object_get(r, "streamLogPath")), l->result_fd, e)) < 0)
		return rc;
	names = json_array();
	if (patches)
		json_array_foreach(patches, i, it)
			json_array_append(names, json_object_get(it, "path"));
	readme = json_object();
	if (output)
		json_object_set(readme, "outputs", output);
	json_object_set(readme, "status", json_object_get(r, "status"));
	if (rid)
		json_object_set_new(readme, "runId", json_string(rid));
	json_object_set_new(readme, "patches", names);
	if (json_object_get(r, "diffBundle"))
		json_object_set(readme, "diffBundle", json_object_get(r, "diffBundle"));
	{
		/* cloister writes this file: no secret value goes into it. */
		char *raw = json_dumps(readme, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		text = raw ? sb_scrub(secrets, raw) : NULL;
		free(raw);
	}
	json_decref(readme);
	if (!text)
		return sb_fail(e, SB_EXECUTION_FAILED, ENOMEM, NULL, "writing README.md");
	rc = cl_write_at(l->result_fd, "README.md", text, strlen(text), 0644);
	if (rc == -ELOOP || rc == -EINVAL)
		return sb_fail(e, SB_TOOL_PATH_ESCAPE, 0, NULL, "Sandbox bundle README.md may not be a symlink.");
	if (rc == -EMLINK)
		return sb_fail(e, SB_TOOL_PATH_ESCAPE, 0, NULL, "Sandbox bundle README.md may not be a hard link.");
	if (rc < 0)
		return sb_fail(e, SB_EXECUTION_FAILED, -rc, NULL, "writing the result README.md");
	return 0;
}

int sb_provider_materialize(json_t *r, const struct sb_layout *l, const struct sb_secrets *secrets,
                            struct sb_materialized *m, struct sb_error *e)
{
	json_t *bp = json_object_get(r, "bundlePath"), *status = json_object_get(r, "status");
	const char *st = json_string_value(status);

	memset(m, 0, sizeof(*m));
	m->remote_run_id = json_string_value(json_object_get(r, "remoteRunId"));
	m->workspace_id = json_string_value(json_object_get(r, "workspaceId"));
	m->container_id = json_string_value(json_object_get(r, "containerId"));
	if (json_is_string(bp) && json_string_length(bp) > 0) {
		char rel[PATH_MAX / 2];
		int rc = inside_result(json_string_value(bp), rel, sizeof(rel), e);
		if (rc < 0)
			return rc;
		snprintf(m->bundle_path, sizeof(m->bundle_path), "%s%s%s", l->result, *rel ? "/" : "", rel);
		snprintf(m->bundle_rel, sizeof(m->bundle_rel), "%s", rel);
		m->passthrough = true;
		return 0;
	}
	if (!st || (strcmp(st, "finished") != 0 && strcmp(st, "failed") != 0 && strcmp(st, "cancelled") != 0))
		return sb_fail(e, SB_EXECUTION_FAILED, 0, json_pack("{s:O?}", "status", status),
		               "Sandbox provider result must include either bundlePath or status.");
	snprintf(m->bundle_path, sizeof(m->bundle_path), "%s", l->result);
	return write_inline(r, l, secrets, m, e);
}
