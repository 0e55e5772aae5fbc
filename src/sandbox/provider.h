/* Smithers' provider protocol inside a cloister sandbox: the request file
 * the runner reads, the result JSON it returns, and writing an inline
 * result into the result bundle. */
#ifndef SB_PROVIDER_H
#define SB_PROVIDER_H

#include <jansson.h>

#include "src/sandbox/layout.h"
#include "src/sandbox/redact.h"
#include "src/sandbox/sberror.h"
#include "src/sandbox/spec.h"

/* {runId, sandboxId, input, config, allowNetwork, maxOutputBytes, egress
 * (redacted)}. */
json_t *sb_provider_request(const struct sb_spec *s);
/* parseSandboxProviderResult: raw text -> result object with remoteRunId,
 * workspaceId and containerId filled from remote_id when missing. */
int sb_provider_parse_result(const char *raw, const char *remote_id, const char *result_path,
                             const struct sb_secrets *secrets, json_t **out, struct sb_error *e);

struct sb_materialized {
	char bundle_path[PATH_MAX * 2]; /* host path of the bundle to validate */
	char bundle_rel[PATH_MAX / 2];  /* the same, relative to result/ ("" = result/) */
	bool passthrough;             /* the runner named a bundle (bundlePath) */
	json_t *artifacts;            /* array of artifact paths written */
	const char *remote_run_id, *workspace_id, *container_id;  /* borrowed */
};

/* materializeProviderResult: a bundlePath (inside /result) is mapped to the
 * host; a status result is written into result/ (never through a link). */
int sb_provider_materialize(json_t *result, const struct sb_layout *l, const struct sb_secrets *secrets,
                            struct sb_materialized *m, struct sb_error *e);

#endif
