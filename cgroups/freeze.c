/* Pausing every process of a sandbox's cgroup (a session's, while its
 * workspace is snapshotted): cgroup v2 cgroup.freeze, or the v1 freezer. */
#define _GNU_SOURCE
#include "cgroups/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "src/util/cleanup.h"

#define FREEZE_WAIT_MS 10000

/* The directory whose freezer pauses the sandbox, or -1: v2's only dir,
 * or v1's freezer hierarchy when the session got one. */
static int freezer_fd(const struct cg_handle *h, bool *v2)
{
	*v2 = h && h->be == &cg_backend_v2 && h->n == 1;
	if (*v2)
		return h->dirs[0].fd;
	for (size_t i = 0; h && i < h->n; i++)
		if (strcmp(h->dirs[i].ctrl, "freezer") == 0)
			return h->dirs[i].fd;
	return -1;
}

static bool v2_frozen(int events)
{
	char buf[256];
	ssize_t n = pread(events, buf, sizeof(buf) - 1, 0);
	int64_t v;

	if (n <= 0)
		return false;
	buf[n] = '\0';
	return cg_parse_key(buf, "frozen", &v) == 0 && v == 1;
}

/* cgroup.freeze only asks; cgroup.events says "frozen 1" once every
 * member stopped, and the kernel notifies its pollers (POLLPRI). */
static int v2_freeze(int dfd, cl_error *err)
{
	cl_autoclose int ev = openat(dfd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	int rc;

	if (ev < 0)
		return cl_fail_errno(err, "opening cgroup.events");
	/* The events file is open before the write: a change after it is a
	 * notification we get, none is missed between write and poll. */
	if ((rc = cg_write(dfd, "cgroup.freeze", "1")) < 0)
		return cl_fail(err, -rc, "writing cgroup.freeze");
	while (!v2_frozen(ev)) {
		struct pollfd pf = {.fd = ev, .events = POLLPRI};
		int n = poll(&pf, 1, FREEZE_WAIT_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return cl_fail(err, n < 0 ? errno : ETIMEDOUT, "waiting for the cgroup to freeze");
	}
	return 0;
}

/* The v1 freezer has no notification: FREEZING turns to FROZEN on a
 * read once every task stopped, so the state is read until it does
 * (bounded; the only wait here that polls a file). */
static int v1_freeze(int dfd, cl_error *err)
{
	const struct timespec tick = {0, 1000000};
	char buf[32];
	int rc;

	if ((rc = cg_write(dfd, "freezer.state", "FROZEN")) < 0)
		return cl_fail(err, -rc, "writing freezer.state");
	for (int i = 0; i < FREEZE_WAIT_MS; i++) {
		if (cg_read(dfd, "freezer.state", buf, sizeof(buf)) > 0 && strncmp(buf, "FROZEN", 6) == 0)
			return 0;
		nanosleep(&tick, NULL);
	}
	return cl_fail(err, ETIMEDOUT, "waiting for the freezer cgroup to freeze");
}

int cg_freeze(struct cg_handle *h, cl_error *err)
{
	bool v2;
	int fd = freezer_fd(h, &v2), rc;

	if (fd < 0)
		return 0;
	rc = v2 ? v2_freeze(fd, err) : v1_freeze(fd, err);
	if (rc < 0) {
		/* Half frozen is worse than not frozen: undone at once. */
		cg_thaw(h);
		return rc;
	}
	return 1;
}

void cg_thaw(struct cg_handle *h)
{
	bool v2;
	int fd = freezer_fd(h, &v2);

	if (fd >= 0)
		cg_write(fd, v2 ? "cgroup.freeze" : "freezer.state", v2 ? "0" : "THAWED");
}
