/* `cloister ls`, `cloister rm` and the session part of `cloister gc`. */
#define _GNU_SOURCE
#include "src/cli/session.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroups/cgroup.h"
#include "src/session/client.h"

#define EXIT_SETUP 125

typedef void (*each_fn)(const char *dir, const struct ss_info *in, void *ctx);

/* Calls fn for every session directory with a readable info file. */
static int each_session(each_fn fn, void *ctx)
{
	char root[256], dir[512];
	cl_error err = {0};
	struct dirent *e;
	struct ss_info in;
	DIR *d;

	int rc = ss_rundir(root, sizeof(root), false, &err);

	if (rc < 0) {
		cl_error_print(&err);
		return -1;
	}
	if (rc > 0)
		return 0;   /* no directory: no sessions */
	d = opendir(root);
	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		if (strlen(e->d_name) != SS_ID_LEN || strspn(e->d_name, "0123456789abcdef") != SS_ID_LEN)
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", root, e->d_name);
		if (ss_info_read(dir, &in) == 0 && strcmp(in.id, e->d_name) == 0)
			fn(dir, &in, ctx);
	}
	closedir(d);
	return 0;
}

static const char *state_of(const struct ss_info *in)
{
	if (!ss_alive(in->pid, in->start))
		return "dead";
	return in->init_pid ? "running" : "starting";
}

static void ls_json(const char *dir, const struct ss_info *in, void *ctx)
{
	json_t *o = json_pack("{s:s, s:o, s:s, s:I, s:i, s:i, s:I}", "id", in->id, "name",
	                      in->name[0] ? json_string(in->name) : json_null(), "state",
	                      state_of(in), "created", (json_int_t)in->created, "supervisor_pid",
	                      (int)in->pid, "init_pid", (int)in->init_pid, "idle_timeout_s",
	                      (json_int_t)in->idle_s);

	if (o)
		json_array_append_new(ctx, o);
}

static void ls_line(const char *dir, const struct ss_info *in, void *ctx)
{
	char when[32];
	time_t t = (time_t)in->created;
	struct tm tm;

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	printf("%-12s  %-16s  %-8s  %-20s  %d\n", in->id, in->name[0] ? in->name : "-",
	       state_of(in), when, (int)in->pid);
}

int ss_cli_ls_main(int argc, char **argv)
{
	bool json = argc == 2 && strcmp(argv[1], "--json") == 0;
	json_t *arr;
	char *text;

	if (argc > 2 || (argc == 2 && !json)) {
		fputs("cloister: usage: cloister ls [--json]\n", stderr);
		return EXIT_SETUP;
	}
	if (!json) {
		printf("%-12s  %-16s  %-8s  %-20s  %s\n", "ID", "NAME", "STATE", "CREATED", "PID");
		return each_session(ls_line, NULL) < 0 ? EXIT_SETUP : 0;
	}
	arr = json_array();
	if (!arr || each_session(ls_json, arr) < 0)
		return EXIT_SETUP;
	text = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	if (!text)
		return EXIT_SETUP;
	puts(text);
	free(text);
	return 0;
}

/* A session whose supervisor died: init died with it (parent-death
 * signal), unless something kept it; kill it, drop the state. Its cgroup
 * is named after the dead supervisor and goes with the cgroup sweep. */
static void remove_dead(const char *dir, const struct ss_info *in)
{
	if (ss_alive(in->init_pid, in->init_start))
		kill(in->init_pid, SIGKILL);
	ss_dir_remove(dir);
}

static void gc_one(const char *dir, const struct ss_info *in, void *ctx)
{
	if (ss_alive(in->pid, in->start))
		return;
	remove_dead(dir, in);
	printf("removed session %s\n", in->id);
	(*(int *)ctx)++;
}

void ss_gc_sweep(void)
{
	int n = 0;

	each_session(gc_one, &n);
	printf("cloister gc: removed %d stale session%s\n", n, n == 1 ? "" : "s");
}

int ss_cli_rm_main(int argc, char **argv)
{
	struct ss_buf b = {0};
	struct ss_reply rep;
	struct ss_info in;
	cl_error err = {0};
	char dir[4096];
	int rc = 0, sock;

	if (argc < 2) {
		fputs("cloister: usage: cloister rm ID|NAME...\n", stderr);
		return EXIT_SETUP;
	}
	for (int i = 1; i < argc; i++) {
		if (ss_find(argv[i], dir, sizeof(dir), &in, &err) < 0) {
			cl_error_print(&err);
			rc = EXIT_SETUP;
			continue;
		}
		if (!ss_alive(in.pid, in.start)) {
			remove_dead(dir, &in);
			cg_gc_quiet();
			continue;
		}
		ss_buf_add(&b, 0, "stop");
		sock = ss_connect(argv[i], NULL, &err);
		/* The reply comes once init, the cgroup and the state are gone. */
		if (sock < 0 || ss_call(sock, &b, NULL, 0, &rep, &err) < 0 || rep.code != 0) {
			if (!err.msg[0])
				cl_fail(&err, 0, "removing session '%s': %s", argv[i], rep.msg);
			cl_error_print(&err);
			rc = EXIT_SETUP;
		}
		/* The supervisor exits right after its reply: wait for that too
		 * (its hang-up), so nothing of the session runs once we return. */
		while (sock >= 0 && recv(sock, &rep, sizeof(rep), 0) > 0)
			;
		if (sock >= 0)
			close(sock);
		ss_buf_free(&b);
	}
	return rc;
}
