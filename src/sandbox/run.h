/* The sandbox lifecycle: create, ship, execute, collect, cleanup, with
 * Smithers' events, heartbeats and result shapes. */
#ifndef SB_RUN_H
#define SB_RUN_H

#include <jansson.h>
#include <stdbool.h>

#include "src/sandbox/redact.h"
#include "src/sandbox/sberror.h"
#include "src/sandbox/spec.h"

/* Where events and sandbox rows go (the state store); all optional. */
struct sb_store {
	void *ctx;
	/* Before create: admission (concurrency limit) and the pending row. */
	int (*admit)(void *ctx, const struct sb_spec *s, const char *config_json, struct sb_error *e);
	/* Row update: status plus any of remoteRunId/workspaceId/containerId/
	 * bundlePath in fields; with ev_type, event ev_payload is recorded in
	 * the same transaction (a final status and its SandboxCompleted or
	 * SandboxFailed: a crash between them would leave a final row with no
	 * final event, which reconciliation never revisits). */
	void (*update)(void *ctx, const struct sb_spec *s, const char *status, json_t *fields,
	               const char *ev_type, const char *ev_payload);
	/* One event; payload already scrubbed of secrets. */
	void (*event)(void *ctx, const struct sb_spec *s, const char *type, const char *payload);
};

struct sb_run_opts {
	int progress_fd;            /* -1 = none */
	bool dry_run;               /* print the policy, run nothing */
	const struct sb_store *store;
};

/* Runs the whole lifecycle. On success *result is the stdout JSON and
 * *exit_code the process status; on failure e says why. secrets collects
 * what must be scrubbed from anything printed. */
int sb_run(const struct sb_spec *s, const struct sb_run_opts *o, struct sb_secrets *secrets,
           json_t **result, int *exit_code, struct sb_error *e);
/* The values of s that must never be written anywhere. */
int sb_collect_secrets(const struct sb_spec *s, struct sb_secrets *out);
/* The configJson stored with the sandbox row (secrets redacted). */
char *sb_config_json(const struct sb_spec *s, const struct sb_secrets *secrets);

#endif
