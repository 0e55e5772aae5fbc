/* `cloister run` with or without --workspace: the native executor between
 * preparing the overlay and capturing its diff. */
#ifndef WS_RUN_H
#define WS_RUN_H

#include <stdbool.h>

#include "src/util/error.h"
#include "src/policy/policy.h"
#include "src/policy/status.h"

/* Runs p (adding the workspace overlay when p->workspace is set), then
 * writes the diff bundle to p->diff_out and removes the workspace state.
 * A failure after the command ran sets *after (st is then its outcome). */
int ws_run_native(struct cl_policy *p, struct cl_status *st, bool *after, cl_error *err);

/* `cloister diff capture KEPT FILE`: the changes a failed capture kept
 * (ws_run_keep) into the bundle FILE. */
int ws_kept_capture(const char *kept, const char *file, cl_error *err);

#endif
