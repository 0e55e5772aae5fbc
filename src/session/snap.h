/* A snapshot of a running session's workspace, taken by a worker the
 * supervisor forks (the loop keeps serving): the session's cgroup frozen
 * while the tree is copied, thawed on every way out. */
#ifndef SS_SNAP_H
#define SS_SNAP_H

#include "ns/session.h"
#include "src/session/proto.h"
#include "src/workspace/state.h"

/* Test hook (not a user setting): a fifo the worker opens for writing and
 * writes its pid to once the session is frozen (before the copy) and once
 * it is thawed (before the reply), then waits for SIGUSR1: the test looks
 * at each state while it holds. Read from the supervisor's environment (the one
 * `cloister create` had). */
#define SS_SNAP_HOLD_ENV "CLOISTER_TEST_SNAP_HOLD"

/* Runs in the forked worker (host namespaces, the supervisor's
 * credentials): snapshots w's tree as r->snap_id (or a new id) with
 * record label "session:<id>", replies on conn (the id, or 125 and why),
 * exits. */
_Noreturn void ss_snap_main(const struct ns_live *l, const struct ws_run *w, const char *session_id,
                            const struct ss_req *r, int conn);

#endif
