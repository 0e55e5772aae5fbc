/* `cloister create`: the run options into a session policy, then a
 * detached supervisor process that builds the sandbox and serves it; the
 * command returns once the session is ready, printing its id. */
#define _GNU_SOURCE
#include "src/cli/session.h"

#include <errno.h>
#include <jansson.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ns/session.h"
#include "src/cli/cli.h"
#include "src/util/limits.h"
#include "src/policy/parse.h"
#include "src/policy/policy_json.h"
#include "src/session/rundir.h"
#include "src/session/server.h"
#include "src/workspace/capture.h"
#include "src/workspace/output.h"
#include "src/workspace/state.h"

#define EXIT_SETUP 125
/* The command cl_cli_run_parse must see; init never runs it. */
#define PLACEHOLDER "cloister-session-init"

struct create_opts {
	const char *name;
	uint64_t idle_s;
	uint64_t request_ms;
};

static void usage(FILE *f)
{
	fputs("usage: cloister create [RUN-OPTIONS] [--name NAME] [--idle-timeout SECONDS]\n"
	      "  RUN-OPTIONS as for `cloister run` (no command, no --json-status, no --output-limit);\n"
	      "  --timeout limits the session's whole life; --workspace DIR --diff-out FILE writes\n"
	      "  the diff bundle when the session ends (before `cloister rm` returns).\n"
	      "  Prints the session id.\n", f);
}

/* Takes --name and --idle-timeout out of argv (into o); the rest, plus the
 * placeholder command, goes to the run parser in *out. */
static int split_args(int argc, char **argv, struct create_opts *o, char ***out, cl_error *err)
{
	char **v = calloc((size_t)argc + 3, sizeof(char *));
	int n = 0;

	if (!v)
		return cl_fail(err, ENOMEM, "parsing the command line");
	*out = v;
	v[n++] = "create";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		bool is_name = strcmp(a, "--name") == 0 || strncmp(a, "--name=", 7) == 0;
		bool is_idle = strcmp(a, "--idle-timeout") == 0 || strncmp(a, "--idle-timeout=", 15) == 0;
		if (!is_name && !is_idle) {
			v[n++] = argv[i];
			continue;
		}
		val = strchr(a, '=') ? strchr(a, '=') + 1 : i + 1 < argc ? argv[++i] : NULL;
		if (!val)
			return cl_fail(err, 0, "option '%s' needs a value", a);
		if (is_name && !ss_valid_name(val))
			return cl_fail(err, 0, "--name '%s': expected 1 to %d letters, digits, '_', '.' "
			               "or '-' (not starting with '.' or '-')", val, SS_NAME_MAX);
		if (is_name)
			o->name = val;
		else if (cl_parse_u64(val, 1, 86400ULL * 365, &o->idle_s) < 0)
			return cl_fail(err, 0, "--idle-timeout '%s': expected whole seconds > 0", val);
	}
	v[n++] = "--";
	v[n++] = PLACEHOLDER;
	return n;
}

static int absolute(char **path, cl_error *err)
{
	char cwd[4096], *abs;

	if (!getcwd(cwd, sizeof(cwd)))
		return cl_fail_errno(err, "--diff-out %s: finding the current directory", *path);
	if (asprintf(&abs, "%s/%s", cwd, *path) < 0)
		return cl_fail(err, ENOMEM, "--diff-out");
	free(*path);
	*path = abs;
	return 0;
}

/* What a session cannot honour is refused, never ignored. */
static int session_policy(struct cl_policy *p, cl_error *err)
{
	if (cl_strv_len(p->argv) != 1 || strcmp(p->argv[0], PLACEHOLDER) != 0)
		return cl_fail(err, 0, "create takes no command: run commands with `cloister exec ID "
		               "-- CMD`");
	if (p->json_status_path || p->json_status_fd >= 0)
		return cl_fail(err, 0, "--json-status is per command: pass it to `cloister exec`");
	if (p->output_limit)
		return cl_fail(err, 0, "--output-limit is not supported by sessions (exec passes stdio "
		               "through without copying it)");
	if (p->diff_out && strcmp(p->diff_out, "-") == 0)
		return cl_fail(err, 0, "--diff-out -: a session has no standard output to write the "
		               "bundle to at `cloister rm`; name a file");
	/* The supervisor works from "/": a relative bundle path is the
	 * caller's, so it is made absolute here. */
	if (p->diff_out && p->diff_out[0] != '/' && absolute(&p->diff_out, err) < 0)
		return -1;
	if (p->runtime == CL_RT_DOCKER || p->runtime == CL_RT_CODEPLANE)
		return cl_fail(err, 0, "sessions run on the native runtime only (--runtime %s)",
		               p->runtime == CL_RT_DOCKER ? "docker" : "codeplane");
	/* Workers rely on the pid namespace: its end takes every command. */
	if (!(p->ns_flags & CLONE_NEWPID) || !(p->ns_flags & CLONE_NEWUSER))
		return cl_fail(err, 0, "sessions need their own user and pid namespaces");
	p->session = true;
	p->pty = false;
	return 0;
}

static int name_taken(const char *name)
{
	char dir[4096];
	struct ss_info in;
	cl_error err = {0};

	return ss_find(name, dir, sizeof(dir), &in, &err) == 0 && ss_alive(in.pid, in.start);
}

/* ===== supervisor: detached, its own session, stdio on /dev/null ===== */
/* Once nothing of the session runs (its pid namespace is gone, workers
 * waited for): the workspace's changes into the bundle. The error, for
 * `rm`, or NULL. */
static const char *capture(const struct cl_policy *p, struct ws_run *w, char *msg, size_t size)
{
	json_t *bundle = NULL, *skipped = NULL;
	enum ws_fail why;
	cl_error err = {0};
	int rc = ws_capture(w->lower_fd, w->upper_fd, w->copy, NULL, w->git_ignore, w->seq, &bundle, &skipped, &why, &err);

	json_decref(skipped);

	if (rc == 0)
		rc = ws_bundle_write(bundle, p->diff_out, &err);
	json_decref(bundle);
	if (rc == 0)
		return NULL;
	cl_wrap(&err, "--workspace %s: capturing the diff", w->dir);
	/* The work stays; rm's reply is short (480 bytes), so where it is
	 * and how to capture it again come first, the error after. */
	char kept[4400];
	cl_error kerr = {0};
	if (ws_run_keep(w, NULL, kept, sizeof(kept), &kerr) == 0)
		snprintf(msg, size, "cloister: the sandbox's changes are kept in %s (`cloister gc` removes them "
		         "after %d days); `cloister diff capture %s %s` captures them again\ncloister: ", kept,
		         WS_KEPT_DAYS, kept, p->diff_out);
	else
		snprintf(msg, size, "cloister: keeping the sandbox's changes failed: %s\ncloister: ", kerr.msg);
	cl_error_format(&err, msg + strlen(msg), size - strlen(msg));
	return msg;
}

_Noreturn static void supervisor(struct cl_policy *p, const char *dir, struct ss_info *info,
                                 uint64_t request_ms, struct ws_run *w, int notify)
{
	struct ss_server *srv;
	struct cl_status st;
	cl_error err = {0};
	char msg[CL_ERROR_MSG_MAX + CL_ERROR_NOTE_MAX + 8], cmsg[CL_ERROR_MSG_MAX + 9000];
	const char *fail = NULL;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC), rc;

	setsid();
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
	    chdir("/") < 0)
		_exit(EXIT_SETUP);
	/* A vanished client must not kill us; workers restore it for commands. */
	signal(SIGPIPE, SIG_IGN);
	info->pid = getpid();
	info->start = ss_proc_start(info->pid);
	srv = ss_server_new(dir, info, notify, request_ms);
	if (srv && w)
		ss_server_set_workspace(srv, w);
	rc = !srv || ss_info_write(dir, info, &err) < 0 ? -1
	     : (cl_status_init(&st), ns_launch_session(p, ss_server_ops(srv), &st, &err));
	if (rc < 0) {
		if (!err.msg[0])
			cl_fail(&err, ENOMEM, "%s", "setting up");
		/* With the errno text: create prints the line as it comes. */
		msg[0] = 'E';
		cl_error_format(&err, msg + 1, sizeof(msg) - 1);
		if (write(notify, msg, strlen(msg)) < 0) {
			/* create is gone */
		}
	}
	/* The bundle before rm is answered: rm returns once it is written
	 * (or says why it is not), and the workspace state is gone. */
	if (srv)
		ss_server_drain(srv);
	if (w && rc == 0 && p->diff_out)
		fail = capture(p, w, cmsg, sizeof(cmsg));
	if (w)
		ws_run_cleanup(w);
	if (srv)
		ss_server_finish(srv, fail);
	else
		ss_dir_remove(dir);
	_exit(0);
}

/* ===== create: waits for "K<id>" or "E<error>" from the supervisor ===== */
static int wait_ready(int fd, const char *dir)
{
	char buf[CL_ERROR_MSG_MAX + CL_ERROR_NOTE_MAX + 8];
	size_t len = 0;
	ssize_t n;

	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	if (buf[0] == 'K') {
		puts(buf + 1);
		return 0;
	}
	if (buf[0] == 'E')
		fprintf(stderr, "cloister: creating the session: %s\n", buf + 1);
	else
		fprintf(stderr, "cloister: creating the session: its supervisor died during setup\n");
	/* The supervisor removes its directory on failure; this covers its
	 * death before it could. */
	ss_dir_remove(dir);
	return EXIT_SETUP;
}

static int start(struct cl_policy *p, const struct create_opts *o)
{
	struct ss_info info = {.created = (int64_t)time(NULL), .idle_s = o->idle_s};
	char root[256], dir[512];
	cl_error err = {0};
	struct ws_run w;
	int pipefd[2], rc;
	pid_t pid;

	if (ss_rundir(root, sizeof(root), true, &err) < 0 || ss_new_id(info.id, &err) < 0) {
		cl_error_print(&err);
		return EXIT_SETUP;
	}
	if (o->name && name_taken(o->name)) {
		fprintf(stderr, "cloister: a session named '%s' exists already (see cloister ls)\n",
		        o->name);
		return EXIT_SETUP;
	}
	snprintf(info.name, sizeof(info.name), "%s", o->name ? o->name : "");
	snprintf(dir, sizeof(dir), "%s/%s", root, info.id);
	/* Here, in the caller's directory (DIR may be relative): the overlay's
	 * state, and its mount added to p. The supervisor inherits it, and
	 * with its fds the lock that marks it in use for `cloister gc`. */
	if (p->workspace && ws_run_prepare(p, &w, p->ws_snapshot, &err) < 0) {
		cl_error_print(&err);
		return EXIT_SETUP;
	}
	if (mkdir(dir, 0700) < 0) {
		fprintf(stderr, "cloister: creating %s: %s\n", dir, strerror(errno));
		if (p->workspace)
			ws_run_cleanup(&w);
		return EXIT_SETUP;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		char note[CL_ERROR_NOTE_MAX];
		int e = errno;
		cl_limit_note(e, 0, true, note, sizeof(note));
		fprintf(stderr, "cloister: starting the session supervisor: %s%s%s%s\n", strerror(e),
		        note[0] ? " (" : "", note, note[0] ? ")" : "");
		rmdir(dir);
		if (p->workspace)
			ws_run_cleanup(&w);
		return EXIT_SETUP;
	}
	if (pid == 0) {
		close(pipefd[0]);
		supervisor(p, dir, &info, o->request_ms, p->workspace ? &w : NULL, pipefd[1]);
	}
	close(pipefd[1]);
	rc = wait_ready(pipefd[0], dir);
	/* A session that never came up has no supervisor left to clean. */
	if (rc != 0 && p->workspace)
		ws_run_cleanup(&w);
	return rc;
}

/* The request deadline: SS_REQUEST_MS, or (tests only, not a user
 * setting) SS_REQUEST_ENV in milliseconds; a bad value is refused. */
static int request_deadline(struct create_opts *o, cl_error *err)
{
	const char *v = getenv(SS_REQUEST_ENV);

	o->request_ms = SS_REQUEST_MS;
	if (v && cl_parse_u64(v, 1, 86400ULL * 1000, &o->request_ms) < 0)
		return cl_fail(err, 0, "%s='%s': expected milliseconds > 0", SS_REQUEST_ENV, v);
	return 0;
}

int ss_cli_create_main(int argc, char **argv)
{
	struct create_opts o = {0};
	struct cl_policy p;
	struct cl_run_opts ro;
	cl_error err = {0};
	char **v = NULL;
	int n, rc;

	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		}
	n = request_deadline(&o, &err) < 0 ? -1 : split_args(argc, argv, &o, &v, &err);
	rc = n < 0 ? n : cl_cli_run_parse(n, v, &p, &ro, &err);
	if (n >= 0 && rc == 0)
		rc = session_policy(&p, &err);
	free(v);
	if (rc < 0) {
		cl_error_print(&err);
		if (n >= 0)
			cl_policy_free(&p);
		return EXIT_SETUP;
	}
	if (ro.dry_run) {
		rc = cl_policy_print_json(&p);
		cl_policy_free(&p);
		return rc < 0 ? EXIT_SETUP : 0;
	}
	rc = start(&p, &o);
	cl_policy_free(&p);
	return rc;
}
