/* One exec or copy in a running session: a worker process forked by the
 * supervisor joins the sandbox's namespaces and starts the command (or the
 * copy) as a child confined exactly like the session's first process. */
#ifndef SS_WORKER_H
#define SS_WORKER_H

#include "ns/session.h"
#include "src/session/proto.h"

/* Runs in the forked worker: serves r on conn (the reply goes there), then
 * exits. Owns r's fds and conn. */
_Noreturn void ss_worker_main(const struct ns_live *l, struct ss_req *r, int conn);

#endif
