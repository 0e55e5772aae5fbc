/* Unit tests for the sandbox spec rules: ids, paths, env, ports, volumes,
 * limits, workspace and egress, each with Smithers' code and message. */
#include <stdlib.h>
#include <string.h>

#include "src/policy/policy.h"
#include "src/sandbox/egress.h"
#include "src/sandbox/redact.h"
#include "src/sandbox/spec.h"
#include "tests/unit/unit.h"

#define BASE "\"runId\":\"r\",\"sandboxId\":\"s\",\"rootDir\":\"/p\""

/* Parses {BASE, extra}; returns the error message ("" on success). */
static const char *try_spec(const char *extra, struct sb_spec *s, struct sb_error *e)
{
	static char buf[8192];
	int rc;

	snprintf(buf, sizeof(buf), "{" BASE "%s%s}", *extra ? "," : "", extra);
	sb_error_clear(e);
	rc = sb_spec_parse(buf, strlen(buf), s, e);
	return rc == 0 ? "" : e->base.msg;
}

/* A whole spec text (for overriding the base fields). */
static bool rejects_text(const char *text, const char *msg)
{
	struct sb_spec s;
	struct sb_error e = {0};
	int rc = sb_spec_parse(text, strlen(text), &s, &e);
	bool ok = rc < 0 && e.code == SB_INVALID_INPUT && strstr(e.base.msg, msg) != NULL;

	if (rc == 0)
		sb_spec_free(&s);
	if (!ok)
		printf("    spec %s: got '%s'\n", text, rc == 0 ? "" : e.base.msg);
	sb_error_clear(&e);
	return ok;
}

static bool rejects(const char *extra, const char *msg)
{
	struct sb_spec s;
	struct sb_error e = {0};
	const char *got = try_spec(extra, &s, &e);
	bool ok = e.code == SB_INVALID_INPUT && strstr(got, msg) != NULL;

	if (!*got)
		sb_spec_free(&s);
	if (!ok)
		printf("    spec {%s}: got '%s'\n", extra, got);
	sb_error_clear(&e);
	return ok;
}

static void test_patterns(void)
{
	CHECK("memoryLimit 512m", sb_memory_limit_ok("512m"));
	CHECK("memoryLimit 1G", sb_memory_limit_ok("1G"));
	CHECK("memoryLimit 1024", sb_memory_limit_ok("1024"));
	CHECK("memoryLimit 0 refused", !sb_memory_limit_ok("0"));
	CHECK("memoryLimit 05m refused", !sb_memory_limit_ok("05m"));
	CHECK("memoryLimit 1t refused", !sb_memory_limit_ok("1t"));
	CHECK("memoryLimit m refused", !sb_memory_limit_ok("m"));
	CHECK("cpuLimit 1.5", sb_cpu_limit_ok("1.5"));
	CHECK("cpuLimit .5", sb_cpu_limit_ok(".5"));
	CHECK("cpuLimit 0.25", sb_cpu_limit_ok("0.25"));
	CHECK("cpuLimit 2", sb_cpu_limit_ok("2"));
	CHECK("cpuLimit 0 refused", !sb_cpu_limit_ok("0"));
	CHECK("cpuLimit 01 refused", !sb_cpu_limit_ok("01"));
	CHECK("cpuLimit 1. refused", !sb_cpu_limit_ok("1."));
	CHECK("cpuLimit 1.5.2 refused", !sb_cpu_limit_ok("1.5.2"));
	CHECK("env name _A1", sb_env_name_ok("_A1"));
	CHECK("env name 1A refused", !sb_env_name_ok("1A"));
	CHECK("env name A-B refused", !sb_env_name_ok("A-B"));
}

static void test_js_length(void)
{
	CHECK("js length ascii", sb_js_length("abc", 3) == 3);
	CHECK("js length 2-byte", sb_js_length("\xc3\xa9", 2) == 1);
	CHECK("js length 3-byte", sb_js_length("\xe2\x80\xa6", 3) == 1);
	CHECK("js length astral is a pair", sb_js_length("\xf0\x9f\x98\x80", 4) == 2);
}

static void test_paths(void)
{
	char out[256];

	CHECK("normalize //a/./b/../c", sb_path_normalize("//a/./b/../c", out, sizeof(out)) == 0 &&
	      strcmp(out, "/a/c") == 0);
	CHECK("normalize /.. is /", sb_path_normalize("/..", out, sizeof(out)) == 0 && strcmp(out, "/") == 0);
	CHECK("normalize relative refused", sb_path_normalize("a/b", out, sizeof(out)) < 0);
	CHECK("within /workspace/x", sb_path_within("/workspace/x", "/workspace"));
	CHECK("not within /workspacex", !sb_path_within("/workspacex", "/workspace"));
}

static void test_rules(void)
{
	struct sb_spec s;
	struct sb_error e = {0};

	CHECK("minimal spec accepted", strcmp(try_spec("", &s, &e), "") == 0);
	CHECK("defaults: timeout, output, command, review",
	      s.tool_timeout_ms == 600000 && s.max_output_bytes == 5242880 &&
	      strcmp(s.command, "smithers up bundle.tsx") == 0 && s.review_diffs && !s.allow_network);
	sb_spec_free(&s);
	CHECK("full spec accepted",
	      strcmp(try_spec("\"memoryLimit\":\"512m\",\"cpuLimit\":\"1.5\",\"ports\":[{\"host\":8080,\"container\":80}],"
	                      "\"volumes\":[{\"host\":\"/a\",\"container\":\"/data//x/\"}],\"workspace\":{\"name\":\" w \","
	                      "\"idleTimeoutSecs\":9.7,\"persistence\":\"sticky\"},\"egress\":{\"noProxy\":[\"a\",\"b\"]}",
	                      &s, &e), "") == 0);
	CHECK("limits converted", s.memory_bytes == 512u << 20 && s.cpu_quota_us == 150000);
	CHECK("volume readonly by default, normalised",
	      s.n_volumes == 1 && s.volumes[0].readonly && strcmp(s.volumes[0].container, "/data/x") == 0);
	CHECK("workspace trimmed, idle floored", strcmp(s.workspace.name, "w") == 0 && s.workspace.idle_timeout_secs == 9);
	CHECK("noProxy joined", s.egress.no_proxy && strcmp(s.egress.no_proxy, "a,b") == 0);
	sb_spec_free(&s);
	sb_error_clear(&e);

	CHECK("unknown field", rejects("\"x\":1", "Unknown sandbox spec field: x."));
	CHECK("unknown nested field", rejects("\"ports\":[{\"host\":1,\"container\":2,\"udp\":true}]",
	                                       "Unknown sandbox spec field: ports[0].udp."));
	CHECK("duplicate key", rejects("\"runId\":\"again\"", "not valid JSON"));
	{
		/* 256 two-byte characters: 512 bytes, but 256 as Smithers counts. */
		char text[1200] = "{\"runId\":\"";
		for (int i = 0; i < 256; i++)
			strcat(text, "\xc3\xa9");
		strcat(text, "\",\"sandboxId\":\"s\",\"rootDir\":\"/p\"}");
		CHECK("runId counted in characters", sb_spec_parse(text, strlen(text), &s, &e) == 0);
		sb_spec_free(&s);
		sb_error_clear(&e);
	}
	CHECK("sandboxId ..", rejects_text("{\"runId\":\"r\",\"sandboxId\":\"..\",\"rootDir\":\"/p\"}",
	                                    "must not contain"));
	CHECK("rootDir with NUL", rejects_text("{\"runId\":\"r\",\"sandboxId\":\"s\",\"rootDir\":\"/a\\u0000b\"}",
	                                        "rootDir must be an absolute path."));
	CHECK("missing sandboxId", rejects_text("{\"runId\":\"r\",\"rootDir\":\"/p\"}",
	                                         "sandboxId must be a non-empty string."));
	CHECK("spec not an object", rejects_text("[]", "Sandbox spec must be a JSON object."));
	CHECK("NUL in a key", rejects("\"env\":{\"A\\u0000B\":\"x\"}", "NUL byte in object key"));
	CHECK("port string refused", rejects("\"ports\":[{\"host\":\"80\",\"container\":80}]",
	                                      "ports[0].host must be an integer port"));
	CHECK("port 1.5 refused", rejects("\"ports\":[{\"host\":1.5,\"container\":80}]", "integer port"));
	CHECK("ports not array", rejects("\"ports\":{}", "Sandbox ports must be an array"));
	CHECK("volume not object", rejects("\"volumes\":[1]", "Sandbox volume mappings must be objects."));
	CHECK("volume over /", rejects("\"volumes\":[{\"host\":\"/a\",\"container\":\"/\"}]", "may not override"));
	CHECK("volume readonly string", rejects("\"volumes\":[{\"host\":\"/a\",\"container\":\"/b\",\"readonly\":\"no\"}]",
	                                         "volumes[0].readonly must be a boolean."));
	CHECK("env key too long", rejects("\"env\":{\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\":\"v\"}",
	                                   "outside supported bounds"));
	CHECK("cpuLimit number", rejects("\"cpuLimit\":1", "cpuLimit is not a supported sandbox resource limit."));
	CHECK("snapshotId blank", rejects("\"workspace\":{\"name\":\"w\",\"snapshotId\":\" \"}",
	                                   "snapshotId must be a non-empty string."));
	/* cloister's snapshot ids: a safe charset, bounded (docs/workspaces.md). */
	CHECK("snapshotId with a slash", rejects("\"workspace\":{\"name\":\"w\",\"snapshotId\":\"../x\"}",
	                                         "snapshotId must be 1 to 64 letters"));
	CHECK("snapshotId starting with a dot", rejects("\"workspace\":{\"name\":\"w\",\"snapshotId\":\".tmp-1\"}",
	                                                "snapshotId must be 1 to 64 letters"));
	CHECK("snapshotId of 65", rejects("\"workspace\":{\"name\":\"w\",\"snapshotId\":"
	                                  "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
	                                  "snapshotId must be 1 to 64 letters"));
	CHECK("snapshotId trimmed and accepted",
	      strcmp(try_spec("\"workspace\":{\"name\":\"w\",\"snapshotId\":\" snap-1.a_b \"}", &s, &e), "") == 0 &&
	      strcmp(s.workspace.snapshot_id, "snap-1.a_b") == 0);
	sb_spec_free(&s);
	sb_error_clear(&e);
	CHECK("egress not object", rejects("\"egress\":[]", "Sandbox egress must be an object."));
	CHECK("egress proxy empty", rejects("\"egress\":{\"httpProxy\":\"\"}",
	                                     "egress.httpProxy must be a non-empty string within supported bounds."));
	CHECK("egress noProxy entry", rejects("\"egress\":{\"noProxy\":[\"a\",1]}", "egress.noProxy[1] must be"));
	CHECK("secretBindings value", rejects("\"egress\":{\"secretBindings\":{\"x-y\":1}}",
	                                       "egress.secretBindings values must be strings"));
	CHECK("runtime cloudflare", rejects("\"runtime\":\"cloudflare\"", "Unsupported sandbox runtime: cloudflare"));
	{
		struct sb_spec cs;
		struct sb_error ce = {0};
		bool ok = *try_spec("\"runtime\":\"codeplane\"", &cs, &ce) == '\0';
		CHECK("runtime codeplane", ok && cs.runtime_req == CL_RT_CODEPLANE && strcmp(cs.runtime, "codeplane") == 0);
		if (ok)
			sb_spec_free(&cs);
		sb_error_clear(&ce);
	}
	CHECK("maxOutputBytes negative", rejects("\"maxOutputBytes\":-1", "maxOutputBytes must be a positive integer."));
	CHECK("config not object", rejects("\"config\":[]", "config must be an object."));
}

static void test_egress_env_and_redaction(void)
{
	struct sb_spec s;
	struct sb_error e = {0};
	json_t *env, *red;

	CHECK("egress spec", strcmp(try_spec("\"egress\":{\"httpProxy\":\"http://u:p@h:1\",\"caCertPem\":\"PEM\","
	                                     "\"env\":{\"B\":\"2\",\"A\":\"1\"},\"secretBindings\":{\"GH\":\"t\"}}",
	                                     &s, &e), "") == 0);
	env = sb_egress_env(&s.egress, s.egress.http_proxy, s.egress.https_proxy);
	CHECK("HTTP_PROXY both cases", strcmp(json_string_value(json_object_get(env, "http_proxy")), "http://u:p@h:1") == 0 &&
	      json_object_get(env, "HTTP_PROXY"));
	CHECK("CA variables", strcmp(json_string_value(json_object_get(env, "REQUESTS_CA_BUNDLE")),
	                             "/workspace/.smithers/egress/ca.crt") == 0);
	CHECK("egress env passed", strcmp(json_string_value(json_object_get(env, "A")), "1") == 0);
	red = sb_egress_redacted(&s.egress);
	{
		char *t = json_dumps(red, JSON_COMPACT | JSON_SORT_KEYS);
		CHECK("redacted egress", strcmp(t, "{\"caCertPem\":\"[redacted]\",\"env\":{\"A\":\"[redacted]\","
		                                   "\"B\":\"[redacted]\"},\"httpProxy\":\"[redacted]\","
		                                   "\"secretBindings\":{\"binding_1\":\"[redacted]\"}}") == 0);
		free(t);
	}
	json_decref(env);
	json_decref(red);
	sb_spec_free(&s);
	sb_error_clear(&e);
}

static void test_scrub(void)
{
	struct sb_secrets sec = {0};
	char *out;
	json_t *v, *r;

	sb_secrets_add(&sec, "pa\"ss");
	out = sb_scrub(&sec, "x pa\"ss y pa\"ss");
	CHECK("scrub raw", strcmp(out, "x [redacted] y [redacted]") == 0);
	free(out);
	v = json_pack("{s:s}", "m", "has pa\"ss inside");
	out = sb_dumps_scrubbed(&sec, v);
	CHECK("scrub JSON-escaped form", strstr(out, "pa") == NULL && strstr(out, "[redacted]") != NULL);
	free(out);
	json_decref(v);
	CHECK("secret key names", sb_key_is_secret("GITHUB_TOKEN") && sb_key_is_secret("apiKey") &&
	      sb_key_is_secret("Authorization") && !sb_key_is_secret("PATH"));
	v = json_pack("{s:s,s:{s:s}}", "password", "p", "nested", "name", "n");
	r = sb_redact_keys(v);
	CHECK("redact keys deep", strcmp(json_string_value(json_object_get(r, "password")), "[redacted]") == 0 &&
	      strcmp(json_string_value(json_object_get(json_object_get(r, "nested"), "name")), "n") == 0);
	json_decref(v);
	json_decref(r);
	sb_secrets_free(&sec);
}

int main(void)
{
	test_patterns();
	test_paths();
	test_js_length();
	test_rules();
	test_egress_env_and_redaction();
	test_scrub();
	UNIT_MAIN_END;
}
