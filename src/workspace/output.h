/* Writing a captured diff bundle to the caller's file, whole or not at all. */
#ifndef WS_OUTPUT_H
#define WS_OUTPUT_H

#include <jansson.h>

#include "src/util/error.h"

/* Writes bundle as JSON to path through a temporary file in the same
 * directory renamed over it: a reader sees the old file or the whole new
 * one. 0 or a negative code with err set. */
int ws_bundle_write(const json_t *bundle, const char *path, cl_error *err);

#endif
