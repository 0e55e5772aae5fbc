/* libFuzzer target: a diff bundle someone else wrote, read back as
 * `cloister diff apply` reads it, entirely in memory: the bundle checks
 * (ws_bundle_parse: shape, limits, every path), each patch's git header,
 * its base64 content, and its hunks applied to a preimage with every
 * context line checked. Input: the bundle's JSON, then optionally a NUL
 * and the preimage every patch is applied to. */
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

static void one_patch(json_t *p, const char *old, size_t old_len)
{
	const char *diff = json_string_value(json_object_get(p, "diff"));
	const char *path = json_string_value(json_object_get(p, "path"));
	const char *b64 = json_string_value(json_object_get(p, "binaryContent"));
	struct ws_header h;
	char why[256];

	if (b64) {
		unsigned char *bin = NULL;
		size_t n;
		if (ws_b64_decode(b64, &bin, &n) == 0)
			free(bin);
	}
	if (!diff || !path || ws_header_parse(diff, path, &h, why, sizeof(why)) < 0 || !h.hunks)
		return;
	char *out = NULL;
	size_t out_len;
	if (ws_hunks_apply(h.hunks, old, old_len, &out, &out_len, why, sizeof(why)) == 0)
		free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	size_t k = strnlen((const char *)data, len);
	const char *old = k < len ? (const char *)data + k + 1 : "";
	size_t old_len = k < len ? len - k - 1 : 0;
	cl_error err = {0};
	json_t *b = ws_bundle_parse((const char *)data, k, "fuzz", &err);
	json_t *p;
	size_t i;

	if (!b)
		return 0;
	json_array_foreach(json_object_get(b, "patches"), i, p)
		one_patch(p, old, old_len);
	json_decref(b);
	return 0;
}
