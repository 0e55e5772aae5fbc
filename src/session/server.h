/* The session supervisor: the control socket's server, run inside the
 * native launch's supervisor loop (ns/session.h) for the session's life. */
#ifndef SS_SERVER_H
#define SS_SERVER_H

#include <stdint.h>

#include "ns/session.h"
#include "src/session/rundir.h"
#include "src/workspace/state.h"

struct ss_server;

/* How long an accepted connection has to send its request before it is
 * dropped (SS_REQUEST_ENV, for tests only, overrides it). */
#define SS_REQUEST_MS 30000
#define SS_REQUEST_ENV "CLOISTER_SESSION_REQUEST_TIMEOUT_MS"

/* dir: the session's (empty, private) directory; notify_fd: where the
 * id goes once the session is ready ("K<id>"), then closed; request_ms:
 * the request deadline of each connection. */
struct ss_server *ss_server_new(const char *dir, const struct ss_info *info, int notify_fd,
                                uint64_t request_ms);
/* The session's workspace (w outlives s), for snapshots; without it a
 * snapshot request is refused. */
void ss_server_set_workspace(struct ss_server *s, const struct ws_run *w);
const struct ns_session_ops *ss_server_ops(struct ss_server *s);
/* After the launch returned (init gone, cgroup removed): waits for the
 * workers (nothing of the session runs after this). */
void ss_server_drain(struct ss_server *s);
/* Then (drained again if need be): removes the socket and state and
 * answers pending `rm` requests, with fail as their error if not NULL
 * (the workspace capture failed, say); frees s. */
void ss_server_finish(struct ss_server *s, const char *fail);

#endif
