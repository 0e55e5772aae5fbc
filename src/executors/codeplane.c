/* The codeplane executor: a Codeplane workspace is created for the run,
 * polled until running, the command runs in it over OpenSSH (bash -lc,
 * with the policy's cwd and env), and the workspace is deleted (ephemeral)
 * or suspended (sticky) at cleanup, whatever happened. The workspace is a
 * machine of its own: what of the policy it can honour, and what it
 * refuses, is in docs/executors.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "src/util/clock.h"
#include "src/policy/executor.h"
#include "src/executors/cp_api.h"
#include "src/executors/cp_exec.h"

bool cp_safe_token(const char *s, size_t max, const char *extra)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n >= max || s[0] == '-')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr(extra, *s)))
			return false;
	return true;
}

/* A spec's request, result and result-file binds (and the empty profile
 * over /etc/profile): shipped and collected, not bound. */
static bool spec_bind(const struct cl_policy *p, const struct cl_mount *m)
{
	return p->spec_io && m->kind == CL_MNT_BIND &&
	       (strcmp(m->dest, "/workspace") == 0 || strcmp(m->dest, "/result") == 0 ||
	        strncmp(m->dest, "/workspace/", 11) == 0 || strcmp(m->dest, "/etc/profile") == 0);
}

/* What a remote workspace cannot honour is refused, never dropped. */
static int refuse_unsupported(const struct cl_policy *p, cl_error *err)
{
	const struct cl_limits *l = &p->limits;

	if (l->memory || l->memory_swap >= 0 || l->cpu_quota_us || l->pids || l->cgroup_parent)
		return cl_fail(err, 0, "--memory/--memory-swap/--cpus/--pids/--cgroup-parent cannot be "
		               "applied by the codeplane executor");
	if (p->n_ports || p->n_forwards)
		return cl_fail(err, 0, "--publish/--forward-out are not supported by the codeplane executor");
	if (p->seccomp != CL_SC_DEFAULT || p->caps_keep || p->allow_nested || p->rootfs ||
	    p->argv0 || p->output_limit || p->workspace)
		return cl_fail(err, 0, "the codeplane executor runs the workspace's own system: "
		               "--seccomp, --cap-add, --allow-nested, --rootfs, --output-limit and "
		               "--workspace cannot be applied there");
	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct cl_mount *m = &p->mounts[i];
		if ((m->kind == CL_MNT_BIND && (m->flags & CL_MF_HOST_SYSTEM)) ||
		    m->kind == CL_MNT_PROC || m->kind == CL_MNT_DEV ||
		    (m->kind == CL_MNT_TMPFS && strcmp(m->dest, "/tmp") == 0) || spec_bind(p, m))
			continue;
		return cl_fail(err, 0, "the codeplane executor cannot bind %s: the workspace is "
		               "remote (ship files with a sandbox spec's request bundle)", m->dest);
	}
	return 0;
}

static int cp_available(const struct cl_policy *p, cl_error *err)
{
	struct cp_config c;

	return cp_config_load(&c, err);
}

static int block_signals(struct cp *w, cl_error *err)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, &w->old_mask) < 0)
		return cl_fail_errno(err, "blocking signals");
	w->mask_set = true;
	w->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return w->sig_fd < 0 ? cl_fail_errno(err, "creating a signalfd") : 0;
}

int cp_api_error(const char *what, int status, json_t *body, cl_error *err)
{
	char d[300];

	cp_describe(body, d, sizeof(d));
	return cl_fail(err, 0, "codeplane: %s: HTTP %d: %s", what, status, d);
}

/* Polls until the workspace runs; bounded by CODEPLANE_START_TIMEOUT. */
int cp_wait_running(struct cp *w, cl_error *err)
{
	double end = cl_mono_ms() + w->cfg.start_timeout_s * 1000.0;
	char path[128];

	snprintf(path, sizeof(path), "/workspaces/%s", w->id);
	for (;;) {
		json_t *ws;
		int status, rc = cp_call(&w->cfg, "GET", path, NULL, &status, &ws, err);
		const char *s = json_string_value(json_object_get(ws, "status"));
		if (rc == 0 && status != 200)
			rc = cp_api_error("reading the workspace", status, ws, err);
		if (rc == 0 && s && strcmp(s, "running") == 0) {
			json_decref(ws);
			return 0;
		}
		if (rc == 0 && s && (strcmp(s, "failed") == 0 || strcmp(s, "stopped") == 0))
			rc = cl_fail(err, 0, "codeplane: workspace %s is %s", w->id, s);
		json_decref(ws);
		if (rc < 0)
			return rc;
		if (cl_mono_ms() > end)
			return cl_fail(err, ETIMEDOUT, "codeplane: workspace %s not running after %d s "
			               "(CODEPLANE_START_TIMEOUT)", w->id, w->cfg.start_timeout_s);
		/* The API has no push: a poll, a quarter second apart, which a
		 * cancel ends (cleanup then removes the workspace). */
		struct pollfd pf = {.fd = w->sig_fd, .events = POLLIN};
		if (poll(&pf, 1, 250) > 0)
			return cl_fail(err, ECANCELED, "codeplane: cancelled while workspace %s was starting",
			               w->id);
	}
}

static int create_workspace(struct cp *w, cl_error *err)
{
	unsigned char r[6];
	char name[64];
	json_t *body, *ws;
	int status, rc;

	if (w->name[0]) {
		snprintf(name, sizeof(name), "%s", w->name);
	} else {
		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return cl_fail_errno(err, "naming the workspace");
		snprintf(name, sizeof(name), "cloister-%d-%02x%02x%02x%02x%02x%02x", (int)getpid(), r[0],
		         r[1], r[2], r[3], r[4], r[5]);
	}
	body = json_pack("{s:s}", "name", name);
	if (w->cfg.snapshot)
		json_object_set_new(body, "snapshot_id", json_string(w->cfg.snapshot));
	rc = cp_call(&w->cfg, "POST", "/workspaces", body, &status, &ws, err);
	json_decref(body);
	if (rc == 0 && status != 201)
		rc = cp_api_error("creating a workspace", status, ws, err);
	if (rc == 0 && !cp_safe_token(json_string_value(json_object_get(ws, "id")), sizeof(w->id), "-"))
		rc = cl_fail(err, EPROTO, "codeplane: the new workspace has no usable id");
	if (rc == 0)
		snprintf(w->id, sizeof(w->id), "%s", json_string_value(json_object_get(ws, "id")));
	json_decref(ws);
	return rc;
}

/* The workspace's name and persistence: the spec's "workspace" first,
 * then CODEPLANE_WORKSPACE_NAME / CODEPLANE_PERSISTENCE. */
static int identity(struct cp *w, const struct cl_policy *p, cl_error *err)
{
	const char *name = p->remote_name[0] ? p->remote_name : w->cfg.name;

	w->sticky = p->remote_persistence ? p->remote_persistence == CL_REMOTE_STICKY : w->cfg.sticky;
	if (p->remote_snapshot[0])
		w->cfg.snapshot = p->remote_snapshot;
	if (!name)
		return 0;
	if (!cp_safe_token(name, sizeof(w->name), "._-"))
		return cl_fail(err, 0, "codeplane: workspace name '%.80s': expected 1-63 letters, digits, "
		               "'.', '_' or '-', not starting with '-'", name);
	snprintf(w->name, sizeof(w->name), "%s", name);
	return 0;
}

/* Gives back what create took: the name's lock (the next run with this
 * name may take the workspace), the signalfd and mask, the token's bytes. */
static void release(struct cp *w)
{
	if (w->lock_fd >= 0)
		close(w->lock_fd);
	if (w->sig_fd >= 0)
		close(w->sig_fd);
	if (w->mask_set)
		sigprocmask(SIG_SETMASK, &w->old_mask, NULL);
	memset(w->cfg.token, 0, sizeof(w->cfg.token));
	free(w);
}

static int cp_create(const struct cl_policy *p, void **state, cl_error *err)
{
	struct cp *w = calloc(1, sizeof(*w));
	int rc;

	if (!w)
		return cl_fail(err, ENOMEM, "codeplane executor");
	w->sig_fd = w->lock_fd = -1;
	rc = refuse_unsupported(p, err);
	if (rc == 0)
		rc = cp_config_load(&w->cfg, err);
	if (rc == 0)
		rc = identity(w, p, err);
	if (rc == 0 && p->spec_io)
		rc = cp_spec_paths(w, p, err);
	/* Cancels are held from before the workspace exists, so one always
	 * reaches the cleanup that deletes it. */
	if (rc == 0)
		rc = block_signals(w, err);
	/* A sticky workspace suspended by an earlier run with this name is
	 * resumed; only when there is none is one created (and recorded).
	 * The name's lock is taken first and held until it is suspended
	 * again: two runs never share it. */
	if (rc == 0 && w->sticky && w->name[0])
		rc = cp_sticky_lock(w, err);
	if (rc == 0 && w->sticky && w->name[0])
		rc = cp_sticky_resume(w, err);
	if (rc == 0) {
		rc = create_workspace(w, err);
		if (rc == 0 && w->sticky && w->name[0] && cp_sticky_record(w, err) < 0) {
			/* The workspace exists: cleanup suspends it; say why it will
			 * not be found again. */
			cl_error_print(err);
			memset(err, 0, sizeof(*err));
		}
	}
	if (rc > 0)
		rc = 0;
	if (rc < 0) {
		release(w);
		return rc;
	}
	*state = w;
	/* From here cleanup runs: a workspace that never starts is deleted. */
	return 0;
}

/* Ship: wait for the workspace, then its SSH endpoint (a fresh token each
 * time: it lives about five minutes). */
static int cp_ship(void *state, const struct cl_policy *p, cl_error *err)
{
	struct cp *w = state;
	char path[128];
	json_t *s;
	int status, rc = cp_wait_running(w, err);
	const char *host, *user;

	if (rc < 0)
		return rc;
	snprintf(path, sizeof(path), "/workspaces/%s/ssh", w->id);
	rc = cp_call(&w->cfg, "GET", path, NULL, &status, &s, err);
	if (rc == 0 && status != 200)
		rc = cp_api_error("reading the workspace's ssh access", status, s, err);
	host = json_string_value(json_object_get(s, "ssh_host"));
	if (!host)
		host = json_string_value(json_object_get(s, "host"));
	user = json_string_value(json_object_get(s, "username"));
	w->port = (int)json_integer_value(json_object_get(s, "port"));
	if (rc == 0 && (!cp_safe_token(host, sizeof(w->host), ".-:") ||
	                !cp_safe_token(user, sizeof(w->user), "._-") || w->port < 1 || w->port > 65535))
		rc = cl_fail(err, EPROTO, "codeplane: the workspace's ssh access is malformed");
	if (rc == 0) {
		snprintf(w->host, sizeof(w->host), "%s", host);
		snprintf(w->user, sizeof(w->user), "%s", user);
	}
	json_decref(s);
	if (rc == 0 && w->spec)
		rc = cp_spec_ship(w, err);
	return rc;
}

int cp_append(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s);
	char *nb;

	if (*len + n + 1 > *cap) {
		nb = realloc(*buf, *cap * 2 + n + 1);
		if (!nb)
			return -ENOMEM;
		*buf = nb;
		*cap = *cap * 2 + n + 1;
	}
	memcpy(*buf + *len, s, n + 1);
	*len += n;
	return 0;
}

/* 'x' for a POSIX shell: every byte literal. */
int cp_squote(char **buf, size_t *len, size_t *cap, const char *s)
{
	char one[2] = {0, 0};
	int rc = cp_append(buf, len, cap, "'");

	for (; rc == 0 && *s; s++) {
		one[0] = *s;
		rc = cp_append(buf, len, cap, *s == '\'' ? "'\\''" : one);
	}
	return rc ?: cp_append(buf, len, cap, "'");
}

/* cd WORKDIR && exec env -i HOME="$HOME" K=V... bash -lc 'ARGV': the
 * policy's env only, its cwd (relative to CODEPLANE_WORKDIR), the command
 * as given. */
static char *remote_command(const struct cp *w, const struct cl_policy *p)
{
	size_t len = 0, cap = 256, clen = 0, ccap = 256;
	char *b = malloc(cap), *cmd = malloc(ccap), dir[4096];
	int rc = b && cmd ? 0 : -ENOMEM;

	if (rc == 0) {
		b[0] = cmd[0] = '\0';
		for (size_t i = 0; rc == 0 && p->argv[i]; i++)
			rc = (i ? cp_append(&cmd, &clen, &ccap, " ") : 0) ?: cp_squote(&cmd, &clen, &ccap, p->argv[i]);
	}
	/* A spec's command starts in its request, CODEPLANE_WORKDIR itself. */
	snprintf(dir, sizeof(dir), "%s%s", w->cfg.workdir,
	         !w->spec && p->workdir && strcmp(p->workdir, "/") != 0 ? p->workdir : "");
	rc = rc ?: cp_append(&b, &len, &cap, "cd ") ?: cp_squote(&b, &len, &cap, dir) ?:
	     /* HOME stays the workspace user's own (expanded there): a login
	      * shell's profile needs it; nothing of this host goes along. */
	     cp_append(&b, &len, &cap, " && exec env -i HOME=\"$HOME\"");
	for (size_t i = 0; rc == 0 && p->env && p->env[i]; i++) {
		char *moved = w->spec ? cp_spec_env(w, p->env[i]) : NULL;
		rc = cp_append(&b, &len, &cap, " ") ?: cp_squote(&b, &len, &cap, moved ? moved : p->env[i]);
		free(moved);
	}
	if (rc == 0 && w->spec) {
		char *rd = NULL;
		if (asprintf(&rd, "CLOISTER_RESULT_DIR=%s", w->cfg.result_dir) < 0)
			rc = -ENOMEM;
		rc = rc ?: cp_append(&b, &len, &cap, " ") ?: cp_squote(&b, &len, &cap, rd);
		free(rd);
	}
	rc = rc ?: cp_append(&b, &len, &cap, " bash -lc ") ?: cp_squote(&b, &len, &cap, cmd);
	free(cmd);
	if (rc < 0) {
		free(b);
		return NULL;
	}
	return b;
}

pid_t cp_spawn_ssh(const struct cp *w, const char *remote, int in_fd, int out_fd, cl_error *err)
{
	char port[8], kh[4200];
	const char *argv[24];
	int n = 0;
	pid_t pid;

	snprintf(port, sizeof(port), "%d", w->port);
	argv[n++] = "ssh";
	argv[n++] = "-T";
	argv[n++] = "-o";
	argv[n++] = "BatchMode=yes";
	argv[n++] = "-o";
	argv[n++] = "StrictHostKeyChecking=yes";
	if (w->cfg.known_hosts) {
		snprintf(kh, sizeof(kh), "UserKnownHostsFile=%s", w->cfg.known_hosts);
		argv[n++] = "-o";
		argv[n++] = kh;
	}
	if (w->cfg.identity) {
		argv[n++] = "-o";
		argv[n++] = "IdentitiesOnly=yes";
		argv[n++] = "-i";
		argv[n++] = w->cfg.identity;
	}
	argv[n++] = "-p";
	argv[n++] = port;
	argv[n++] = "-l";
	argv[n++] = w->user;
	argv[n++] = "--";
	argv[n++] = w->host;
	argv[n++] = remote;
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		/* ===== child: becomes ssh, with the caller's stdio but for
		 * in_fd/out_fd ===== */
		sigprocmask(SIG_SETMASK, &w->old_mask, NULL);
		if ((in_fd >= 0 && dup2(in_fd, 0) < 0) || (out_fd >= 0 && dup2(out_fd, 1) < 0))
			_exit(127);
		execvp("ssh", (char **)argv);
		_exit(127);
	}
	if (pid < 0)
		cl_fail_errno(err, "codeplane: starting ssh");
	return pid;
}

int cp_wait_ssh(struct cp *w, pid_t pid, uint64_t timeout_ms, bool *timed_out, int *sig)
{
	double t0 = cl_mono_ms();
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), status = 0;

	/* Until ssh exits, the deadline passes or a cancel arrives; the last
	 * two end ssh (the workspace goes at cleanup). Without a pidfd, only
	 * waitpid is left. */
	while (pidfd >= 0) {
		struct pollfd pf[2] = {{.fd = pidfd, .events = POLLIN}, {.fd = w->sig_fd, .events = POLLIN}};
		struct signalfd_siginfo si;
		int wait = -1, n;
		if (timeout_ms) {
			double left = (double)timeout_ms - (cl_mono_ms() - t0);
			wait = left <= 0 ? 0 : (int)left + 1;
		}
		n = poll(pf, 2, wait);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0) {
			*timed_out = true;
			kill(pid, SIGKILL);
			break;
		}
		if (n > 0 && (pf[1].revents & POLLIN) &&
		    read(w->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			*sig = (int)si.ssi_signo;
			kill(pid, SIGKILL);
			break;
		}
		if (n < 0 || (pf[0].revents & POLLIN))
			break;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (pidfd >= 0)
		close(pidfd);
	return status;
}

static int cp_execute(void *state, const struct cl_policy *p, struct cl_status *st,
                      cl_error *err)
{
	struct cp *w = state;
	char *remote = remote_command(w, p);
	double t0 = cl_mono_ms();
	int status;
	pid_t pid;

	st->runtime = "codeplane";
	snprintf(st->remote_id, sizeof(st->remote_id), "%s", w->id);
	if (!remote)
		return cl_fail(err, ENOMEM, "codeplane: building the command");
	pid = cp_spawn_ssh(w, remote, -1, -1, err);
	free(remote);
	if (pid < 0)
		return cl_error_code(err);
	status = cp_wait_ssh(w, pid, p->timeout_ms, &st->timed_out, &st->signal);
	st->wall_ms = cl_mono_ms() - t0;
	if (st->timed_out)
		st->exit_code = 124;
	else if (st->signal)
		st->exit_code = 128 + st->signal;
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 255) {
		/* ssh's own failure (refused, auth, host key): not the command's. */
		fprintf(stderr, "cloister: codeplane: ssh to workspace %s (%s:%d) failed\n", w->id,
		        w->host, w->port);
		w->ssh_failed = true;
		st->exit_code = 125;
	} else
		st->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return 0;
}

/* A spec's result comes back once the command ended by itself: after a
 * timeout or cancel what it left is not trusted (nor waited for). */
static int cp_collect(void *state, const struct cl_policy *p, struct cl_status *st,
                      cl_error *err)
{
	struct cp *w = state;

	(void)p;
	if (!w->spec || st->timed_out || st->signal || w->ssh_failed)
		return 0;
	return cp_spec_collect(w, err);
}

/* Ephemeral: DELETE (204). Sticky: suspend, for the next run to resume. */
static void cp_cleanup(void *state)
{
	struct cp *w = state;
	cl_error err = {0};
	char path[128];
	json_t *r;
	int status, rc;

	if (!w)
		return;
	snprintf(path, sizeof(path), "/workspaces/%s%s", w->id, w->sticky ? "/suspend" : "");
	rc = cp_call(&w->cfg, w->sticky ? "POST" : "DELETE", path, NULL, &status, &r, &err);
	if (rc == 0 && (w->sticky ? status / 100 != 2 : status != 204))
		rc = cp_api_error(w->sticky ? "suspending the workspace" : "deleting the workspace",
		               status, r, &err);
	json_decref(r);
	if (rc < 0) {
		cp_redact(&w->cfg, &err);
		cl_error_print(&err);
	}
	/* After the suspend: the next run with this name may now take it. */
	release(w);
}

const struct cl_executor cl_codeplane_executor = {
	.name = "codeplane",
	.available = cp_available,
	.create = cp_create,
	.ship = cp_ship,
	.execute = cp_execute,
	.collect = cp_collect,   /* a sandbox spec's result bundle */
	.cleanup = cp_cleanup,
};
