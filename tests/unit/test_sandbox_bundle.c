/* Unit tests for the pure result-bundle rules: manifest parsing, output
 * bounds, patch paths, output capture, provider results, the limit env. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/sandbox/bundle.h"
#include "src/sandbox/exec.h"
#include "src/sandbox/layout.h"
#include "src/sandbox/provider.h"
#include "src/sandbox/proxy.h"
#include "src/state/store.h"
#include "tests/unit/unit.h"

static const char *manifest(const char *text)
{
	static char msg[600];
	struct sb_error e = {0};
	json_t *m = NULL;

	msg[0] = '\0';
	if (sb_manifest_parse(text, strlen(text), &m, &e) < 0)
		snprintf(msg, sizeof(msg), "%s", e.base.msg);
	if (m)
		json_decref(m);
	sb_error_clear(&e);
	return msg;
}

static void test_manifest(void)
{
	CHECK("manifest ok", strcmp(manifest(" {\"status\":\"failed\"}\n"), "") == 0);
	CHECK("manifest empty", strcmp(manifest(" \n"), "Sandbox bundle README.md is empty.") == 0);
	CHECK("manifest not JSON", strcmp(manifest("# title"), "Sandbox bundle README.md must contain valid JSON.") == 0);
	CHECK("manifest array", strcmp(manifest("[]"), "Sandbox bundle README.md JSON must be an object.") == 0);
	CHECK("manifest string", strcmp(manifest("\"x\""), "Sandbox bundle README.md JSON must be an object.") == 0);
	CHECK("manifest bad status", strstr(manifest("{\"status\":\"done\"}"), "must include status") != NULL);
}

static int bounds_of(const char *json)
{
	struct sb_error e = {0};
	json_t *v = json_loads(json, JSON_DECODE_ANY, NULL);
	int rc = sb_json_within_bounds(v, "outputs", &e);

	json_decref(v);
	sb_error_clear(&e);
	return rc;
}

static void test_bounds(void)
{
	char deep[64], big[600 * 4];
	char *s = malloc(70000);

	memset(deep, 0, sizeof(deep));
	for (int i = 0; i < 16; i++)
		deep[i] = '[', deep[31 - i] = ']';
	CHECK("depth 16 allowed", bounds_of(deep) == 0);
	memmove(deep + 1, deep, 32);
	deep[0] = '[';
	deep[33] = ']';
	CHECK("depth 17 refused", bounds_of(deep) < 0);
	strcpy(big, "[0");
	for (int i = 1; i < 513; i++)
		strcat(big, ",0");
	strcat(big, "]");
	CHECK("513 items refused", bounds_of(big) < 0);
	s[0] = '"';
	memset(s + 1, 'a', 65537);
	strcpy(s + 65538, "\"");
	CHECK("string over 64 KiB refused", bounds_of(s) < 0);
	free(s);
}

static int patch(const char *p, enum sb_code *code)
{
	struct sb_error e = {0};
	int rc = sb_patch_path_check("/b/bundle", p, &e);

	*code = e.code;
	sb_error_clear(&e);
	return rc;
}

static void test_patch_paths(void)
{
	enum sb_code c;

	CHECK("patches/a.patch ok", patch("patches/a.patch", &c) == 0);
	CHECK("patches/x/../a.patch ok", patch("patches/x/../a.patch", &c) == 0);
	CHECK("absolute inside ok", patch("/b/bundle/patches/a.patch", &c) == 0);
	CHECK("patches/../../x escapes", patch("patches/../../x.patch", &c) < 0 && c == SB_TOOL_PATH_ESCAPE);
	CHECK("../x escapes", patch("../x.patch", &c) < 0 && c == SB_TOOL_PATH_ESCAPE);
	CHECK("patches itself escapes", patch("patches", &c) < 0 && c == SB_TOOL_PATH_ESCAPE);
	CHECK("other dir escapes", patch("logs/a.patch", &c) < 0 && c == SB_TOOL_PATH_ESCAPE);
	CHECK("absolute outside escapes", patch("/etc/passwd", &c) < 0 && c == SB_TOOL_PATH_ESCAPE);
	CHECK("empty is invalid", patch("", &c) < 0 && c == SB_TOOL_PATH_INVALID);
}

static void test_capture(void)
{
	struct sb_capture c = {0};

	sb_capture_add(&c, "hello ", 6, 8);
	sb_capture_add(&c, "world", 5, 8);
	sb_capture_finish(&c);
	CHECK("capture keeps the cap", strncmp(c.data, "hello wo", 8) == 0 && c.dropped == 3);
	CHECK("capture marker", strstr(c.data, "\xe2\x80\xa6 [truncated 3 bytes]") != NULL);
	free(c.data);
	memset(&c, 0, sizeof(c));
	sb_capture_add(&c, "ok", 2, 8);
	sb_capture_finish(&c);
	CHECK("no marker under the cap", strcmp(c.data, "ok") == 0);
	free(c.data);
}

static const char *result(const char *raw, json_t **out)
{
	static char msg[600];
	struct sb_error e = {0};

	*out = NULL;
	msg[0] = '\0';
	if (sb_provider_parse_result(raw, "rid", "/r.json", NULL, out, &e) < 0)
		snprintf(msg, sizeof(msg), "%s", e.base.msg);
	sb_error_clear(&e);
	return msg;
}

static void test_provider_result(void)
{
	json_t *r;

	CHECK("empty result", strstr(result("  ", &r), "Sandbox produced no result JSON") != NULL);
	CHECK("invalid result", strstr(result("{x", &r), "Sandbox produced invalid result JSON") != NULL);
	CHECK("array result", strcmp(result("[1]", &r), "Sandbox result JSON must be an object.") == 0);
	CHECK("both shapes", strstr(result("{\"status\":\"failed\",\"bundlePath\":\"/result\"}", &r),
	                            "mutually exclusive") != NULL);
	CHECK("ids filled", strcmp(result("{\"status\":\"finished\",\"runId\":\"child\"}", &r), "") == 0 &&
	      strcmp(json_string_value(json_object_get(r, "remoteRunId")), "child") == 0 &&
	      strcmp(json_string_value(json_object_get(r, "containerId")), "rid") == 0);
	json_decref(r);
}

static void test_max_concurrent(void)
{
	CHECK("limit default", st_max_concurrent(NULL) == 10);
	CHECK("limit 3", st_max_concurrent("3") == 3);
	CHECK("limit 2.9 floored", st_max_concurrent("2.9") == 2);
	CHECK("limit 0 -> 10", st_max_concurrent("0") == 10);
	CHECK("limit -4 -> 10", st_max_concurrent("-4") == 10);
	CHECK("limit junk -> 10", st_max_concurrent("ten") == 10);
}

static void test_proxy(void)
{
	struct sb_proxy_url u;
	struct sb_proxy_plan pl;
	struct sb_error e = {0};
	char *in;

	CHECK("proxy with credentials", sb_proxy_parse("http://u:p@proxy.local:3128/x", &u) == 0 &&
	      strcmp(u.host, "proxy.local") == 0 && u.port == 3128 && strcmp(u.userinfo, "u:p") == 0);
	in = sb_proxy_inside_url(&u, 4000);
	CHECK("inside URL keeps credentials", strcmp(in, "http://u:p@127.0.0.1:4000/x") == 0);
	free(in);
	CHECK("default ports", sb_proxy_parse("https://h", &u) == 0 && u.port == 443 &&
	      sb_proxy_parse("h:8080", &u) == 0 && u.port == 8080 && strcmp(u.scheme, "http") == 0);
	CHECK("ipv6 host", sb_proxy_parse("http://[::1]:3128", &u) == 0 && strcmp(u.host, "::1") == 0);
	CHECK("bad port", sb_proxy_parse("http://h:0", &u) < 0 && sb_proxy_parse("http://h:x", &u) < 0);
	CHECK("empty host", sb_proxy_parse("http://:80", &u) < 0);
	CHECK("one relay for one endpoint",
	      sb_proxy_plan("http://h:3128", "http://h:3128", false, &pl, &e) == 0 && pl.n_fw == 1 &&
	      strcmp(pl.https, "http://127.0.0.1:3128") == 0);
	sb_proxy_plan_free(&pl);
	CHECK("two endpoints, two inside ports",
	      sb_proxy_plan("http://a:3128", "http://b:3128", false, &pl, &e) == 0 && pl.n_fw == 2 &&
	      pl.fw[0].inside_port != pl.fw[1].inside_port);
	sb_proxy_plan_free(&pl);
	CHECK("network allowed: URL unchanged",
	      sb_proxy_plan("http://a:1", NULL, true, &pl, &e) == 0 && pl.n_fw == 0 && strcmp(pl.http, "http://a:1") == 0);
	sb_proxy_plan_free(&pl);
	sb_error_clear(&e);
}

/* rootDir is the caller's, links and all, even when its own path holds
 * "/.smithers/sandboxes/": only the levels below it refuse links. */
static void test_layout_root_dir(void)
{
	char tmp[] = "/tmp/cltest-layout.XXXXXX", root[200], real[200], made[300], cmd[300];
	struct sb_layout l;
	struct sb_error e = {0};
	int rc = -1;

	if (!mkdtemp(tmp)) {
		CHECK("layout: temp dir", 0);
		return;
	}
	snprintf(real, sizeof(real), "%s/real", tmp);
	mkdir(real, 0700);
	snprintf(root, sizeof(root), "%s/p", tmp);
	mkdir(root, 0700);
	snprintf(root, sizeof(root), "%s/p/.smithers", tmp);
	mkdir(root, 0700);
	snprintf(root, sizeof(root), "%s/p/.smithers/sandboxes", tmp);
	mkdir(root, 0700);
	snprintf(root, sizeof(root), "%s/p/.smithers/sandboxes/lnk", tmp);
	if (symlink(real, root) == 0 && sb_layout_paths(root, "r1", "s1", &l, &e) == 0)
		rc = sb_layout_create(&l, &e);
	snprintf(made, sizeof(made), "%s/.smithers/sandboxes/r1/s1/request", real);
	CHECK("layout: rootDir holding the layout path", rc == 0 && access(made, F_OK) == 0);
	if (rc != 0)
		printf("    %s\n", e.base.msg);
	CHECK("layout: rootDir's own length", l.root_dir_len == strlen(root));
	sb_layout_close(&l);
	sb_error_clear(&e);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		CHECK("layout: removing the temp dir", 0);
}

int main(void)
{
	test_layout_root_dir();
	test_proxy();
	test_manifest();
	test_bounds();
	test_patch_paths();
	test_capture();
	test_provider_result();
	test_max_concurrent();
	UNIT_MAIN_END;
}
