/* `cloister workspace snapshot NAME [--id ID] | snapshots [--json] |
 * rm-snapshot ID`: the snapshot store's commands (docs/workspaces.md).
 * Exit codes: 0 done, 125 refused or failed (one line on stderr). */
#define _GNU_SOURCE
#include "src/cli/workspace.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "src/util/cleanup.h"
#include "src/util/error.h"
#include "src/workspace/snapshot.h"
#if CL_NATIVE
#include "src/cli/session.h"
#endif

#define EXIT_SETUP 125

static void usage(FILE *f)
{
	fputs("usage: cloister workspace snapshot NAME [--id ID]   snapshot sticky workspace NAME (prints the id)\n"
	      "       cloister workspace snapshot --session ID|NAME [--id ID]\n"
	      "                                                    snapshot a running session's workspace\n"
	      "       cloister workspace snapshots [--json]        list the snapshots\n"
	      "       cloister workspace rm-snapshot ID            remove a snapshot\n", f);
}

static int failed(cl_error *err)
{
	cl_error_print(err);
	return EXIT_SETUP;
}

static int session_snapshot(const char *key, const char *id)
{
#if CL_NATIVE
	return ss_cli_snapshot(key, id);
#else
	(void)id;
	fprintf(stderr, "cloister: workspace snapshot --session %s: this build has no sessions (built with "
	        "NATIVE=0)\n", key);
	return EXIT_SETUP;
#endif
}

static int cmd_snapshot(int argc, char **argv)
{
	const char *name = NULL, *id = NULL, *session = NULL;
	char out[WS_SNAP_ID_MAX + 1];
	cl_error err = {0};

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--id") && i + 1 < argc)
			id = argv[++i];
		else if (!strncmp(argv[i], "--id=", 5))
			id = argv[i] + 5;
		else if (!strcmp(argv[i], "--session") && i + 1 < argc)
			session = argv[++i];
		else if (!strncmp(argv[i], "--session=", 10))
			session = argv[i] + 10;
		else if (!strcmp(argv[i], "--id") || !strcmp(argv[i], "--session"))
			return fprintf(stderr, "cloister: workspace snapshot: %s needs a value\n", argv[i]), EXIT_SETUP;
		else if (argv[i][0] == '-')
			return fprintf(stderr, "cloister: workspace snapshot: unknown option '%s'\n", argv[i]), EXIT_SETUP;
		else if (!name)
			name = argv[i];
		else
			return fprintf(stderr, "cloister: workspace snapshot: unexpected '%s' (one NAME)\n", argv[i]),
			       EXIT_SETUP;
	}
	if (session && name)
		return fprintf(stderr, "cloister: workspace snapshot: '%s' and --session %s: snapshot either a "
		               "sticky workspace or a session\n", name, session), EXIT_SETUP;
	if (session)
		return session_snapshot(session, id);
	if (!name)
		return fputs("cloister: workspace snapshot: usage: cloister workspace snapshot NAME|--session ID "
		             "[--id ID]\n", stderr), EXIT_SETUP;
	if (ws_snap_create(name, id, out, &err) < 0)
		return failed(&err);
	printf("%s\n", out);
	return 0;
}

static void print_table(const json_t *list)
{
	size_t i;
	json_t *s;

	printf("%-24s %-20s %-20s %s\n", "ID", "WORKSPACE", "CREATED", "ROOTDIR");
	json_array_foreach(list, i, s) {
		time_t t = (time_t)json_integer_value(json_object_get(s, "created"));
		struct tm tm;
		char when[32];
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
		printf("%-24s %-20s %-20s %s\n", json_string_value(json_object_get(s, "id")),
		       json_string_value(json_object_get(s, "workspace")), when,
		       json_string_value(json_object_get(s, "rootDir")));
	}
}

static int cmd_list(int argc, char **argv)
{
	bool json = argc == 2 && !strcmp(argv[1], "--json");
	cl_error err = {0};
	cl_autofree char *text = NULL;
	json_t *list;

	if (argc > 2 || (argc == 2 && !json))
		return fprintf(stderr, "cloister: workspace snapshots: unexpected '%s' (usage: cloister workspace "
		               "snapshots [--json])\n", argv[1]), EXIT_SETUP;
	if (ws_snap_list(&list, &err) < 0)
		return failed(&err);
	if (json) {
		if (!(text = json_dumps(list, JSON_COMPACT))) {
			json_decref(list);
			return fputs("cloister: workspace snapshots: out of memory\n", stderr), EXIT_SETUP;
		}
		printf("%s\n", text);
	} else {
		print_table(list);
	}
	json_decref(list);
	return 0;
}

static int cmd_rm(int argc, char **argv)
{
	cl_error err = {0};

	if (argc != 2 || argv[1][0] == '-')
		return fputs("cloister: workspace rm-snapshot: usage: cloister workspace rm-snapshot ID\n", stderr),
		       EXIT_SETUP;
	if (ws_snap_remove(argv[1], &err) < 0) {
		cl_wrap(&err, "workspace rm-snapshot");
		return failed(&err);
	}
	return 0;
}

int ws_cli_workspace_main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "snapshot"))
		return cmd_snapshot(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "snapshots"))
		return cmd_list(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "rm-snapshot"))
		return cmd_rm(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return usage(stdout), 0;
	fprintf(stderr, "cloister: workspace: unknown subcommand '%s' (snapshot, snapshots, rm-snapshot; see "
	        "cloister workspace --help)\n", argc >= 2 ? argv[1] : "");
	return EXIT_SETUP;
}
