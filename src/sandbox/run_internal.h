/* Shared between the lifecycle steps (run.c) and collect (collect.c):
 * the state of one run and its event, row and heartbeat helpers. */
#ifndef SB_RUN_INTERNAL_H
#define SB_RUN_INTERNAL_H

#include <jansson.h>

#include "src/util/clock.h"
#include "src/sandbox/exec.h"
#include "src/sandbox/layout.h"
#include "src/sandbox/run.h"
#include "src/workspace/state.h"

struct run {
	const struct sb_spec *s;
	const struct sb_run_opts *o;
	struct sb_secrets *secrets;
	struct sb_layout l;
	char *config_json;
	double child_started;
	bool has_ws;              /* spec "workspace": rootDir as an overlay */
	struct ws_run ws;
};

/* extra and payload/fields are stolen. */
void sb_run_progress(struct run *r, const char *stage, int pct, json_t *extra);
void sb_run_event(struct run *r, const char *type, json_t *payload);
void sb_run_update(struct run *r, const char *status, json_t *fields);
/* A final status and its final event, recorded together (one transaction). */
void sb_run_finish(struct run *r, const char *status, json_t *fields, const char *type, json_t *payload);
/* Monotonic milliseconds (durations of the run's steps). */
static inline double sb_run_mono_ms(void)
{
	return cl_mono_ms();
}

/* The runner's result (pres) -> bundle, validation, gate, *result. */
int sb_step_collect(struct run *r, const struct sb_exec_result *x, json_t *pres, json_t **result,
                    struct sb_error *e);
/* A timed-out run: failed bundle, result with reason timeout; -ETIMEDOUT. */
int sb_step_timed_out(struct run *r, const struct sb_exec_result *x, json_t **result,
                      struct sb_error *e);

#endif
