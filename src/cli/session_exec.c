/* `cloister exec` and `cloister cp`: one request each to a session. exec
 * hands over our stdin/stdout/stderr themselves (no relay; those that are
 * a terminal become a pty of the command's own, relayed: exec_tty.c) and
 * exits with the command's code; cp streams one regular file in or out
 * (cp_host.c) or a tree (cp_tree.c). */
#define _GNU_SOURCE
#include "src/cli/session.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/policy/parse.h"
#include "src/session/client.h"
#include "src/session/cp_host.h"
#include "src/session/cp_tree.h"
#include "src/session/exec_tty.h"
#include "src/policy/status.h"

#define EXIT_SETUP 125

static int fail_msg(const cl_error *err)
{
	cl_error_print(err);
	return EXIT_SETUP;
}

static void exec_usage(FILE *f)
{
	fputs("usage: cloister exec ID|NAME [--env K=V]... [-w DIR] [--timeout SECONDS]\n"
	      "                     [--json-status FILE] [--] COMMAND [ARG...]\n"
	      "  stdio is passed as it is; what is a terminal becomes a pty of the session's own.\n", f);
}

static int null_fd(void)
{
	return open("/dev/null", O_RDWR | O_CLOEXEC);
}

/* A closed stdio fd cannot be passed: /dev/null stands in for it. */
static int stdio_fd(int n)
{
	if (fcntl(n, F_GETFD) >= 0)
		return n;
	return null_fd();
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void write_status(const char *path, const struct ss_reply *rep, double wall)
{
	struct cl_status st;
	cl_error err = {0};

	cl_status_init(&st);
	st.exit_code = rep->code;
	st.signal = (int)(rep->flags >> 8);
	st.timed_out = rep->flags & SS_RF_TIMED_OUT;
	st.oom_killed = rep->flags & SS_RF_OOM;
	st.memory_peak = rep->memory_peak;
	st.wall_ms = wall;
	st.runtime = "native";
	if (cl_status_write(&st, path, -1, &err) < 0)
		cl_error_print(&err);
}

static int add_env(struct ss_buf *b, const char *kv, cl_error *err)
{
	char buf[8192];
	const char *val;

	if (kv[0] == '=' || !kv[0])
		return cl_fail(err, 0, "--env '%s': expected K=V", kv);
	if (strchr(kv, '=')) {
		ss_buf_add(b, 'E', kv);
		return 0;
	}
	/* "--env K" copies K from our environment, as `cloister run` does. */
	val = getenv(kv);
	if (val) {
		if (snprintf(buf, sizeof(buf), "%s=%s", kv, val) >= (int)sizeof(buf))
			return cl_fail(err, 0, "--env %s: value too long", kv);
		ss_buf_add(b, 'E', buf);
	}
	return 0;
}

int ss_cli_exec_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"env", required_argument, NULL, 'e'}, {"workdir", required_argument, NULL, 'w'},
		{"timeout", required_argument, NULL, 't'}, {"json-status", required_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	struct ss_buf b = {0};
	struct ss_reply rep = {.code = EXIT_SETUP};
	const char *status_path = NULL, *key;
	cl_error err = {0};
	uint64_t ms;
	char num[32];
	struct ss_tty *tty = NULL;
	int c, sock, rc, fds[3];
	double t0 = now_ms();

	ss_buf_add(&b, 0, "exec");
	opterr = 0;
	optind = 2;
	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
			exec_usage(stdout);
			return 0;
		}
		exec_usage(stderr);
		return EXIT_SETUP;
	}
	key = argv[1];
	while ((c = getopt_long(argc, argv, "+w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (add_env(&b, optarg, &err) < 0)
				return fail_msg(&err);
			break;
		case 'w':
			if (optarg[0] != '/')
				return fail_msg(&(cl_error){.msg = "-w: expected an absolute directory"});
			ss_buf_add(&b, 'W', optarg);
			break;
		case 't':
			if (cl_parse_seconds(optarg, &ms) < 0) {
				cl_fail(&err, 0, "--timeout '%s': expected seconds > 0, like 30 or 0.5", optarg);
				return fail_msg(&err);
			}
			snprintf(num, sizeof(num), "%llu", (unsigned long long)ms);
			ss_buf_add(&b, 'T', num);
			break;
		case 'j': status_path = optarg; break;
		case 'h': exec_usage(stdout); return 0;
		default:
			cl_fail(&err, 0, "unknown option or missing value '%s' (see cloister exec --help)",
			        argv[optind - 1]);
			return fail_msg(&err);
		}
	}
	if (optind >= argc) {
		exec_usage(stderr);
		return EXIT_SETUP;
	}
	for (int i = optind; i < argc; i++)
		ss_buf_add(&b, 'A', argv[i]);
	sock = ss_connect(key, NULL, &err);
	/* After the connect: a session that is not there leaves the caller's
	 * terminal untouched. */
	if (sock < 0)
		return fail_msg(&err);
	if (ss_tty_open(&tty, &err) < 0) {
		close(sock);
		return fail_msg(&err);
	}
	/* A terminal of ours never enters the session: /dev/null stands in,
	 * and the command gets a pty of the session's own there instead. */
	for (int i = 0; i < 3; i++)
		fds[i] = tty && (ss_tty_mask(tty) & (1u << i)) ? null_fd() : stdio_fd(i);
	if (tty)
		ss_tty_request(tty, &b);
	rc = ss_request(sock, &b, fds, 3, &err);
	for (int i = 0; i < 3; i++)
		if (fds[i] > 2)
			close(fds[i]);
	if (rc == 0)
		rc = tty ? ss_tty_relay(tty, sock, &rep, &err) : ss_reply_read(sock, &rep, &err);
	/* The terminal is back before anything below prints. */
	ss_tty_close(tty);
	ss_buf_free(&b);
	close(sock);
	if (rc < 0)
		return fail_msg(&err);
	if (rep.msg[0])
		fprintf(stderr, "%s\n", rep.msg);
	if (status_path)
		write_status(status_path, &rep, now_ms() - t0);
	return rep.code;
}

/* "ID:/path" -> key and path (pointing into a), or NULL for a local path.
 * A local path with ':' is written with a '/' before it ("./a:b"). */
static char *remote(char *a, const char **path)
{
	char *colon = strchr(a, ':');

	if (!colon || colon == a || strchr(a, '/') < colon)
		return NULL;
	if (strchr(a, '/') == NULL && colon[1] != '/')
		return NULL;
	*colon = '\0';
	*path = colon + 1;
	return a;
}

int ss_cli_cp_main(int argc, char **argv)
{
	const char *spath = NULL, *dpath = NULL;
	char *skey, *dkey;
	cl_error err = {0};
	bool mkdirs = false, tree = false;
	int rc;

	while (argc > 1 && (!strcmp(argv[1], "--mkdir") || !strcmp(argv[1], "-r"))) {
		if (argv[1][1] == 'r')
			tree = true;
		else
			mkdirs = true;
		argc--;
		argv++;
	}

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		puts("usage: cloister cp [-r] [--mkdir] SRC DEST   (one side ID:/path, - for stdin/stdout;\n"
		     "       -r: SRC is a directory, copied with everything in it (links as links);\n"
		     "       --mkdir: create missing directories of ID:/path)");
		return 0;
	}
	if (argc != 3) {
		fputs("cloister: usage: cloister cp [-r] [--mkdir] SRC DEST (one side ID:/path, - for stdin/stdout)\n",
		      stderr);
		return EXIT_SETUP;
	}
	skey = remote(argv[1], &spath);
	dkey = remote(argv[2], &dpath);
	if ((skey != NULL) == (dkey != NULL)) {
		fputs("cloister: cp: exactly one of SRC and DEST must be ID:/path\n", stderr);
		return EXIT_SETUP;
	}
	if ((skey ? spath : dpath)[0] != '/') {
		fputs("cloister: cp: the path inside the session must be absolute (ID:/path)\n", stderr);
		return EXIT_SETUP;
	}
	if (mkdirs && !dkey) {
		fputs("cloister: cp: --mkdir is for copies into a session\n", stderr);
		return EXIT_SETUP;
	}
	if (tree && (!strcmp(argv[1], "-") || !strcmp(argv[2], "-"))) {
		fputs("cloister: cp: -r copies directories, not stdin or stdout\n", stderr);
		return EXIT_SETUP;
	}
	if (tree)
		rc = dkey ? ss_cp_tree_in(argv[1], dkey, dpath, mkdirs, &err)
		          : ss_cp_tree_out(skey, spath, argv[2], &err);
	else
		rc = dkey ? ss_cp_file_in(argv[1], dkey, dpath, mkdirs, &err)
		          : ss_cp_file_out(skey, spath, argv[2], &err);
	if (rc < 0)
		return err.msg[0] ? fail_msg(&err) : EXIT_SETUP;
	return 0;
}
