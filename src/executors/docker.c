/* The docker executor: the policy as one container under a known name,
 * attached before start, removed by force whatever happens (a killed
 * client would leave a running container behind). Engine API only. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "src/util/clock.h"
#include "src/policy/executor.h"
#include "src/executors/docker_acct.h"
#include "src/executors/docker_api.h"
#include "src/executors/docker_body.h"
#include "src/executors/docker_gc.h"
#include "src/executors/docker_seccomp.h"
#include "src/executors/docker_tty.h"
#include "src/executors/uhttp.h"
#include "src/util/fdio.h"
#include "src/util/term.h"

#define API_MS 60000

struct dock {
	const char *sock;
	char name[48];
	char id[80];
	bool removed;
	int attach_fd;
	int sig_fd;
	sigset_t old_mask;
	bool mask_set;
	bool tty;          /* the container has a Tty; the caller's terminal goes raw */
	struct dk_acct acct;
};

static int docker_available(const struct cl_policy *p, cl_error *err)
{
	const char *sock = cl_docker_socket(err);

	return sock ? cl_docker_ping(sock, err) : cl_error_code(err);
}

/* cloister-<pid>-<random>: unique, and findable by whoever cleans up. */
static int make_name(struct dock *d, cl_error *err)
{
	unsigned char r[6];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return cl_fail_errno(err, "naming the container");
	snprintf(d->name, sizeof(d->name), "cloister-%d-%02x%02x%02x%02x%02x%02x", (int)getpid(),
	         r[0], r[1], r[2], r[3], r[4], r[5]);
	return 0;
}

/* Create errors are docker's, not the command's: all 125. */
static int create_container(struct dock *d, const struct cl_policy *p, cl_error *err)
{
	char *seccomp = NULL, path[96];
	json_t *body, *resp = NULL;
	int status = 0, rc = cl_docker_seccomp(p, &seccomp, err);

	if (rc < 0)
		return rc;
	body = cl_docker_body(p, seccomp, err);
	free(seccomp);
	if (!body)
		return cl_error_code(err);
	if (d->tty)
		cl_docker_tty_body(body);
	/* Whose container this is, for `cloister gc` should we be killed. */
	if (cl_docker_owner_labels(json_object_get(body, "Labels"), err) < 0) {
		json_decref(body);
		return cl_error_code(err);
	}
	/* Under our accounting cgroup (itself under --cgroup-parent's),
	 * named in a label for gc should we be killed. */
	if (d->acct.parent[0]) {
		json_object_set_new(json_object_get(body, "HostConfig"), "CgroupParent",
		                    json_string(d->acct.parent));
		json_object_set_new(json_object_get(body, "Labels"), CL_DK_ACCT_LABEL,
		                    json_string(d->acct.parent));
	}
	snprintf(path, sizeof(path), "/containers/create?name=%s", d->name);
	rc = cl_docker_call(d->sock, "POST", path, body, API_MS, &status, &resp, err);
	json_decref(body);
	if (rc == 0 && status == 404)
		rc = cl_fail(err, 0, "docker: image %s not found (import or pull it, or choose one "
		             "with --image or CLOISTER_DOCKER_IMAGE): %s", cl_docker_image(p),
		             cl_docker_message(resp));
	else if (rc == 0 && status != 201)
		rc = cl_fail(err, 0, "docker: creating the container: %s", cl_docker_message(resp));
	else if (rc == 0 && !json_is_string(json_object_get(resp, "Id")))
		rc = cl_fail(err, EPROTO, "docker: creating the container: no Id in the answer");
	if (rc == 0)
		snprintf(d->id, sizeof(d->id), "%s", json_string_value(json_object_get(resp, "Id")));
	json_decref(resp);
	return rc;
}

/* Cancels (SIGINT, SIGTERM, SIGHUP) arrive on a signalfd, so the relay
 * loop can remove the container before cloister exits. */
static int block_signals(struct dock *d, cl_error *err)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	/* A window size change, passed on to the container's terminal. */
	if (d->tty)
		sigaddset(&set, SIGWINCH);
	if (sigprocmask(SIG_BLOCK, &set, &d->old_mask) < 0)
		return cl_fail_errno(err, "blocking signals");
	d->mask_set = true;
	d->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return d->sig_fd < 0 ? cl_fail_errno(err, "creating a signalfd") : 0;
}

static int docker_create(const struct cl_policy *p, void **state, cl_error *err)
{
	struct dock *d = calloc(1, sizeof(*d));
	int rc;

	if (!d)
		return cl_fail(err, ENOMEM, "docker executor");
	d->attach_fd = -1;
	d->sig_fd = -1;
	d->acct = (struct dk_acct){.cpu_fd = -1, .mem_fd = -1};
	d->tty = cl_docker_tty_wanted(p);
	d->sock = cl_docker_socket(err);
	rc = d->sock ? make_name(d, err) : cl_error_code(err);
	/* Cancels are held before the container exists: from its creation on,
	 * a SIGTERM must reach the loop that removes it, never end us first.
	 * They are held before the accounting cgroup too, so that is removed. */
	if (rc == 0)
		rc = block_signals(d, err);
	if (rc == 0)
		cl_dk_acct_prepare(&d->acct, d->sock, d->name, p->limits.cgroup_parent);
	if (rc == 0)
		rc = create_container(d, p, err);
	if (rc < 0) {
		cl_dk_acct_release(&d->acct);
		if (d->sig_fd >= 0)
			close(d->sig_fd);
		if (d->mask_set)
			sigprocmask(SIG_SETMASK, &d->old_mask, NULL);
		free(d);
		return rc;
	}
	*state = d;
	return 0;
}

/* Start failures that mean the command itself: 127 not found, 126 not
 * executable, as a shell (and `docker run`) reports them. */
static int start_failure_code(const char *msg)
{
	if (strstr(msg, "executable file not found") || strstr(msg, "no such file or directory"))
		return 127;
	if (strstr(msg, "permission denied"))
		return 126;
	return 125;
}

static int start_container(struct dock *d, struct cl_status *st, cl_error *err)
{
	char path[160];
	json_t *resp = NULL;
	int status = 0, rc;

	snprintf(path, sizeof(path), "/containers/%s/start", d->id);
	rc = cl_docker_call(d->sock, "POST", path, NULL, API_MS, &status, &resp, err);
	if (rc == 0 && status != 204 && status != 304) {
		const char *m = cl_docker_message(resp);
		st->exit_code = start_failure_code(m);
		/* The command never ran: said on stderr, the code is docker's. */
		fprintf(stderr, "cloister: docker: starting the container: %s\n", m);
		rc = 1;
	}
	json_decref(resp);
	return rc;
}

struct relay {
	unsigned char hdr[8];
	size_t hdr_n;
	size_t left;        /* payload bytes left in the current frame */
	int out_fd;
	uint64_t passed, limit;
	bool truncated;
	bool raw;           /* a Tty stream: bytes only, no frame headers */
};

/* Up to the output limit onto fd. */
static void pass_on(struct relay *r, int fd, const unsigned char *b, size_t n)
{
	if (r->limit && r->passed + n > r->limit) {
		n = (size_t)(r->limit - r->passed);
		r->truncated = true;
	}
	if (n && cl_write_all(fd, b, n) < 0)
		r->truncated = true;
	r->passed += n;
}

static void relay_bytes(struct relay *r, const unsigned char *b, size_t n)
{
	if (r->raw) {
		pass_on(r, 1, b, n);
		return;
	}
	while (n) {
		if (r->hdr_n < 8) {
			size_t take = 8 - r->hdr_n < n ? 8 - r->hdr_n : n;
			memcpy(r->hdr + r->hdr_n, b, take);
			r->hdr_n += take;
			b += take;
			n -= take;
			if (r->hdr_n == 8) {
				r->out_fd = r->hdr[0] == 2 ? 2 : 1;
				r->left = (size_t)r->hdr[4] << 24 | (size_t)r->hdr[5] << 16 |
				          (size_t)r->hdr[6] << 8 | r->hdr[7];
				if (r->left == 0)
					r->hdr_n = 0;
			}
			continue;
		}
		size_t take = r->left < n ? r->left : n;
		pass_on(r, r->out_fd, b, take);
		b += take;
		n -= take;
		r->left -= take;
		if (r->left == 0)
			r->hdr_n = 0;
	}
}

/* One read of our stdin into the container's. Returns the fd to keep
 * polling: 0 (stdin), or -1 once it ended (EOF, or an stdin we cannot
 * read): then the write side of the stream is shut, which closes the
 * container's stdin (StdinOnce). A command that does not read its stdin
 * is never held up by it. */
static int relay_stdin(int attach_fd, unsigned char *buf, size_t len)
{
	ssize_t n = read(0, buf, len);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n > 0 && cl_write_all(attach_fd, buf, (size_t)n) == 0)
		return 0;
	shutdown(attach_fd, SHUT_WR);
	return -1;
}

/* Output until the stream ends (the container exited), the deadline
 * passes or a cancel arrives; the last two remove the container. */
static int relay_until_exit(struct dock *d, const struct cl_policy *p, struct cl_status *st,
                            double t0, cl_error *err)
{
	struct relay r = {.limit = p->output_limit, .raw = d->tty};
	unsigned char buf[65536];
	int in_fd = 0;

	for (;;) {
		struct pollfd pf[3] = {{.fd = d->attach_fd, .events = POLLIN},
		                       {.fd = d->sig_fd, .events = POLLIN},
		                       {.fd = in_fd, .events = POLLIN}};
		int wait = -1;
		if (p->timeout_ms) {
			double left = (double)p->timeout_ms - (cl_mono_ms() - t0);
			wait = left <= 0 ? 0 : (int)left + 1;
		}
		int n = poll(pf, in_fd >= 0 ? 3 : 2, wait);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cl_fail_errno(err, "waiting for the container");
		if (n == 0) {
			/* Removed by force just below: SIGKILL, as native's timeout. */
			st->timed_out = true;
			st->exit_code = 124;
			st->signal = 9;
			break;
		}
		if (pf[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			ssize_t got = read(d->sig_fd, &si, sizeof(si));
			if (got == (ssize_t)sizeof(si) && si.ssi_signo == SIGWINCH) {
				cl_docker_resize(d->sock, d->id);
			} else if (got == (ssize_t)sizeof(si)) {
				st->exit_code = 128 + (int)si.ssi_signo;
				st->signal = (int)si.ssi_signo;
				break;
			}
		}
		if (in_fd >= 0 && (pf[2].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)))
			in_fd = relay_stdin(d->attach_fd, buf, sizeof(buf));
		if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t got = read(d->attach_fd, buf, sizeof(buf));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0)
				return st->output_truncated = r.truncated, 0;
			relay_bytes(&r, buf, (size_t)got);
		}
	}
	st->output_truncated = r.truncated;
	/* Timeout or cancel: the container goes now, not when it exits. */
	if (cl_docker_remove(d->sock, d->id, err) < 0)
		return cl_error_code(err);
	d->removed = true;
	return 1;
}

static int wait_exit(struct dock *d, struct cl_status *st, cl_error *err)
{
	char path[160];
	json_t *resp = NULL;
	int status = 0, rc;

	snprintf(path, sizeof(path), "/containers/%s/wait", d->id);
	rc = cl_docker_call(d->sock, "POST", path, NULL, API_MS, &status, &resp, err);
	if (rc == 0 && (status != 200 || !json_is_integer(json_object_get(resp, "StatusCode"))))
		rc = cl_fail(err, 0, "docker: waiting for the container: %s", cl_docker_message(resp));
	if (rc == 0)
		st->exit_code = (int)json_integer_value(json_object_get(resp, "StatusCode"));
	json_decref(resp);
	return rc;
}

static int docker_execute(void *state, const struct cl_policy *p, struct cl_status *st,
                          cl_error *err)
{
	struct dock *d = state;
	char path[192];
	double t0;
	int rc = 0;

	st->runtime = "docker";
	/* Attach before start: the stream then holds all the output. */
	snprintf(path, sizeof(path), "/containers/%s/attach?stream=1&stdin=1&stdout=1&stderr=1", d->id);
	if ((d->attach_fd = uh_hijack(d->sock, path, err)) < 0)
		rc = d->attach_fd;
	if (rc == 0)
		rc = start_container(d, st, err);
	t0 = cl_mono_ms();
	/* Raw from start on: keystrokes (^C too) go to the container's pty,
	 * which echoes and edits. Sized once running (resize needs that). */
	if (rc == 0 && d->tty) {
		cl_term_raw(0);
		cl_docker_resize(d->sock, d->id);
	}
	if (rc == 0)
		rc = relay_until_exit(d, p, st, t0, err);
	/* The terminal back before anything cloister prints. */
	cl_term_restore();
	if (rc == 0)
		rc = wait_exit(d, st, err);
	st->wall_ms = cl_mono_ms() - t0;
	if (st->output_truncated)
		fprintf(stderr, "cloister: output cut at %llu bytes (--output-limit); the rest "
		        "was discarded\n", (unsigned long long)p->output_limit);
	return rc > 0 ? 0 : rc;
}

/* OOM is read from the container's state, then the container is removed:
 * only then are the accounting counters final (docker removes the
 * container's own cgroup, a child of ours, on its way out). */
static int docker_collect(void *state, const struct cl_policy *p, struct cl_status *st,
                          cl_error *err)
{
	struct dock *d = state;
	char path[160];
	json_t *resp = NULL, *s;
	int status = 0, rc = 0;

	(void)p;
	if (!d->removed) {
		snprintf(path, sizeof(path), "/containers/%s/json", d->id);
		rc = cl_docker_call(d->sock, "GET", path, NULL, API_MS, &status, &resp, err);
		s = json_object_get(resp, "State");
		if (rc == 0 && status == 200 && json_is_true(json_object_get(s, "OOMKilled"))) {
			st->oom_killed = true;
			st->exit_code = 137;
			st->signal = 9;
		}
		json_decref(resp);
	}
	if (rc == 0 && !d->removed) {
		rc = cl_docker_remove(d->sock, d->id, err);
		d->removed = rc == 0;
	}
	if (d->removed)
		cl_dk_acct_read(&d->acct, st);
	return rc;
}

static void docker_cleanup(void *state)
{
	struct dock *d = state;
	cl_error err = {0};

	if (!d)
		return;
	cl_term_restore();   /* every way out: an error leaves execute early */
	if (!d->removed && cl_docker_remove(d->sock, d->id, &err) < 0)
		cl_error_print(&err);
	/* After the container: its cgroup is a child of ours. */
	else
		cl_dk_acct_release(&d->acct);
	if (d->attach_fd >= 0)
		close(d->attach_fd);
	if (d->sig_fd >= 0)
		close(d->sig_fd);
	/* Signals that arrived during the run were handled there; unblocking
	 * last means none can kill us before the container is gone. */
	if (d->mask_set)
		sigprocmask(SIG_SETMASK, &d->old_mask, NULL);
	free(d);
}

const struct cl_executor cl_docker_executor = {
	.name = "docker",
	.available = docker_available,
	.create = docker_create,
	/* Binds carry the inputs; create already named them. */
	.ship = NULL,
	.execute = docker_execute,
	.collect = docker_collect,
	.cleanup = docker_cleanup,
};
