/* execute: runs a policy with the native executor in a helper process
 * whose stdout/stderr are pipes, capturing each up to a byte cap. */
#ifndef SB_EXEC_H
#define SB_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/policy/policy.h"
#include "src/sandbox/sberror.h"
#include "src/policy/status.h"

struct sb_capture {
	char *data;          /* NUL-terminated, marker appended if truncated */
	size_t len;
	uint64_t dropped;    /* bytes beyond the cap */
};

struct sb_exec_result {
	struct cl_status st;
	struct sb_capture out, err;
	int cancelled_by;    /* SIGTERM/SIGINT/SIGHUP that cancelled the run, or 0 */
};

/* 0 once the command ran (outcome in r), or PROCESS_SPAWN_FAILED. A
 * SIGTERM, SIGINT or SIGHUP to cloister meanwhile kills the sandbox and
 * is reported in r->cancelled_by (return 0). */
int sb_exec(const struct cl_policy *p, uint64_t max_output, struct sb_exec_result *r,
            struct sb_error *e);
void sb_exec_result_free(struct sb_exec_result *r);
/* Appends data to c keeping at most cap bytes (pure; unit-tested). */
int sb_capture_add(struct sb_capture *c, const char *data, size_t len, uint64_t cap);
/* Appends the "… [truncated N bytes]" marker when bytes were dropped. */
int sb_capture_finish(struct sb_capture *c);

#endif
