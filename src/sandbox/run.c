/* The lifecycle of one sandbox, in Smithers' order: admit, create, ship,
 * execute, collect (validate, review gate), complete or fail, cleanup. */
#define _GNU_SOURCE
#include "src/sandbox/run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/clock.h"
#include "src/util/fdio.h"
#include "src/policy/policy_json.h"
#include "src/sandbox/bundle.h"
#include "src/sandbox/egress.h"
#include "src/sandbox/exec.h"
#include "src/sandbox/fsafe.h"
#include "src/util/fsafe.h"
#include "src/sandbox/layout.h"
#include "src/sandbox/policy_build.h"
#include "src/sandbox/provider.h"
#include "src/sandbox/proxy.h"
#include "src/sandbox/run_internal.h"
#include "src/policy/status.h"
#include "src/workspace/snapshot.h"

void sb_run_progress(struct run *r, const char *stage, int pct, json_t *extra)
{
	json_t *o = json_pack("{s:s,s:s,s:i}", "sandboxId", r->s->sandbox_id, "stage", stage,
	                      "progress", pct);
	cl_autofree char *line = NULL;

	if (extra) {
		json_object_update(o, extra);
		json_decref(extra);
	}
	if (r->o->progress_fd >= 0 && (line = sb_dumps_scrubbed(r->secrets, o))) {
		size_t n = strlen(line);
		sigset_t pipe_set, old_set;
		struct timespec zero = {0, 0};
		/* Heartbeats are advisory: a reader that went away must not stop
		 * the run. SIGPIPE is blocked around the write and a pending one
		 * consumed, rather than ignored (an ignored SIGPIPE would be
		 * inherited by the command). */
		sigemptyset(&pipe_set);
		sigaddset(&pipe_set, SIGPIPE);
		sigprocmask(SIG_BLOCK, &pipe_set, &old_set);
		line[n] = '\n';
		if (cl_write_all(r->o->progress_fd, line, n + 1) == -EPIPE)
			sigtimedwait(&pipe_set, NULL, &zero);
		line[n] = '\0';
		sigprocmask(SIG_SETMASK, &old_set, NULL);
	}
	json_decref(o);
}

/* The text of event type: payload's fields (stolen) plus the common ones,
 * scrubbed of secrets; NULL when there is no memory. */
static char *event_text(struct run *r, const char *type, json_t *payload)
{
	char *text;

	json_object_set_new(payload, "type", json_string(type));
	json_object_set_new(payload, "runId", json_string(r->s->run_id));
	json_object_set_new(payload, "sandboxId", json_string(r->s->sandbox_id));
	json_object_set_new(payload, "timestampMs", json_integer(cl_wall_ms()));
	text = sb_dumps_scrubbed(r->secrets, payload);
	json_decref(payload);
	return text;
}

void sb_run_event(struct run *r, const char *type, json_t *payload)
{
	cl_autofree char *text = event_text(r, type, payload);

	if (text && r->o->store && r->o->store->event)
		r->o->store->event(r->o->store->ctx, r->s, type, text);
}

void sb_run_update(struct run *r, const char *status, json_t *fields)
{
	if (r->o->store && r->o->store->update)
		r->o->store->update(r->o->store->ctx, r->s, status, fields, NULL, NULL);
	if (fields)
		json_decref(fields);
}

void sb_run_finish(struct run *r, const char *status, json_t *fields, const char *type, json_t *payload)
{
	cl_autofree char *text = event_text(r, type, payload);

	if (r->o->store && r->o->store->update)
		r->o->store->update(r->o->store->ctx, r->s, status, fields, text ? type : NULL, text);
	if (fields)
		json_decref(fields);
}

int sb_collect_secrets(const struct sb_spec *s, struct sb_secrets *out)
{
	const struct sb_egress *eg = &s->egress;
	const char *k;
	json_t *v;
	int rc = 0;

	if (s->env)
		json_object_foreach(s->env, k, v)
			if (sb_key_is_secret(k))
				rc = rc ? rc : sb_secrets_add(out, json_string_value(v));
	if (eg->env)
		json_object_foreach(eg->env, k, v)
			rc = rc ? rc : sb_secrets_add(out, json_string_value(v));
	if (eg->secret_bindings)
		json_object_foreach(eg->secret_bindings, k, v)
			rc = rc ? rc : sb_secrets_add(out, json_string_value(v));
	if (eg->http_proxy)
		rc = rc ? rc : sb_secrets_add(out, eg->http_proxy);
	if (eg->https_proxy)
		rc = rc ? rc : sb_secrets_add(out, eg->https_proxy);
	return rc;
}

char *sb_config_json(const struct sb_spec *s, const struct sb_secrets *secrets)
{
	json_t *c = sb_redact_keys(s->root), *env = json_object();
	const char *k;
	json_t *v;
	char *out;

	if (s->env) {
		json_object_foreach(s->env, k, v)
			json_object_set_new(env, k, json_string("[redacted]"));
		json_object_set_new(c, "env", env);
	} else {
		json_decref(env);
	}
	if (s->egress.present)
		json_object_set_new(c, "egress", sb_egress_redacted(&s->egress));
	json_object_set_new(c, "selectedRuntime", json_string(s->runtime));
	out = sb_dumps_scrubbed(secrets, c);
	json_decref(c);
	return out;
}

/* ---- create ---- */
static int step_create(struct run *r, struct sb_error *e)
{
	int rc = sb_layout_create(&r->l, e);

	if (rc < 0)
		return rc;
	/* The writable result file the protocol names, bound over a
	 * placeholder in the read-only request. */
	rc = cl_write_at(r->l.tmp_fd, "sandbox-result.json", "", 0, 0666);
	if (rc == 0)
		rc = cl_write_at(r->l.tmp_fd, "empty-profile", "", 0, 0644);
	if (rc < 0)
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, -rc, NULL, "creating %s", r->l.result_file);
	return 0;
}

/* ---- ship ---- */
static int write_request_files(struct run *r, struct sb_error *e)
{
	json_t *req = sb_provider_request(r->s);
	cl_autofree char *text = sb_dumps_scrubbed(r->secrets, req);
	int rc;

	json_decref(req);
	if (!text)
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, ENOMEM, NULL, "writing the request file");
	if ((rc = cl_write_at(r->l.request_fd, SB_REQUEST_FILE, text, strlen(text), 0644)) < 0 ||
	    (rc = cl_write_at(r->l.request_fd, SB_RESULT_FILE, "", 0, 0644)) < 0)
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, -rc, NULL, "writing %s/.smithers", r->l.request);
	if (r->s->egress.ca_pem &&
	    (rc = cl_write_at(r->l.request_fd, SB_EGRESS_CA_RELATIVE, r->s->egress.ca_pem,
	                      strlen(r->s->egress.ca_pem), 0644)) < 0)
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, -rc, NULL, "writing the egress CA");
	return 0;
}

static int step_ship(struct run *r, uint64_t *bytes, struct sb_error *e)
{
	int rc;

	*bytes = 0;
	if (r->s->request_bundle && (rc = sb_copy_tree(r->s->request_bundle, r->l.request_fd, bytes, e)) < 0)
		return rc;
	if (!r->s->request_bundle) {
		json_t *readme = json_pack("{s:s,s:s,s:s,s:s,s:O}", "status", "pending", "sandboxId",
		                           r->s->sandbox_id, "provider", r->s->runtime, "runtime", r->s->runtime,
		                           "input", r->s->input ? r->s->input : json_object());
		cl_autofree char *text = json_dumps(readme, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		json_decref(readme);
		if (!text)
			return sb_fail(e, SB_PROCESS_SPAWN_FAILED, ENOMEM, NULL, "writing the request README.md");
		rc = cl_write_at(r->l.request_fd, "README.md", text, strlen(text), 0644);
		if (rc < 0)
			return sb_fail(e, SB_PROCESS_SPAWN_FAILED, -rc, NULL, "writing the request README.md");
		*bytes = strlen(text);
	}
	return write_request_files(r, e);
}

/* ---- execute ---- */
static json_t *protocol_env(struct run *r, const struct sb_proxy_plan *pl)
{
	json_t *env = sb_egress_env(&r->s->egress, pl->http, pl->https);
	char id[SB_ID_MAX * 2 + 2];

	json_object_set_new(env, "SMITHERS_SANDBOX_REQUEST_PATH", json_string(SB_REQUEST_INSIDE));
	json_object_set_new(env, "SMITHERS_SANDBOX_RESULT_PATH", json_string(SB_RESULT_INSIDE));
	/* Lets a cloister started inside know it is nested. */
	snprintf(id, sizeof(id), "%s/%s", r->s->run_id, r->s->sandbox_id);
	json_object_set_new(env, "CLOISTER_SANDBOX", json_string(id));
	return env;
}

static int read_result_file(struct run *r, char **out, struct sb_error *e)
{
	cl_autoclose int fd = openat(r->l.tmp_fd, "sandbox-result.json",
	                             O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	size_t len;
	int rc;

	if (fd < 0)
		return sb_fail(e, SB_EXECUTION_FAILED, errno, NULL, "reading %s", SB_RESULT_INSIDE);
	rc = cl_read_all(fd, SB_MAX_README_BYTES, out, &len);
	if (rc < 0)
		return sb_fail(e, SB_EXECUTION_FAILED, -rc, NULL, "reading %s", SB_RESULT_INSIDE);
	return 0;
}

/* Policy plus the egress relays a network-less sandbox needs to reach
 * its proxies (the rewritten URLs carry the same credentials: secrets). */
static int build(struct run *r, struct cl_policy *p, struct sb_error *e)
{
	struct sb_proxy_plan pl;
	json_t *env;
	cl_error err = {0};
	int rc;

	cl_policy_init(p);
	rc = sb_proxy_plan(r->s->egress.http_proxy, r->s->egress.https_proxy, r->s->allow_network, &pl, e);
	if (rc < 0)
		return rc;
	if ((pl.http && sb_secrets_add(r->secrets, pl.http) < 0) ||
	    (pl.https && sb_secrets_add(r->secrets, pl.https) < 0)) {
		sb_proxy_plan_free(&pl);
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, ENOMEM, NULL, "egress");
	}
	env = protocol_env(r, &pl);
	rc = sb_build_policy(r->s, &r->l, env, p, e);
	json_decref(env);
	for (int i = 0; rc == 0 && i < pl.n_fw; i++) {
		char fw[320];
		snprintf(fw, sizeof(fw), "%u:%s%s%s:%u", pl.fw[i].inside_port, strchr(pl.fw[i].host, ':') ? "[" : "",
		         pl.fw[i].host, strchr(pl.fw[i].host, ':') ? "]" : "", pl.fw[i].host_port);
		if (cl_policy_add_forward(p, fw, &err) < 0 || cl_policy_validate(p, &err) < 0)
			rc = sb_from_cl(e, SB_INVALID_INPUT, &err);
	}
	sb_proxy_plan_free(&pl);
	return rc;
}

/* Spec "workspace": rootDir writable at its own path as an overlay (the
 * request keeps /workspace, DESIGN.md section 5), with rootDir/.smithers
 * (this run's state, other runs' events) covered by an empty tmpfs. */
static int workspace_mount(struct run *r, struct cl_policy *p, struct sb_error *e)
{
	char hide[4200];
	struct cl_mount *m;
	cl_error err = {0};
	const char *snap = r->s->workspace.snapshot_id;

	/* On codeplane "workspace" is the remote one (sb_build_policy). */
	if (!r->s->workspace.present || r->s->runtime_req == CL_RT_CODEPLANE)
		return 0;
	/* Named by the spec, so a spec error (the field), not a setup one. */
	if (snap && !ws_snap_exists(snap))
		return sb_invalid(e, "workspace.snapshotId", "Sandbox workspace snapshot \"%s\" does not exist "
		                  "(cloister workspace snapshots lists them).", snap);
	if (!(p->workspace = strdup(r->s->root_dir)))
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, ENOMEM, NULL, "workspace");
	p->ws_ignore_none = r->s->workspace.ignore_none;
	if (r->s->workspace.persistence && !strcmp(r->s->workspace.persistence, "sticky")
	    ? ws_sticky_prepare(p, &r->ws, r->s->workspace.name, r->s->workspace.idle_timeout_secs, snap, &err) < 0
	    : ws_run_prepare(p, &r->ws, snap, &err) < 0)
		return sb_from_cl(e, SB_INVALID_INPUT, &err);
	r->has_ws = true;
	snprintf(hide, sizeof(hide), "%s/.smithers", r->ws.dir);
	/* After the overlay in the mount list: it lands on top of it. */
	if (!(m = cl_policy_add_mount(p, CL_MNT_TMPFS, NULL, hide, 0)))
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, ENOMEM, NULL, "workspace");
	m->mode = 0755;
	m->size = 1 << 20;
	return 0;
}

static int step_execute(struct run *r, json_t **result, struct sb_error *e)
{
	struct cl_policy p;
	struct sb_exec_result x;
	json_t *pres = NULL;
	cl_autofree char *raw = NULL;
	const char *out;
	int rc;

	rc = build(r, &p, e);
	if (rc == 0)
		rc = workspace_mount(r, &p, e);
	if (rc < 0) {
		cl_policy_free(&p);
		return rc;
	}
	sb_run_progress(r, "executing", 40, NULL);
	r->child_started = sb_run_mono_ms();
	rc = sb_exec(&p, r->s->max_output_bytes, &x, e);
	cl_policy_free(&p);
	if (rc < 0) {
		sb_exec_result_free(&x);
		return rc;
	}
	/* A requested runtime that was replaced is recorded, never silent. */
	if (x.st.fallback[0])
		sb_run_event(r, "SandboxRuntimeFallback", json_pack("{s:s,s:s,s:s}", "requested",
		             r->s->runtime, "runtime", x.st.runtime ? x.st.runtime : "native",
		             "reason", x.st.fallback));
	sb_run_progress(r, "child-finished", 70, json_pack("{s:i}", "exitCode", x.st.exit_code));
	sb_run_update(r, "shipped", NULL);
	sb_run_event(r, "SandboxHeartbeat", json_pack("{s:s,s:i}", "remoteRunId", r->s->sandbox_id, "progress", 1));
	if (x.cancelled_by) {
		rc = sb_fail(e, SB_EXECUTION_FAILED, 0, json_pack("{s:s,s:i}", "reason", "cancelled", "signal",
		                                                  x.cancelled_by),
		             "Sandbox %s was cancelled (signal %d); the sandbox was killed.", r->s->sandbox_id,
		             x.cancelled_by);
		sb_exec_result_free(&x);
		return rc;
	}
	if (x.st.timed_out) {
		rc = sb_step_timed_out(r, &x, result, e);
		sb_exec_result_free(&x);
		return rc;
	}
	out = x.out.data ? x.out.data : "";
	while (*out == ' ' || *out == '\n' || *out == '\t' || *out == '\r')
		out++;
	if (x.st.exit_code != 0 && *out != '{') {
		const char *detail = x.err.len ? x.err.data : out;
		rc = sb_fail(e, SB_EXECUTION_FAILED, 0, json_pack("{s:s,s:i}", "provider", "cloister", "exitCode",
		                                                  x.st.exit_code),
		             "Sandbox command \"%s\" exited with code %d: %.300s", r->s->command,
		             x.st.exit_code, detail);
		sb_exec_result_free(&x);
		return rc;
	}
	if (*out != '{' && (rc = read_result_file(r, &raw, e)) < 0) {
		sb_exec_result_free(&x);
		return rc;
	}
	/* The ids a runner leaves out: the remote workspace's on codeplane. */
	rc = sb_provider_parse_result(*out == '{' ? out : raw, x.st.remote_id[0] ? x.st.remote_id : r->s->sandbox_id,
	                              SB_RESULT_INSIDE,
	                              r->secrets, &pres, e);
	if (rc == 0) {
		rc = sb_step_collect(r, &x, pres, result, e);
		json_decref(pres);
	}
	sb_exec_result_free(&x);
	return rc;
}

static int nested_refused(const struct sb_spec *s, struct sb_error *e)
{
	const char *parent = getenv("CLOISTER_SANDBOX");

	if (!parent || s->allow_nested)
		return 0;
	return sb_fail(e, SB_INVALID_INPUT, 0,
	               json_pack("{s:s,s:s}", "sandboxId", s->sandbox_id, "parentSandbox", parent),
	               "Nested <Sandbox> execution is disabled by default. Set allowNested on the nested "
	               "sandbox only if the provider and diff policy are explicitly designed for nesting.");
}

static int dry_run(struct run *r, json_t **result, struct sb_error *e)
{
	struct cl_policy p;
	cl_autofree char *text = NULL;
	int rc = build(r, &p, e);

	if (rc == 0 && (text = cl_policy_to_json(&p)))
		*result = json_loads(text, 0, NULL);
	cl_policy_free(&p);
	if (rc == 0 && !*result)
		rc = sb_fail(e, SB_PROCESS_SPAWN_FAILED, ENOMEM, NULL, "printing the policy");
	return rc;
}

int sb_run(const struct sb_spec *s, const struct sb_run_opts *o, struct sb_secrets *secrets,
           json_t **result, int *exit_code, struct sb_error *e)
{
	struct run r = {.s = s, .o = o, .secrets = secrets};
	uint64_t bytes;
	int rc;

	*result = NULL;
	*exit_code = 125;
	if ((rc = sb_collect_secrets(s, secrets)) < 0)
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, -rc, NULL, "collecting secrets");
	if ((rc = nested_refused(s, e)) < 0 ||
	    (rc = sb_layout_paths(s->root_dir, s->run_id, s->sandbox_id, &r.l, e)) < 0)
		return rc;
	if (o->dry_run) {
		rc = dry_run(&r, result, e);
		*exit_code = rc < 0 ? 125 : 0;
		return rc;
	}
	sb_run_progress(&r, "initializing", 0, NULL);
	r.config_json = sb_config_json(s, secrets);
	if (o->store && o->store->admit &&
	    (rc = o->store->admit(o->store->ctx, s, r.config_json ? r.config_json : "{}", e)) < 0) {
		/* As Smithers does, a refusal by the concurrency limit is a
		 * recorded failure of the run. */
		if (e->code == SB_EXECUTION_FAILED)
			sb_run_event(&r, "SandboxFailed", json_pack("{s:s,s:o}", "runtime", r.s->runtime, "error",
			                                            sb_error_to_json(e)));
		free(r.config_json);
		sb_run_progress(&r, "failed", 100, json_pack("{s:s}", "error", e->base.msg));
		*exit_code = sb_error_exit_code(e);
		return rc;
	}
	sb_run_event(&r, "SandboxCreated", json_pack("{s:s,s:s}", "runtime", r.s->runtime, "configJson",
	                                      r.config_json ? r.config_json : "{}"));
	rc = step_create(&r, e);
	if (rc == 0) {
		sb_run_progress(&r, "created", 10, NULL);
		rc = step_ship(&r, &bytes, e);
	}
	if (rc == 0) {
		sb_run_event(&r, "SandboxShipped", json_pack("{s:s,s:I}", "runtime", r.s->runtime, "bundleSizeBytes",
		                                      (json_int_t)bytes));
		sb_run_progress(&r, "shipped", 25, NULL);
		sb_run_update(&r, "shipped", NULL);
		rc = step_execute(&r, result, e);
	}
	if (rc < 0) {
		json_t *err = sb_error_to_json(e);
		const char *reason = json_string_value(json_object_get(e->details, "reason"));
		bool cancelled = reason && strcmp(reason, "cancelled") == 0;
		sb_run_finish(&r, cancelled ? "cancelled" : "failed", json_pack("{s:s}", "bundlePath", r.l.result),
		              "SandboxFailed", json_pack("{s:s,s:o}", "runtime", r.s->runtime, "error", err));
		sb_run_progress(&r, "failed", 100, json_pack("{s:s}", "error", e->base.msg));
		*exit_code = rc == -ETIMEDOUT ? 124 : cancelled
		             ? 128 + (int)json_integer_value(json_object_get(e->details, "signal"))
		             : sb_error_exit_code(e);
	} else {
		const char *st = json_string_value(json_object_get(*result, "status"));
		*exit_code = !st || strcmp(st, "finished") == 0 ? 0 : 1;
	}
	/* ---- cleanup: request/ and tmp/ go, result/ stays ---- */
	/* As in Smithers, a failed teardown never replaces the run's own
	 * outcome (a finished run stays finished, a failure keeps its code):
	 * it is a warning naming what is left. */
	{
		struct sb_error ce = {0};
		if (sb_layout_cleanup(&r.l, &ce) < 0) {
			char line[700];
			cl_error_format(&ce.base, line, sizeof(line));
			fprintf(stderr, "cloister: warning: sandbox %s: %s (remove it by hand)\n",
			        s->sandbox_id, line);
		}
		sb_error_clear(&ce);
	}
	/* After collect, which read the workspace's upper dir. */
	if (r.has_ws)
		ws_run_cleanup(&r.ws);
	sb_layout_close(&r.l);
	free(r.config_json);
	return rc;
}
