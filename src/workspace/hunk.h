/* Reading one patch of a bundle back: its git header (modes, blob ids)
 * and applying its hunks to a preimage with every context line checked. */
#ifndef WS_HUNK_H
#define WS_HUNK_H

#include <stdbool.h>
#include <stddef.h>

#include "src/workspace/patch.h"

struct ws_header {
	bool is_new, is_deleted, binary;
	bool old_exec, new_exec, old_link;
	char old_oid[WS_OID_HEX + 1], new_oid[WS_OID_HEX + 1];
	const char *hunks;    /* first "@@" line inside the diff text, or NULL */
};

/* Parses the header of diff (for path). 0, or -1 with why[] filled. */
int ws_header_parse(const char *diff, const char *path, struct ws_header *h, char *why, size_t len);
/* Applies the hunks to old (old_len bytes) into a new malloc'd buffer.
 * 0, or -1 with why[] naming the first hunk that does not fit. */
int ws_hunks_apply(const char *hunks, const char *old, size_t old_len, char **out, size_t *out_len,
                   char *why, size_t len);

#endif
