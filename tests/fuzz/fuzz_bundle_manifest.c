/* libFuzzer target: the result bundle's pure checks: the README.md
 * manifest parser (sb_manifest_parse), the outputs bounds
 * (sb_json_within_bounds) and the patch path check (sb_patch_path_check).
 * Input: README text, then optionally a NUL and one patch path per
 * following NUL-separated word. */
#include <stdlib.h>
#include <string.h>

#include "src/sandbox/bundle.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

static void manifest(const char *text, size_t len)
{
	struct sb_error e = {0};
	json_t *m = NULL;

	if (sb_manifest_parse(text, len, &m, &e) == 0) {
		struct sb_error be = {0};
		(void)sb_json_within_bounds(json_object_get(m, "outputs"), "outputs", &be);
		(void)sb_json_within_bounds(m, "manifest", &be);
		sb_error_clear(&be);
		json_decref(m);
	}
	sb_error_clear(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	size_t k = strnlen((const char *)data, len);
	int argc;
	char **paths;

	manifest((const char *)data, k);
	if (k >= len)
		return 0;
	paths = fz_argv("/b/bundle", data + k + 1, len - k - 1, &argc);
	for (int i = 1; paths && i < argc; i++) {
		struct sb_error e = {0};
		(void)sb_patch_path_check(paths[0], paths[i], &e);
		sb_error_clear(&e);
	}
	fz_argv_free(paths);
	return 0;
}
