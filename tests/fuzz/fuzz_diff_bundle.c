/* libFuzzer target: a diff bundle someone else wrote, read back as
 * `cloister diff apply` reads it, entirely in memory: the bundle checks
 * (ws_bundle_parse: shape, limits, every path, each patch parsed: its git
 * header, its base64 content, its hunks), then each patch's result over a
 * preimage with every context line checked. Input: the bundle's JSON,
 * then optionally a NUL and the preimage every patch is applied to. */
#include <stdlib.h>
#include <string.h>

#include "src/workspace/apply.h"
#include "src/workspace/hunk.h"
#include "src/workspace/patch.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	size_t k = strnlen((const char *)data, len);
	const char *old = k < len ? (const char *)data + k + 1 : "";
	size_t old_len = k < len ? len - k - 1 : 0;
	cl_error err = {0};
	struct ws_bundle b;
	char why[256];

	if (ws_bundle_parse((const char *)data, k, "fuzz", &b, &err) < 0)
		return 0;
	for (size_t i = 0; i < b.n; i++) {
		char *out = NULL;
		size_t out_len;
		if (ws_patch_result(&b.patches[i], old, old_len, &out, &out_len, why, sizeof(why)) == 0)
			free(out);
	}
	ws_bundle_free(&b);
	return 0;
}
