/* Strict validation of the sandbox spec: every field is checked once with
 * @smithers-orchestrator/sandbox's rules and messages; unknown fields fail. */
#define _GNU_SOURCE
#include "src/sandbox/spec.h"
#include "src/policy/runtime.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/policy/parse.h"
#include "src/policy/policy.h"
#include "src/workspace/snapshot.h"

static const char *const top_fields[] = {
	"runId", "sandboxId", "rootDir", "runtime", "command", "requestBundlePath", "image",
	"allowNetwork", "env", "egress", "ports", "volumes", "memoryLimit", "cpuLimit",
	"workspace", "maxOutputBytes", "toolTimeoutMs", "reviewDiffs", "autoAcceptDiffs",
	"allowNested", "config", "input", NULL,
};

bool sb_json_has_nul(const json_t *v)
{
	return strlen(json_string_value(v)) != json_string_length(v);
}

int sb_check_known(json_t *obj, const char *const *known, const char *prefix,
                   struct sb_error *e)
{
	const char *k;
	json_t *v;

	json_object_foreach(obj, k, v) {
		size_t i;
		for (i = 0; known[i] && strcmp(known[i], k) != 0; i++)
			;
		if (!known[i]) {
			char field[300];
			snprintf(field, sizeof(field), "%s%s", prefix, k);
			return sb_invalid(e, field, "Unknown sandbox spec field: %s.", field);
		}
	}
	return 0;
}

static int get_id(json_t *root, const char *field, const char **out, struct sb_error *e)
{
	json_t *v = json_object_get(root, field);
	const char *s;

	if (!json_is_string(v) || json_string_length(v) == 0 || sb_json_has_nul(v))
		return sb_invalid(e, field, "%s must be a non-empty string.", field);
	s = json_string_value(v);
	if (sb_json_js_length(v) > SB_ID_MAX)
		return sb_invalid(e, field, "%s must be at most %d characters.", field, SB_ID_MAX);
	/* Ids name directories under rootDir: they must stay one component. */
	if (strchr(s, '/') || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return sb_invalid(e, field, "%s must not contain '/' or be '.' or '..'.", field);
	*out = s;
	return 0;
}

static int abs_path(json_t *v, const char *field, const char **out, struct sb_error *e)
{
	if (!json_is_string(v) || json_string_length(v) == 0 || sb_json_has_nul(v) ||
	    json_string_value(v)[0] != '/')
		return sb_invalid(e, field, "%s must be an absolute path.", field);
	if (sb_json_js_length(v) > SB_PATH_MAX)
		return sb_invalid(e, field, "%s must be at most %d characters.", field, SB_PATH_MAX);
	*out = json_string_value(v);
	return 0;
}

static int opt_bool(json_t *root, const char *field, bool dflt, bool *out, struct sb_error *e)
{
	json_t *v = json_object_get(root, field);

	if (!v) {
		*out = dflt;
		return 0;
	}
	if (!json_is_boolean(v))
		return sb_invalid(e, field, "%s must be a boolean.", field);
	*out = json_is_true(v);
	return 0;
}

static int opt_string(json_t *root, const char *field, const char **out, struct sb_error *e)
{
	json_t *v = json_object_get(root, field);

	if (!v)
		return 0;
	if (!json_is_string(v) || sb_json_has_nul(v) || sb_json_js_length(v) > SB_STRING_MAX)
		return sb_invalid(e, field, "%s must be a string within supported bounds.", field);
	*out = json_string_value(v);
	return 0;
}

/* A JSON integer, or a real with no fraction (JavaScript has one number type). */
static bool json_int_value(const json_t *v, double *out)
{
	if (json_is_integer(v)) {
		*out = (double)json_integer_value(v);
		return true;
	}
	/* Within +-2^53 (exact integers); the cast truncates. */
	if (json_is_real(v) && json_real_value(v) > -9007199254740992.0 &&
	    json_real_value(v) < 9007199254740992.0 &&
	    (double)(int64_t)json_real_value(v) == json_real_value(v)) {
		*out = json_real_value(v);
		return true;
	}
	return false;
}

static int opt_positive(json_t *root, const char *field, uint64_t dflt, uint64_t *out,
                        struct sb_error *e)
{
	json_t *v = json_object_get(root, field);
	double d;

	*out = dflt;
	if (!v)
		return 0;
	if (!json_int_value(v, &d) || d < 1 || d > 9007199254740991.0)
		return sb_invalid(e, field, "%s must be a positive integer.", field);
	*out = (uint64_t)d;
	return 0;
}

static int parse_env(json_t *v, struct sb_spec *s, struct sb_error *e)
{
	const char *k;
	json_t *val;

	if (!v)
		return 0;
	if (!json_is_object(v))
		return sb_invalid(e, "env", "Sandbox env must be a flat object of string values.");
	json_object_foreach(v, k, val) {
		if (!sb_env_name_ok(k))
			return sb_fail(e, SB_INVALID_INPUT, 0, json_pack("{s:s}", "envKey", k),
			               "Sandbox env keys must be valid environment variable names.");
		if (!json_is_string(val))
			return sb_fail(e, SB_INVALID_INPUT, 0, json_pack("{s:s}", "envKey", k),
			               "Sandbox env values must be strings.");
		if (sb_js_length(k, strlen(k)) > SB_ENV_KEY_MAX || sb_json_js_length(val) > SB_STRING_MAX || sb_json_has_nul(val))
			return sb_fail(e, SB_INVALID_INPUT, 0, json_pack("{s:s}", "envKey", k),
			               "Sandbox env entry is outside supported bounds.");
	}
	s->env = v;
	return 0;
}

static int port_value(json_t *v, const char *field, uint16_t *out, struct sb_error *e)
{
	double d;

	if (!json_int_value(v, &d) || d < 1 || d > 65535)
		return sb_invalid(e, field, "%s must be an integer port between 1 and 65535.", field);
	*out = (uint16_t)d;
	return 0;
}

static int parse_ports(json_t *v, struct sb_spec *s, struct sb_error *e)
{
	static const char *const known[] = {"host", "container", NULL};
	size_t i;
	json_t *p;

	if (!v)
		return 0;
	if (!json_is_array(v))
		return sb_invalid(e, "ports", "Sandbox ports must be an array of { host, container } mappings.");
	s->ports = calloc(json_array_size(v) + 1, sizeof(*s->ports));
	if (!s->ports)
		return sb_fail(e, SB_INVALID_INPUT, ENOMEM, NULL, "reading ports");
	json_array_foreach(v, i, p) {
		char prefix[64], field[64];
		int rc;
		if (!json_is_object(p))
			return sb_fail(e, SB_INVALID_INPUT, 0, json_pack("{s:I}", "index", (json_int_t)i),
			               "Sandbox port mappings must be objects.");
		snprintf(prefix, sizeof(prefix), "ports[%zu].", i);
		if ((rc = sb_check_known(p, known, prefix, e)) < 0)
			return rc;
		snprintf(field, sizeof(field), "ports[%zu].host", i);
		if ((rc = port_value(json_object_get(p, "host"), field, &s->ports[i].host, e)) < 0)
			return rc;
		snprintf(field, sizeof(field), "ports[%zu].container", i);
		if ((rc = port_value(json_object_get(p, "container"), field, &s->ports[i].container, e)) < 0)
			return rc;
		s->n_ports++;
	}
	return 0;
}

/* The runtime's own mounts may never be replaced or covered by a volume
 * (a later bind over /workspace would make the request writable). */
static bool shadows_runtime_mount(const char *container)
{
	return strcmp(container, "/") == 0 || sb_path_within(container, "/workspace") ||
	       sb_path_within(container, "/result");
}

static int parse_volume(json_t *vol, size_t i, struct sb_volume *out, struct sb_error *e)
{
	static const char *const known[] = {"host", "container", "readonly", NULL};
	char prefix[64], field[64], norm[SB_PATH_MAX + 1];
	const char *container = NULL;
	json_t *ro;
	int rc;

	if (!json_is_object(vol))
		return sb_fail(e, SB_INVALID_INPUT, 0, json_pack("{s:I}", "index", (json_int_t)i),
		               "Sandbox volume mappings must be objects.");
	snprintf(prefix, sizeof(prefix), "volumes[%zu].", i);
	if ((rc = sb_check_known(vol, known, prefix, e)) < 0)
		return rc;
	snprintf(field, sizeof(field), "volumes[%zu].host", i);
	if ((rc = abs_path(json_object_get(vol, "host"), field, &out->host, e)) < 0)
		return rc;
	snprintf(field, sizeof(field), "volumes[%zu].container", i);
	if ((rc = abs_path(json_object_get(vol, "container"), field, &container, e)) < 0)
		return rc;
	if (sb_path_normalize(container, norm, sizeof(norm)) < 0)
		return sb_invalid(e, field, "%s must be an absolute path.", field);
	if (shadows_runtime_mount(norm))
		return sb_fail(e, SB_INVALID_INPUT, 0, json_pack("{s:s}", "container", container),
		               "Sandbox volumes may not override /workspace or /result.");
	if (!(out->container = strdup(norm)))
		return sb_fail(e, SB_INVALID_INPUT, ENOMEM, NULL, "reading volumes");
	ro = json_object_get(vol, "readonly");
	snprintf(field, sizeof(field), "volumes[%zu].readonly", i);
	if (ro && !json_is_boolean(ro))
		return sb_invalid(e, field, "%s must be a boolean.", field);
	out->readonly = !ro || json_is_true(ro);
	return 0;
}

static int parse_volumes(json_t *v, struct sb_spec *s, struct sb_error *e)
{
	size_t i;
	json_t *vol;

	if (!v)
		return 0;
	if (!json_is_array(v))
		return sb_invalid(e, "volumes",
		                  "Sandbox volumes must be an array of { host, container, readonly } mappings.");
	s->volumes = calloc(json_array_size(v) + 1, sizeof(*s->volumes));
	if (!s->volumes)
		return sb_fail(e, SB_INVALID_INPUT, ENOMEM, NULL, "reading volumes");
	json_array_foreach(v, i, vol) {
		int rc = parse_volume(vol, i, &s->volumes[i], e);
		s->n_volumes += s->volumes[i].container != NULL;
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int parse_limits(json_t *root, struct sb_spec *s, struct sb_error *e)
{
	json_t *mem = json_object_get(root, "memoryLimit"), *cpu = json_object_get(root, "cpuLimit");

	if (mem) {
		if (!json_is_string(mem) || sb_json_has_nul(mem) || !sb_memory_limit_ok(json_string_value(mem)) ||
		    cl_parse_size(json_string_value(mem), &s->memory_bytes) < 0)
			return sb_invalid(e, "memoryLimit", "memoryLimit is not a supported sandbox resource limit.");
		s->memory_limit = json_string_value(mem);
	}
	if (cpu) {
		if (!json_is_string(cpu) || sb_json_has_nul(cpu) || !sb_cpu_limit_ok(json_string_value(cpu)) ||
		    cl_parse_cpus(json_string_value(cpu), &s->cpu_quota_us, &s->cpu_period_us) < 0)
			return sb_invalid(e, "cpuLimit", "cpuLimit is not a supported sandbox resource limit.");
		s->cpu_limit = json_string_value(cpu);
	}
	return 0;
}

static char *trimmed_dup(const char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return strndup(s, n);
}

static bool blank(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return *s == '\0';
}

static int parse_workspace(json_t *v, struct sb_workspace *w, struct sb_error *e)
{
	static const char *const known[] = {"name", "snapshotId", "idleTimeoutSecs", "persistence", "ignore",
	                                      NULL};
	json_t *name = json_object_get(v, "name"), *snap, *idle, *pers, *ign;
	int rc;

	w->idle_timeout_secs = -1;
	if (!v)
		return 0;
	if (!json_is_object(v) || !json_is_string(name) || blank(json_string_value(name)))
		return sb_invalid(e, "workspace", "Sandbox workspace must include a non-empty name.");
	if ((rc = sb_check_known(v, known, "workspace.", e)) < 0)
		return rc;
	w->present = true;
	if (!(w->name = trimmed_dup(json_string_value(name))))
		return sb_fail(e, SB_INVALID_INPUT, ENOMEM, NULL, "reading workspace");
	if ((snap = json_object_get(v, "snapshotId"))) {
		if (!json_is_string(snap) || blank(json_string_value(snap)))
			return sb_invalid(e, "workspace.snapshotId",
			                  "Sandbox workspace snapshotId must be a non-empty string.");
		if (!(w->snapshot_id = trimmed_dup(json_string_value(snap))))
			return sb_fail(e, SB_INVALID_INPUT, ENOMEM, NULL, "reading workspace");
		/* cloister's ids (a directory name in the state dir): checked
		 * here, before anything is made. */
		if (!ws_snap_id_ok(w->snapshot_id))
			return sb_invalid(e, "workspace.snapshotId",
			                  "Sandbox workspace snapshotId must be 1 to %d letters, digits, '.', '_' or "
			                  "'-', starting with a letter or digit.", WS_SNAP_ID_MAX);
	}
	if ((idle = json_object_get(v, "idleTimeoutSecs"))) {
		double d = json_is_number(idle) ? json_number_value(idle) : -1;
		if (!json_is_number(idle) || d != d || d < 0 || d > 1.7e308)
			return sb_invalid(e, "workspace.idleTimeoutSecs",
			                  "Sandbox workspace idleTimeoutSecs must be a non-negative number.");
		w->idle_timeout_secs = d > 9e15 ? (int64_t)9e15 : (int64_t)d;   /* d >= 0: floor */
	}
	if ((pers = json_object_get(v, "persistence"))) {
		const char *p = json_is_string(pers) ? json_string_value(pers) : "";
		if (strcmp(p, "ephemeral") != 0 && strcmp(p, "sticky") != 0)
			return sb_invalid(e, "workspace.persistence",
			                  "Sandbox workspace persistence must be ephemeral or sticky.");
		w->persistence = p;
	}
	if ((ign = json_object_get(v, "ignore"))) {
		int none = cl_ws_ignore_parse(json_string_value(ign));
		if (none < 0)
			return sb_invalid(e, "workspace.ignore", "Sandbox workspace ignore must be git or none.");
		w->ignore_none = none == 1;
	}
	return 0;
}

int sb_spec_set_runtime(struct sb_spec *s, const char *r)
{
	if (strcmp(r, "auto") != 0 && strcmp(r, "native") != 0 && strcmp(r, "docker") != 0 &&
	    strcmp(r, "codeplane") != 0)
		return -1;
	s->runtime = r[0] == 'd' ? "docker" : r[0] == 'c' ? "codeplane" : "native";
	s->runtime_req = cl_runtime_parse(r);
	return 0;
}

static int parse_runtime(json_t *root, struct sb_spec *s, struct sb_error *e)
{
	json_t *v = json_object_get(root, "runtime");
	const char *r = json_is_string(v) ? json_string_value(v) : NULL;

	/* "runtime" in events and records: the executor asked for (auto
	 * runs native unless the host forbids it). */
	s->runtime = "native";
	s->runtime_req = CL_RT_AUTO;
	if (!v)
		return 0;
	if (r && sb_spec_set_runtime(s, r) == 0)
		return 0;
	{
		char *shown = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		int rc = sb_fail(e, SB_INVALID_INPUT, 0, json_pack("{s:O}", "runtime", v),
		                 "Unsupported sandbox runtime: %s", r ? r : (shown ? shown : "?"));
		free(shown);
		return rc;
	}
}

static int parse_body(json_t *root, struct sb_spec *s, struct sb_error *e)
{
	json_t *v;
	int rc;

	if ((rc = sb_check_known(root, top_fields, "", e)) < 0 ||
	    (rc = get_id(root, "runId", &s->run_id, e)) < 0 ||
	    (rc = get_id(root, "sandboxId", &s->sandbox_id, e)) < 0 ||
	    (rc = abs_path(json_object_get(root, "rootDir"), "rootDir", &s->root_dir, e)) < 0 ||
	    (rc = parse_runtime(root, s, e)) < 0)
		return rc;
	if ((v = json_object_get(root, "requestBundlePath")) &&
	    (rc = abs_path(v, "requestBundlePath", &s->request_bundle, e)) < 0)
		return rc;
	if ((rc = opt_string(root, "command", &s->command, e)) < 0 ||
	    (rc = opt_string(root, "image", &s->image, e)) < 0)
		return rc;
	if (!s->command || blank(s->command))
		s->command = SB_DEFAULT_COMMAND;
	if ((rc = opt_bool(root, "allowNetwork", false, &s->allow_network, e)) < 0 ||
	    (rc = opt_bool(root, "reviewDiffs", true, &s->review_diffs, e)) < 0 ||
	    (rc = opt_bool(root, "autoAcceptDiffs", false, &s->auto_accept_diffs, e)) < 0 ||
	    (rc = opt_bool(root, "allowNested", false, &s->allow_nested, e)) < 0 ||
	    (rc = parse_env(json_object_get(root, "env"), s, e)) < 0 ||
	    (rc = sb_egress_parse(json_object_get(root, "egress"), &s->egress, e)) < 0 ||
	    (rc = parse_ports(json_object_get(root, "ports"), s, e)) < 0 ||
	    (rc = parse_volumes(json_object_get(root, "volumes"), s, e)) < 0 ||
	    (rc = parse_limits(root, s, e)) < 0 ||
	    (rc = parse_workspace(json_object_get(root, "workspace"), &s->workspace, e)) < 0 ||
	    (rc = opt_positive(root, "maxOutputBytes", SB_DEFAULT_OUTPUT_BYTES, &s->max_output_bytes, e)) < 0 ||
	    (rc = opt_positive(root, "toolTimeoutMs", SB_DEFAULT_TIMEOUT_MS, &s->tool_timeout_ms, e)) < 0)
		return rc;
	if ((v = json_object_get(root, "config")) && !json_is_object(v))
		return sb_invalid(e, "config", "config must be an object.");
	s->config = v;
	s->input = json_object_get(root, "input");
	return 0;
}

int sb_spec_from_json(json_t *root, struct sb_spec *s, struct sb_error *e)
{
	int rc;

	memset(s, 0, sizeof(*s));
	s->workspace.idle_timeout_secs = -1;
	if (!json_is_object(root))
		return sb_invalid(e, NULL, "Sandbox spec must be a JSON object.");
	s->root = json_incref(root);
	rc = parse_body(root, s, e);
	if (rc < 0)
		sb_spec_free(s);
	return rc;
}

int sb_spec_parse(const char *text, size_t len, struct sb_spec *s, struct sb_error *e)
{
	json_error_t jerr;
	json_t *root;
	int rc;

	memset(s, 0, sizeof(*s));
	/* NULs are let through so the rules can name the field that has one;
	 * a repeated key is an error rather than a silent last-wins. */
	root = json_loadb(text, len, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!root)
		return sb_fail(e, SB_INVALID_INPUT, 0,
		               json_pack("{s:i,s:i}", "line", jerr.line, "column", jerr.column),
		               "Sandbox spec is not valid JSON: %s (line %d)", jerr.text, jerr.line);
	rc = sb_spec_from_json(root, s, e);
	json_decref(root);
	return rc;
}

void sb_spec_free(struct sb_spec *s)
{
	for (size_t i = 0; s->volumes && i < s->n_volumes; i++)
		free(s->volumes[i].container);
	free(s->volumes);
	free(s->ports);
	free(s->workspace.name);
	free(s->workspace.snapshot_id);
	sb_egress_free(&s->egress);
	if (s->root)
		json_decref(s->root);
	memset(s, 0, sizeof(*s));
}
