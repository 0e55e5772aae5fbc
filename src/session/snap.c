/* The snapshot worker of a session: the tree is the session's own view
 * (the kernel's merge of its upper dir over its base, or the copy-mode
 * tree itself), read while the session's cgroup is frozen. */
#define _GNU_SOURCE
#include "src/session/snap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroups/cgroup.h"
#include "src/workspace/snapshot.h"

struct pause {
	struct cg_handle *cg;
	bool paused;
};

/* The test hook, once frozen and once thawed: waits for the test to open
 * the fifo, tells it our pid, and holds until the test sends SIGUSR1 (at
 * most 60 s). Any failure is the test's to see; the snapshot goes on. */
static void hold(void)
{
	const struct timespec tick = {0, 10000000}, limit = {60, 0};
	const char *fifo = getenv(SS_SNAP_HOLD_ENV);
	char pid[32];
	sigset_t usr1;
	int fd;

	if (!fifo)
		return;
	/* Blocked before the test can know our pid: its signal waits for us. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	/* (polled: a fifo says nothing of a reader to come) */
	for (int i = 0; (fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0; i++) {
		if (errno != ENXIO || i == 6000)
			return;
		nanosleep(&tick, NULL);
	}
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	bool told = write(fd, pid, strlen(pid)) == (ssize_t)strlen(pid);
	close(fd);
	while (told && sigtimedwait(&usr1, NULL, &limit) < 0 && errno == EINTR)
		;
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
	/* (the test sees the thaw before the reply) */
	hold();
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
