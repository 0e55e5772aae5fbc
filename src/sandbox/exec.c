/* The execute step: a helper process runs the native executor with its
 * stdout/stderr on pipes; this process drains them with a cap and reads
 * the final status back over a third pipe. */
#define _GNU_SOURCE
#include "src/util/clock.h"
#include "src/sandbox/exec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/policy/executor.h"
#include "src/policy/runtime.h"
#include "src/util/fdio.h"

/* What the helper sends back: fixed-size, no pointers but the runtime
 * name (a literal of this same binary image). */
struct exec_report {
	int rc;
	struct cl_status st;
	cl_error err;
};

int sb_capture_add(struct sb_capture *c, const char *data, size_t len, uint64_t cap)
{
	size_t room = c->len < cap ? (size_t)(cap - c->len) : 0;
	size_t take = len < room ? len : room;
	char *nd;

	c->dropped += len - take;
	if (take == 0)
		return 0;
	nd = realloc(c->data, c->len + take + 1);
	if (!nd)
		return -ENOMEM;
	memcpy(nd + c->len, data, take);
	c->data = nd;
	c->len += take;
	c->data[c->len] = '\0';
	return 0;
}

int sb_capture_finish(struct sb_capture *c)
{
	char marker[64];
	int n;
	char *nd;

	if (!c->data && !(c->data = calloc(1, 1)))
		return -ENOMEM;
	if (!c->dropped)
		return 0;
	n = snprintf(marker, sizeof(marker), "\xe2\x80\xa6 [truncated %llu bytes]",
	             (unsigned long long)c->dropped);
	nd = realloc(c->data, c->len + (size_t)n + 1);
	if (!nd)
		return -ENOMEM;
	memcpy(nd + c->len, marker, (size_t)n + 1);
	c->data = nd;
	c->len += (size_t)n;
	return 0;
}

void sb_exec_result_free(struct sb_exec_result *r)
{
	free(r->out.data);
	free(r->err.data);
	memset(r, 0, sizeof(*r));
}

/* ---- helper process (forked; runs the executor, then exits) ---- */
static void __attribute__((noreturn)) helper(const struct cl_policy *p, int out, int err_fd,
                                             int report_fd, pid_t parent, const sigset_t *orig)
{
	struct exec_report rep;
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);

	/* The executor hands this mask on to the command: the caller's own. */
	sigprocmask(SIG_SETMASK, orig, NULL);

	/* If cloister dies, the helper dies, and die-with-parent takes the
	 * sandbox with it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(125);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out, 1) < 0 || dup2(err_fd, 2) < 0)
		_exit(125);
	memset(&rep, 0, sizeof(rep));
	cl_status_init(&rep.st);
	rep.rc = cl_runtime_run(p, &rep.st, &rep.err);
	if (cl_write_all(report_fd, &rep, sizeof(rep)) < 0)
		_exit(125);
	_exit(0);
}

/* How long a docker or codeplane helper has to remove its container or
 * workspace once stopped. */
#define SB_DOCKER_STOP_GRACE_MS 30000

/* Executors whose sandbox outlives a killed helper: stopped with SIGTERM. */
static bool remote_sandbox(const struct cl_policy *p)
{
	return p->runtime == CL_RT_DOCKER || p->runtime == CL_RT_CODEPLANE;
}

struct drain {
	int fd[3];           /* stdout, stderr, report */
	int sig_fd;          /* cancellation signals, or -1 */
	int cancelled_by;
	struct sb_capture *cap[2];
	char report[sizeof(struct exec_report)];
	size_t report_len;
};

static int drain_once(struct drain *d, uint64_t max_output, int timeout_ms)
{
	struct pollfd pf[4];
	char buf[65536];
	int n = 0, map[4];

	for (int i = 0; i < 3; i++)
		if (d->fd[i] >= 0) {
			pf[n].fd = d->fd[i];
			pf[n].events = POLLIN;
			map[n++] = i;
		}
	if (d->sig_fd >= 0) {
		pf[n].fd = d->sig_fd;
		pf[n].events = POLLIN;
		map[n++] = 3;
	}
	if (poll(pf, (nfds_t)n, timeout_ms) < 0)
		return errno == EINTR ? 0 : -errno;
	for (int j = 0; j < n; j++) {
		int i = map[j];
		ssize_t got;
		if (!(pf[j].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (i == 3) {
			struct signalfd_siginfo si;
			if (read(d->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si) && !d->cancelled_by)
				d->cancelled_by = (int)si.ssi_signo;
			continue;
		}
		if (i == 2)
			got = read(d->fd[2], d->report + d->report_len, sizeof(d->report) - d->report_len);
		else
			got = read(d->fd[i], buf, sizeof(buf));
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0 || (i == 2 && (d->report_len += (size_t)got) == sizeof(d->report))) {
			close(d->fd[i]);
			d->fd[i] = -1;
			continue;
		}
		if (i < 2 && sb_capture_add(d->cap[i], buf, (size_t)got, max_output) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* A codeplane run whose command ran but whose result could not be
 * collected failed in execution, not in spawning; a stream that tried to
 * escape the result dir is a path escape. */
static enum sb_code report_code(const struct exec_report *r)
{
	if (!r->st.runtime || strcmp(r->st.runtime, "codeplane") != 0 || r->st.wall_ms <= 0)
		return SB_PROCESS_SPAWN_FAILED;
	return r->err.errnum == EXDEV ? SB_TOOL_PATH_ESCAPE : SB_EXECUTION_FAILED;
}

int sb_exec(const struct cl_policy *p, uint64_t max_output, struct sb_exec_result *r,
            struct sb_error *e)
{
	int out[2] = {-1, -1}, errp[2] = {-1, -1}, rep[2] = {-1, -1};
	struct drain d;
	struct exec_report report;
	pid_t parent = getpid(), pid;
	/* A backstop only: the executor enforces the timeout itself; this
	 * catches a helper that never reports. */
	double deadline = cl_mono_ms() + (double)(p->timeout_ms ? p->timeout_ms : 600000) + 120000.0;
	bool killed = false;
	double stop_at = 0;
	int status, rc = 0, sig_fd = -1;
	bool masked = false;
	sigset_t cancel, orig;

	memset(r, 0, sizeof(*r));
	cl_status_init(&r->st);
	/* Cancellation: the signals are taken by a signalfd so the run can be
	 * killed and still recorded and cleaned up. */
	sigemptyset(&cancel);
	sigaddset(&cancel, SIGTERM);
	sigaddset(&cancel, SIGINT);
	sigaddset(&cancel, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &cancel, &orig) < 0 || !(masked = true) ||
	    (sig_fd = signalfd(-1, &cancel, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		rc = sb_fail(e, SB_PROCESS_SPAWN_FAILED, errno, NULL, "watching for cancellation");
		goto close_all;
	}
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0) {
		rc = sb_fail(e, SB_PROCESS_SPAWN_FAILED, errno, NULL, "creating output pipes");
		goto close_all;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		rc = sb_fail(e, SB_PROCESS_SPAWN_FAILED, errno, NULL, "starting the sandbox helper");
		goto close_all;
	}
	if (pid == 0)
		helper(p, out[1], errp[1], rep[1], parent, &orig);
	/* ---- parent: drain until all three pipes are closed ---- */
	close(out[1]);
	close(errp[1]);
	close(rep[1]);
	out[1] = errp[1] = rep[1] = -1;
	memset(&d, 0, sizeof(d));
	d.fd[0] = out[0];
	d.fd[1] = errp[0];
	d.fd[2] = rep[0];
	out[0] = errp[0] = rep[0] = -1;
	d.cap[0] = &r->out;
	d.cap[1] = &r->err;
	d.sig_fd = sig_fd;
	while (rc == 0 && (d.fd[0] >= 0 || d.fd[1] >= 0 || d.fd[2] >= 0)) {
		/* Killing the helper takes a native sandbox with it
		 * (die-with-parent). A docker container outlives a killed
		 * client: that helper gets SIGTERM, removes the container and
		 * exits, and only one that has not within the grace is killed. */
		if (!killed && (cl_mono_ms() > deadline || d.cancelled_by)) {
			kill(pid, remote_sandbox(p) ? SIGTERM : SIGKILL);
			killed = true;
			stop_at = cl_mono_ms();
		}
		if (killed && remote_sandbox(p) && cl_mono_ms() - stop_at > SB_DOCKER_STOP_GRACE_MS)
			kill(pid, SIGKILL);
		rc = drain_once(&d, max_output, 1000);
	}
	for (int i = 0; i < 3; i++)
		if (d.fd[i] >= 0)
			close(d.fd[i]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	r->cancelled_by = d.cancelled_by;
	close(sig_fd);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	if (rc < 0)
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, -rc, NULL, "capturing the sandbox output");
	if (sb_capture_finish(&r->out) < 0 || sb_capture_finish(&r->err) < 0)
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, ENOMEM, NULL, "capturing the sandbox output");
	if (r->cancelled_by) {
		r->st.signal = r->cancelled_by;
		r->st.exit_code = 128 + r->cancelled_by;
		r->st.output_truncated = r->out.dropped || r->err.dropped;
		return 0;
	}
	if (d.report_len != sizeof(report))
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, 0, NULL,
		               "the sandbox helper exited without a report (status %d)%s", status,
		               killed ? "; killed after the deadline" : "");
	memcpy(&report, d.report, sizeof(report));
	r->st = report.st;
	r->st.output_truncated = r->out.dropped || r->err.dropped;
	if (report.rc < 0) {
		enum sb_code code = report_code(&report);
		/* A refused stream's message says why; its errno only classified it. */
		if (code != SB_PROCESS_SPAWN_FAILED && (report.err.errnum == EXDEV || report.err.errnum == EFBIG ||
		                                        report.err.errnum == EINVAL || report.err.errnum == EPROTO))
			report.err.errnum = 0;
		return sb_from_cl(e, code, &report.err);
	}
	return 0;
close_all:
	if (sig_fd >= 0)
		close(sig_fd);
	if (masked)
		sigprocmask(SIG_SETMASK, &orig, NULL);
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0) close(out[i]);
		if (errp[i] >= 0) close(errp[i]);
		if (rep[i] >= 0) close(rep[i]);
	}
	return rc;
}
