/* `cloister diff apply`: a diff bundle onto a target tree, all patches or
 * none, each preimage checked by blob id first. */
#ifndef WS_APPLY_H
#define WS_APPLY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "src/util/error.h"
#include "src/workspace/hunk.h"

enum ws_apply_result {
	WS_APPLIED = 0,
	WS_CONFLICT = 1,      /* target differs from the base for some paths */
	WS_BAD_BUNDLE = 2,    /* malformed bundle or escaping path; err says which */
	WS_IO_FAILED = 3,     /* host failure while writing; rolled back */
};

/* A bundle parsed once: every reader (diff show, the review gate, diff
 * apply --check, diff apply) works from this and nothing else. */
struct ws_bundle {
	json_t *json;              /* holds the strings the patches point into */
	struct ws_patch *patches;
	size_t n;
};

/* Loads and checks a bundle file (shape, limits, every path, every patch's
 * fields against each other). -1 with err set ("TOOL_PATH_ESCAPE: ..." for
 * a path leaving the tree, "patch P: why" for a patch that contradicts
 * itself). */
int ws_bundle_load(const char *file, struct ws_bundle *b, cl_error *err);
/* The same checks on a bundle already in memory (file names it in errors). */
int ws_bundle_parse(const char *text, size_t len, const char *file, struct ws_bundle *b, cl_error *err);
/* The same checks on a bundle object (a capture's); b takes a reference. */
int ws_bundle_read(json_t *json, const char *file, struct ws_bundle *b, cl_error *err);
void ws_bundle_free(struct ws_bundle *b);
/* Applies bundle to target (check_only: verify, write nothing). Conflicts
 * are printed to report, one line per path. */
enum ws_apply_result ws_apply(const struct ws_bundle *b, const char *target, bool check_only, FILE *report,
                              cl_error *err);
/* ws_apply; with refuse_outside_links a symlink pointing out of the tree
 * (ws_link_leaves_tree) is a conflict. */
enum ws_apply_result ws_apply_links(const struct ws_bundle *b, const char *target, bool check_only,
                                    bool refuse_outside_links, FILE *report, cl_error *err);

#endif
