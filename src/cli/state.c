/* `cloister ps` and `cloister events RUN_ID`: read the state database of
 * ./.smithers (or --root DIR), reconciling crashed runs first. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/state/sqlite_dl.h"
#include "src/state/store.h"

/* The store's handle is private to store.c; the readers open their own. */
/* 1 if root has no state database (nothing to show, and reading must not
 * create one), 0 when *db is open, -1 on error. */
static int open_ro(const char *root, sqlite3 **db)
{
	struct st_store *st = NULL;
	struct sb_error e = {0};
	char path[4096];

	snprintf(path, sizeof(path), "%s/.smithers/cloister.db", root);
	if (access(path, F_OK) != 0)
		return errno == ENOENT ? 1 : -1;

	/* Opening through the store creates the schema and reconciles. */
	if (st_store_open(root, &st, &e) < 0) {
		char line[700];
		cl_error_format(&e.base, line, sizeof(line));
		fprintf(stderr, "cloister: %s\n", line);
		sb_error_clear(&e);
		return -1;
	}
	st_reconcile(st);
	st_store_close(st);
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW, NULL) != SQLITE_OK) {
		fprintf(stderr, "cloister: opening %s: %s\n", path, sqlite3_errmsg(*db));
		sqlite3_close(*db);
		return -1;
	}
	sqlite3_busy_timeout(*db, 60000);
	return 0;
}

void st_gc_reconcile_cwd(void)
{
	struct st_store *st = NULL;
	struct sb_error e = {0};
	char cwd[4096];
	int n;

	if (access(".smithers/cloister.db", F_OK) != 0 || !getcwd(cwd, sizeof(cwd)))
		return;
	if (st_store_open(cwd, &st, &e) < 0) {
		sb_error_clear(&e);
		return;
	}
	n = st_reconcile(st);
	if (n > 0)
		fprintf(stderr, "cloister: gc: %d sandbox(es) of dead cloister processes marked failed\n", n);
	/* After the reconcile: the rows it just failed are swept by it already. */
	st_sweep_finished(st);
	st_store_close(st);
}

static const char *root_arg(int argc, char **argv, int *i)
{
	if (strcmp(argv[*i], "--root") == 0 && *i + 1 < argc)
		return argv[++*i];
	if (strncmp(argv[*i], "--root=", 7) == 0)
		return argv[*i] + 7;
	return NULL;
}

static json_t *col(sqlite3_stmt *q, int i)
{
	switch (sqlite3_column_type(q, i)) {
	case SQLITE_NULL: return json_null();
	case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(q, i));
	default: return json_string((const char *)sqlite3_column_text(q, i));
	}
}

int st_cli_ps_main(int argc, char **argv)
{
	static const char *const names[] = {"runId", "sandboxId", "runtime", "status", "configJson",
	                                    "workspaceId", "containerId", "remoteRunId", "createdAtMs",
	                                    "heartbeatAtMs", "shippedAtMs", "completedAtMs", "bundlePath"};
	const char *root = ".";
	bool json = false;
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	json_t *all = json_array();
	char cwd[4096];
	int rc;

	for (int i = 1; i < argc; i++) {
		const char *r = root_arg(argc, argv, &i);
		if (r)
			root = r;
		/* argv[i] with i < argc is never NULL (root_arg stays below argc) */
		else if (strcmp(argv[i], "--json") == 0) /* NOLINT(clang-analyzer-core.NonNullParamChecker) */
			json = true;
		else {
			fprintf(stderr, "usage: cloister ps [--json] [--root DIR]\n");
			return 125;
		}
	}
	if (strcmp(root, ".") == 0 && getcwd(cwd, sizeof(cwd)))
		root = cwd;
	if ((rc = open_ro(root, &db)) < 0)
		return 125;
	if (rc == 1) {
		puts(json ? "[]" : "no sandboxes (no .smithers/cloister.db here; see --root)");
		json_decref(all);
		return 0;
	}
	if (sqlite3_prepare_v2(db, "SELECT run_id, sandbox_id, runtime, status, config_json, workspace_id,"
	                       " container_id, remote_run_id, created_at_ms, heartbeat_at_ms, shipped_at_ms,"
	                       " completed_at_ms, bundle_path FROM sandboxes ORDER BY created_at_ms, run_id,"
	                       " sandbox_id", -1, &q, NULL) != SQLITE_OK) {
		fprintf(stderr, "cloister: ps: %s\n", sqlite3_errmsg(db));
		sqlite3_close(db);
		return 125;
	}
	if (!json)
		printf("%-20s %-20s %-10s %s\n", "RUN", "SANDBOX", "STATUS", "BUNDLE");
	while (sqlite3_step(q) == SQLITE_ROW) {
		json_t *row = json_object();
		for (int i = 0; i < 13; i++)
			json_object_set_new(row, names[i], col(q, i));
		if (json)
			json_array_append_new(all, row);
		else {
			printf("%-20s %-20s %-10s %s\n", (const char *)sqlite3_column_text(q, 0),
			       (const char *)sqlite3_column_text(q, 1), (const char *)sqlite3_column_text(q, 3),
			       sqlite3_column_text(q, 12) ? (const char *)sqlite3_column_text(q, 12) : "-");
			json_decref(row);
		}
	}
	if (json) {
		char *text = json_dumps(all, JSON_COMPACT | JSON_PRESERVE_ORDER);
		printf("%s\n", text ? text : "[]");
		free(text);
	}
	json_decref(all);
	sqlite3_finalize(q);
	sqlite3_close(db);
	return 0;
}

int st_cli_events_main(int argc, char **argv)
{
	const char *root = ".", *run = NULL;
	sqlite3 *db = NULL;
	sqlite3_stmt *q = NULL;
	char cwd[4096];
	int rc;

	for (int i = 1; i < argc; i++) {
		const char *r = root_arg(argc, argv, &i);
		if (r)
			root = r;
		/* argv[i] with i < argc is never NULL (root_arg stays below argc) */
		else if (!run && argv[i][0] != '-') /* NOLINT(clang-analyzer-core.NullDereference) */
			run = argv[i];
		else
			run = NULL, i = argc;
	}
	if (!run) {
		fprintf(stderr, "usage: cloister events RUN_ID [--root DIR]\n");
		return 125;
	}
	if (strcmp(root, ".") == 0 && getcwd(cwd, sizeof(cwd)))
		root = cwd;
	if ((rc = open_ro(root, &db)) != 0)
		return rc < 0 ? 125 : 0;
	if (sqlite3_prepare_v2(db, "SELECT seq, payload_json FROM events WHERE run_id=?1 ORDER BY seq",
	                       -1, &q, NULL) != SQLITE_OK) {
		fprintf(stderr, "cloister: events: %s\n", sqlite3_errmsg(db));
		sqlite3_close(db);
		return 125;
	}
	sqlite3_bind_text(q, 1, run, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(q) == SQLITE_ROW) {
		json_t *ev = json_loads((const char *)sqlite3_column_text(q, 1), 0, NULL);
		char *text;
		if (!ev)
			continue;
		json_object_set_new(ev, "seq", json_integer(sqlite3_column_int64(q, 0)));
		text = json_dumps(ev, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (text)
			printf("%s\n", text);
		free(text);
		json_decref(ev);
	}
	sqlite3_finalize(q);
	sqlite3_close(db);
	return 0;
}
