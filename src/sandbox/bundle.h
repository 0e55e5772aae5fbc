/* Result bundle validation (Smithers' rules): README.md manifest, size and
 * count limits, no symlinks, patch paths inside patches/. Never follows a
 * symlink: everything is opened relative to the bundle's directory fd. */
#ifndef SB_BUNDLE_H
#define SB_BUNDLE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "src/sandbox/sberror.h"

#define SB_MAX_BUNDLE_BYTES (100ull * 1024 * 1024)
#define SB_MAX_README_BYTES (5ull * 1024 * 1024)
#define SB_MAX_PATCH_FILES 1000
#define SB_OUTPUT_MAX_DEPTH 16
#define SB_OUTPUT_MAX_ARRAY 512
#define SB_OUTPUT_MAX_STRING (64 * 1024)

struct sb_bundle {
	json_t *manifest;      /* README.md as read and checked */
	const char *status;    /* finished | failed | cancelled (in manifest) */
	uint64_t size_bytes;   /* regular files, summed */
	char **patch_files;    /* bundle-relative "patches/....patch" */
	size_t n_patch_files;
	bool has_logs;         /* logs/stream.ndjson is a regular file */
};

/* Validates the bundle at path into b (freed on failure). */
int sb_bundle_validate(const char *path, struct sb_bundle *b, struct sb_error *e);
/* The same for a bundle at rel beneath dirfd (a result/ the sandbox wrote):
 * opened with no symlink on the way; path names it in messages. */
int sb_bundle_validate_at(int dirfd, const char *rel, const char *path, struct sb_bundle *b,
                          struct sb_error *e);
void sb_bundle_free(struct sb_bundle *b);
/* {"status":..,"bundleSizeBytes":..,"patchFiles":[..],"logsPath":..}. */
json_t *sb_bundle_to_json(const struct sb_bundle *b, const char *path);

/* Pure pieces, unit-tested. */
/* README text -> manifest object (trimmed, JSON object, valid status). */
int sb_manifest_parse(const char *text, size_t len, json_t **out, struct sb_error *e);
/* Depth, array-length and string-length bounds on the outputs JSON. */
int sb_json_within_bounds(const json_t *v, const char *field, struct sb_error *e);
/* A patch path (relative to the bundle, or absolute) must stay in patches/. */
int sb_patch_path_check(const char *bundle_path, const char *patch, struct sb_error *e);

#endif
