/* The final status of one sandbox run and its JSON form (--json-status). */
#ifndef CL_STATUS_H
#define CL_STATUS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/util/error.h"

struct cl_status {
	int exit_code;            /* what cloister exits with */
	int signal;               /* 0 = not killed by a signal */
	bool timed_out;
	bool oom_killed;
	bool output_truncated;
	double wall_ms;
	double user_ms;           /* < 0 = unknown */
	double sys_ms;
	int64_t memory_peak;      /* < 0 = unknown */
	const char *runtime;
	pid_t child_pid;          /* host pid of the sandbox's first process */
	/* "" or why the requested runtime was replaced by this one (the
	 * recorded fallback event; a fixed array: the status crosses fork). */
	char fallback[256];
	/* "" or the remote sandbox's own id (a Codeplane workspace): a spec
	 * result's remoteRunId/workspaceId/containerId when the runner gives
	 * none. Not in the status JSON. */
	char remote_id[80];
	/* NULL or [{path, type}]: special files the workspace's diff left
	 * out. Set (and owned) by the parent after the run; freed by
	 * cl_status_release. */
	json_t *ws_skipped;
};

void cl_status_init(struct cl_status *st);
void cl_status_release(struct cl_status *st);
/* Serialises st; caller frees. */
char *cl_status_to_json(const struct cl_status *st);
/* Writes the JSON to path (created 0600, replaced) or fd (if >= 0). */
int cl_status_write(const struct cl_status *st, const char *path, int fd, cl_error *err);

#endif
