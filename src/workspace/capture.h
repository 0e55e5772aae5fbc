/* Diff capture: an overlay's upper dir against its lower dir becomes the
 * diff bundle of DESIGN.md section 6 (docs/workspaces.md). */
#ifndef WS_CAPTURE_H
#define WS_CAPTURE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "src/util/error.h"

#define WS_MAX_PATCHES 1000
#define WS_MAX_BUNDLE_BYTES (100ULL << 20)

/* Why a capture failed: the limits are the caller's to report as such. */
enum ws_fail { WS_FAIL_IO, WS_FAIL_LIMIT, WS_FAIL_UNSUPPORTED };

/* Builds {"seq","baseRef","patches"} from the upper dir upper_fd over the
 * lower dir lower_fd (both directory fds; nothing is followed); with copy,
 * upper_fd is a whole changed copy of the lower tree instead. skip (or
 * NULL) names a top-level entry left out of both (spec mode: .smithers).
 * On error *bundle is NULL, err says why, *why what kind of failure. */
/* *skipped (the caller's to free, also on error) gets [{path, type}]
 * of the special files (fifos, sockets, devices) left out. */
/* git_ignore: paths git's ignore rules of the base tree ignore are left
 * out of the bundle and of baseRef, and not walked (ignore.h). */
int ws_capture(int lower_fd, int upper_fd, bool copy, const char *skip, bool git_ignore, uint64_t seq,
               json_t **bundle, json_t **skipped, enum ws_fail *why, cl_error *err);
/* One line on stderr per entry of skipped, prefixed with what (DIR). */
void ws_skipped_print(const char *what, const json_t *skipped);
/* "sha256:<hex>" of the tree at dir_fd into out[72]: every regular file
 * and symlink in it as (mode, path, git blob id of its content); skip as
 * for ws_capture. */
/* With ig, the paths it ignores are left out (and each walked
 * directory's .gitignore is added to it first). */
struct ws_ignore;
int ws_base_ref(int dir_fd, const char *skip, struct ws_ignore *ig, char out[72], cl_error *err);

/* ".git" in any case: left out of capture and baseRef, refused by apply. */
bool ws_is_git_dir(const char *name);

#endif
