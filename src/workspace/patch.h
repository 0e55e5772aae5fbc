/* One file's change as a diff-bundle patch: git-style header, unified
 * hunks from libgit2 for text, the full new content in base64 for binary. */
#ifndef WS_PATCH_H
#define WS_PATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "src/util/error.h"

/* One side of a change; present = false for the /dev/null side. */
struct ws_side {
	bool present;
	bool exec;           /* mode 100755 (else 100644) */
	bool link;           /* a symlink (120000): data is its target */
	const char *data;
	size_t len;
};

#define WS_OID_HEX 40

/* Git blob id of data, as 40 hex digits + NUL. */
void ws_blob_id(const char *data, size_t len, char out[WS_OID_HEX + 1]);
/* A NUL byte anywhere (git looks at the first 8000 bytes only), or
 * content that is not UTF-8: what a JSON string cannot carry. */
bool ws_is_binary(const char *data, size_t len);
bool ws_utf8_valid(const char *data, size_t len);
/* The patch object for path (old -> new, not both absent), or NULL with err
 * set. Returns NULL and *same = true when nothing changed. */
json_t *ws_patch_make(const char *path, const struct ws_side *old, const struct ws_side *new_,
                      bool *same, cl_error *err);
/* Base64 (RFC 4648, padded). Returns a malloc'd string / decoded buffer. */
char *ws_b64_encode(const unsigned char *in, size_t len);
int ws_b64_decode(const char *in, unsigned char **out, size_t *len);

#endif
