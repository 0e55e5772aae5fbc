/* The snapshot worker of a session: the tree is the session's own view
 * (the kernel's merge of its upper dir over its base, or the copy-mode
 * tree itself), read while the session's cgroup is frozen. */
#define _GNU_SOURCE
#include "src/session/snap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroups/cgroup.h"
#include "src/workspace/snapshot.h"

struct pause {
	struct cg_handle *cg;
	bool paused;
};

/* The test hook: blocks until the test opens the fifo, and tells it who
 * to kill. Any failure is the test's to see; the snapshot goes on. */
static void hold(void)
{
	const char *fifo = getenv(SS_SNAP_HOLD_ENV);
	char pid[32];
	int fd;

	if (!fifo || (fd = open(fifo, O_WRONLY | O_CLOEXEC)) < 0)
		return;
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (write(fd, pid, strlen(pid)) < 0) {
		/* the test is gone: nothing to hold for */
	}
	close(fd);
}

static int freeze(void *ctx, cl_error *err)
{
	struct pause *p = ctx;
	int rc = cg_freeze(p->cg, err);

	if (rc < 0)
		return cl_wrap(err, "pausing the session");
	p->paused = rc == 1;
	hold();
	return 0;
}

/* Also the supervisor's job when it reaps this worker: a worker killed
 * between freeze and thaw must not leave the session frozen. */
static void thaw(void *ctx)
{
	struct pause *p = ctx;

	cg_thaw(p->cg);
}

_Noreturn void ss_snap_main(const struct ns_live *l, const struct ws_run *w, const char *session_id,
                            const struct ss_req *r, int conn)
{
	struct pause p = {.cg = l->cg};
	char label[64], out[WS_SNAP_ID_MAX + 1];
	cl_error err = {0};
	/* Copy mode: the upper dir is the whole tree the session sees; else
	 * the kernel merges it over the base, as the session's mount does. */
	const struct ws_snap_src src = {.upper = w->upper, .base = w->copy ? NULL : w->lower,
	                                .root = w->dir, .label = label, .pause = freeze,
	                                .resume = thaw, .ctx = &p};

	snprintf(label, sizeof(label), "session:%s", session_id);
	if (ws_snap_build(&src, r->snap_id, out, &err) < 0) {
		char msg[CL_ERROR_MSG_MAX];
		cl_error_format(&err, msg, sizeof(msg));
		ss_reply_send(conn, 125, 0, "cloister: workspace snapshot of session %s: %s", session_id, msg);
		_exit(0);
	}
	ss_reply_send(conn, 0, p.paused ? 0 : SS_RF_UNPAUSED, "%s", out);
	_exit(0);
}
