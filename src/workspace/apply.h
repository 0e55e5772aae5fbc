/* `cloister diff apply`: a diff bundle onto a target tree, all patches or
 * none, each preimage checked by blob id first. */
#ifndef WS_APPLY_H
#define WS_APPLY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "src/error.h"

enum ws_apply_result {
	WS_APPLIED = 0,
	WS_CONFLICT = 1,      /* target differs from the base for some paths */
	WS_BAD_BUNDLE = 2,    /* malformed bundle or escaping path; err says which */
	WS_IO_FAILED = 3,     /* host failure while writing; rolled back */
};

/* Loads and checks a bundle file (shape, limits, every path). NULL with
 * err set ("TOOL_PATH_ESCAPE: ..." for a path leaving the tree). */
json_t *ws_bundle_load(const char *file, cl_error *err);
/* The same checks on a bundle already in memory (file names it in errors). */
json_t *ws_bundle_parse(const char *text, size_t len, const char *file, cl_error *err);
/* Applies bundle to target (check_only: verify, write nothing). Conflicts
 * are printed to report, one line per path. */
enum ws_apply_result ws_apply(const json_t *bundle, const char *target, bool check_only, FILE *report,
                              cl_error *err);

#endif
