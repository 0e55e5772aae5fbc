/* Resource limits as the launch path sees them: one cgroup per sandbox,
 * created with its limits before the child exists, read and removed after. */
#ifndef CG_CGROUP_H
#define CG_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/util/error.h"
#include "src/policy/policy.h"

struct cg_handle;

struct cg_stats {
	bool oom_killed;
	int64_t memory_peak;   /* bytes, -1 = unknown */
	double user_ms;        /* -1 = unknown */
	double sys_ms;         /* -1 = unknown */
};

/* Parent, before clone. *out stays NULL (rc 0) when p asks for no limits:
 * then no cgroup access is needed at all. */
int cg_create(const struct cl_policy *p, struct cg_handle **out, cl_error *err);
/* Directory fd for clone3(CLONE_INTO_CGROUP), or -1 when the backend cannot
 * do that (v1): then cg_attach() runs before the child is released. */
int cg_clone_fd(const struct cg_handle *h);
int cg_attach(struct cg_handle *h, pid_t pid, cl_error *err);
/* After the sandbox's init exited: OOM, peak memory, cpu time. */
int cg_collect(struct cg_handle *h, struct cg_stats *st);
/* A command's window on a cgroup it shares with others (a session's), in
 * cgroups/window.c: begin before it starts, end after it exited. OOM kills
 * are counted over the window (in the whole cgroup); the peak is the
 * window's on cgroup v2 with a per-reader reset (Linux 6.12+; windowed
 * set), else the cgroup's since it was made. h may be NULL (no cgroup:
 * nothing known). */
struct cg_window {
	int64_t oom_before;   /* -1 = unknown */
	int peak_fd;          /* v2: our own memory.peak, reset at begin, or -1 */
	bool windowed;
};
void cg_window_begin(struct cg_handle *h, struct cg_window *w);
/* Sets st's oom_killed and memory_peak (-1 unknown); closes what begin opened. */
void cg_window_end(struct cg_handle *h, struct cg_window *w, struct cg_stats *st);
/* Pauses every process in h (cgroups/freeze.c): v2 cgroup.freeze, waited
 * for on cgroup.events; v1 the freezer hierarchy, which a session's cgroup
 * has where this user may make one. 1 frozen, 0 when h cannot be frozen
 * (NULL, no freezer), or <0 with err (nothing is left frozen then). */
int cg_freeze(struct cg_handle *h, cl_error *err);
/* Undoes cg_freeze; harmless when h is not frozen or NULL. */
void cg_thaw(struct cg_handle *h);
/* Kills whatever is left inside, removes the cgroup, frees h. NULL is fine. */
void cg_destroy(struct cg_handle *h);
/* Removes cgroups of dead runs in the default places and, when parent is
 * not NULL, below that cgroup path; prints each. Returns how many. */
int cg_gc_sweep(const char *parent);
/* The same sweep (default places only), printing nothing. */
void cg_gc_quiet(void);

#endif
