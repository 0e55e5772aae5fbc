/* libFuzzer target: the sandbox spec (sb_spec_parse and its rules), then
 * what `cloister sandbox run` does with an accepted spec without touching
 * the file system: the layout's paths and the policy it builds
 * (sb_layout_paths, sb_build_policy), rendered as JSON. Also the pure
 * rules on the raw bytes (env names, limits, path normalisation). */
#define _GNU_SOURCE
#include <stdlib.h>

#include "src/policy/policy_json.h"
#include "src/sandbox/layout.h"
#include "src/sandbox/policy_build.h"
#include "src/sandbox/spec.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

/* The string rules on the input as a whole (most inputs are not JSON). */
static void rules(const uint8_t *data, size_t len)
{
	char *s = fz_str(data, len), norm[SB_PATH_MAX];

	if (!s)
		return;
	(void)sb_env_name_ok(s);
	(void)sb_memory_limit_ok(s);
	(void)sb_cpu_limit_ok(s);
	(void)sb_js_length(s, len);
	if (sb_path_normalize(s, norm, sizeof(norm)) == 0)
		(void)sb_path_within(norm, "/workspace");
	free(s);
}

static void build(const struct sb_spec *s)
{
	struct sb_layout *l = calloc(1, sizeof(*l));
	struct sb_error e = {0};
	struct cl_policy p;

	if (!l)
		return;
	if (sb_layout_paths(s->root_dir, s->run_id, s->sandbox_id, l, &e) == 0) {
		if (sb_build_policy(s, l, NULL, &p, &e) == 0)
			free(cl_policy_to_json(&p));
		cl_policy_free(&p);
	}
	sb_error_clear(&e);
	free(l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct sb_spec s;
	struct sb_error e = {0};

	rules(data, len);
	if (sb_spec_parse((const char *)data, len, &s, &e) == 0) {
		build(&s);
		sb_spec_free(&s);
	}
	sb_error_clear(&e);
	return 0;
}
