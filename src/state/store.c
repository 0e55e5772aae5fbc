/* SQLite state: sandbox rows (pending -> shipped -> finished|failed|
 * cancelled) and a per-run event log with sequence numbers. Writers take
 * BEGIN IMMEDIATE so the concurrency check and the insert are atomic. */
#define _GNU_SOURCE
#include "src/state/sqlite_dl.h"
#include "src/state/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/clock.h"
#include "src/sandbox/layout.h"

struct st_store {
	sqlite3 *db;
	char owner_start[32];   /* this process's start time, for liveness */
	char root[4096];        /* rootDir: where reconciled sandboxes' directories are */
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS sandboxes("
	" run_id TEXT NOT NULL, sandbox_id TEXT NOT NULL, runtime TEXT, status TEXT NOT NULL,"
	" config_json TEXT, workspace_id TEXT, container_id TEXT, remote_run_id TEXT,"
	" created_at_ms INTEGER, heartbeat_at_ms INTEGER, shipped_at_ms INTEGER,"
	" completed_at_ms INTEGER, bundle_path TEXT, owner_pid INTEGER, owner_start TEXT,"
	" PRIMARY KEY(run_id, sandbox_id));"
	"CREATE TABLE IF NOT EXISTS events("
	" run_id TEXT NOT NULL, seq INTEGER NOT NULL, timestamp_ms INTEGER NOT NULL,"
	" type TEXT NOT NULL, payload_json TEXT NOT NULL, PRIMARY KEY(run_id, seq));";

/* Field 22 of /proc/PID/stat: start time in ticks; "" if pid is gone.
 * Pid plus start time names a process even after pid reuse. */
static void proc_start(pid_t pid, char *out, size_t len)
{
	char path[64], buf[1024];
	const char *p;
	int fd, n;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		snprintf(out, len, "%.*s", (int)strcspn(p + 1, " "), p + 1);
}

int st_max_concurrent(const char *v)
{
	char *end;
	double d;

	if (!v || !*v)
		return ST_DEFAULT_MAX_CONCURRENT;
	errno = 0;
	d = strtod(v, &end);
	while (*end == ' ' || *end == '\t' || *end == '\n')
		end++;
	/* d != d: NaN. Truncation is floor for d >= 1. */
	if (errno || *end || d != d || d < 1)
		return ST_DEFAULT_MAX_CONCURRENT;
	return d > 1e6 ? 1000000 : (int)d;
}

static int exec_sql(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* WAL once per database file: switching needs the database to itself, so
 * concurrent first openers may see SQLITE_BUSY even with a busy timeout;
 * they retry (bounded), and later openers find WAL already set. */
static int set_wal(sqlite3 *db)
{
	for (int i = 0; i < 600; i++) {
		sqlite3_stmt *q = NULL;
		int rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &q, NULL);
		const unsigned char *mode = NULL;

		if (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW)
			mode = sqlite3_column_text(q, 0);
		if (mode && strcmp((const char *)mode, "wal") == 0) {
			sqlite3_finalize(q);
			return 0;
		}
		sqlite3_finalize(q);
		if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED && rc != SQLITE_ROW)
			return -EIO;
		usleep(100000);
	}
	return -EBUSY;
}

static int db_fail(struct sb_error *e, sqlite3 *db, const char *what)
{
	return sb_fail(e, SB_PROCESS_SPAWN_FAILED, 0, NULL, "%s: %s", what,
	               db ? sqlite3_errmsg(db) : "out of memory");
}

int st_store_open(const char *root_dir, struct st_store **out, struct sb_error *e)
{
	char path[4096];
	struct st_store *st = calloc(1, sizeof(*st));
	int n;

	cl_error lerr = {0};

	*out = NULL;
	if (!st)
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, ENOMEM, NULL, "opening the state store");
	if (st_sqlite_load(&lerr) < 0) {
		free(st);
		return sb_from_cl(e, SB_PROCESS_SPAWN_FAILED, &lerr);
	}
	n = snprintf(path, sizeof(path), "%s/.smithers", root_dir);
	if (n < 0 || (size_t)n >= sizeof(path) - 16) {
		free(st);
		return sb_fail(e, SB_TOOL_PATH_INVALID, 0, NULL, "state directory path is too long");
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST) {
		free(st);
		return sb_fail(e, SB_PROCESS_SPAWN_FAILED, errno, NULL, "creating %s", path);
	}
	/* (room checked above: n < sizeof(path) - 16) */
	snprintf(path + n, sizeof(path) - (size_t)n, "/cloister.db");
	if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	                    SQLITE_OPEN_NOFOLLOW, NULL) != SQLITE_OK) {
		int rc = db_fail(e, st->db, "opening the state database");
		sqlite3_close(st->db);
		free(st);
		return rc;
	}
	/* Concurrent cloisters wait for each other's short transactions. */
	sqlite3_busy_timeout(st->db, 60000);
	if (set_wal(st->db) < 0 || exec_sql(st->db, schema) < 0) {
		int rc = db_fail(e, st->db, "creating the state schema");
		st_store_close(st);
		return rc;
	}
	proc_start(getpid(), st->owner_start, sizeof(st->owner_start));
	snprintf(st->root, sizeof(st->root), "%s", root_dir);   /* fits: checked above */
	*out = st;
	return 0;
}

void st_store_close(struct st_store *st)
{
	if (!st)
		return;
	sqlite3_close(st->db);
	free(st);
}

/* Appends an event with the run's next sequence number (inside the
 * caller's transaction, or its own). */
static int insert_event(sqlite3 *db, const char *run_id, const char *type, const char *payload)
{
	sqlite3_stmt *q = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db,
	        "INSERT INTO events(run_id, seq, timestamp_ms, type, payload_json) VALUES"
	        " (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE run_id = ?1), ?2, ?3, ?4)",
	        -1, &q, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(q, 1, run_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(q, 2, cl_wall_ms());
		sqlite3_bind_text(q, 3, type, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(q, 4, payload, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(q);
	}
	sqlite3_finalize(q);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* A killed cloister never ran its cleanup: its request/ and tmp/ go now
 * (result/ stays, as after any run). Left in place, with a warning, if
 * they cannot be removed. */
static void sweep(const struct st_store *st, const char *run, const char *sbx)
{
	struct sb_error e = {0};
	char line[700];

	if (!run || !sbx || sb_layout_sweep(st->root, run, sbx, &e) == 0)
		return;
	cl_error_format(&e.base, line, sizeof(line));
	fprintf(stderr, "cloister: warning: cleaning up sandbox %s of run %s: %s\n", sbx, run, line);
	sb_error_clear(&e);
}

static int reconcile_locked(struct st_store *st)
{
	sqlite3_stmt *q = NULL;
	int n = 0;

	if (sqlite3_prepare_v2(st->db,
	        "SELECT run_id, sandbox_id, owner_pid, owner_start FROM sandboxes"
	        " WHERE status NOT IN ('finished','failed','cancelled')", -1, &q, NULL) != SQLITE_OK)
		return -EIO;
	while (sqlite3_step(q) == SQLITE_ROW) {
		const char *run = (const char *)sqlite3_column_text(q, 0);
		const char *sbx = (const char *)sqlite3_column_text(q, 1);
		const char *start = (const char *)sqlite3_column_text(q, 3);
		char now[32];
		sqlite3_stmt *u = NULL;
		json_t *ev;
		char *text;

		proc_start((pid_t)sqlite3_column_int64(q, 2), now, sizeof(now));
		if (now[0] && start && strcmp(now, start) == 0)
			continue;
		/* Its cloister is gone (killed, crashed): the run cannot finish. */
		if (sqlite3_prepare_v2(st->db, "UPDATE sandboxes SET status='failed', completed_at_ms=?3"
		                       " WHERE run_id=?1 AND sandbox_id=?2", -1, &u, NULL) == SQLITE_OK) {
			sqlite3_bind_text(u, 1, run, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(u, 2, sbx, -1, SQLITE_TRANSIENT);
			sqlite3_bind_int64(u, 3, cl_wall_ms());
			sqlite3_step(u);
		}
		sqlite3_finalize(u);
		sweep(st, run, sbx);
		ev = json_pack("{s:s,s:s,s:s,s:s,s:{s:s,s:s},s:I}", "type", "SandboxFailed", "runId", run,
		               "sandboxId", sbx, "runtime", "native", "error", "code", "SANDBOX_EXECUTION_FAILED",
		               "message", "The cloister process running this sandbox exited before it finished.",
		               "timestampMs", (json_int_t)cl_wall_ms());
		text = json_dumps(ev, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (text)
			insert_event(st->db, run, "SandboxFailed", text);
		free(text);
		json_decref(ev);
		n++;
	}
	sqlite3_finalize(q);
	return n;
}

int st_reconcile(struct st_store *st)
{
	int n;

	if (exec_sql(st->db, "BEGIN IMMEDIATE") < 0)
		return -EIO;
	n = reconcile_locked(st);
	if (exec_sql(st->db, n < 0 ? "ROLLBACK" : "COMMIT") < 0)
		return -EIO;
	return n;
}

int st_sweep_finished(struct st_store *st)
{
	sqlite3_stmt *q = NULL;
	int n = 0;

	if (sqlite3_prepare_v2(st->db, "SELECT run_id, sandbox_id FROM sandboxes"
	                       " WHERE status IN ('finished','failed','cancelled')", -1, &q, NULL) != SQLITE_OK)
		return -EIO;
	while (sqlite3_step(q) == SQLITE_ROW) {
		sweep(st, (const char *)sqlite3_column_text(q, 0), (const char *)sqlite3_column_text(q, 1));
		n++;
	}
	sqlite3_finalize(q);
	return n;
}

static int count_active(sqlite3 *db, const char *run_id)
{
	sqlite3_stmt *q = NULL;
	int n = -1;

	if (sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM sandboxes WHERE run_id=?1 AND"
	                       " status NOT IN ('finished','failed','cancelled')", -1, &q, NULL) == SQLITE_OK) {
		sqlite3_bind_text(q, 1, run_id, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(q) == SQLITE_ROW)
			n = sqlite3_column_int(q, 0);
	}
	sqlite3_finalize(q);
	return n;
}

static bool row_exists(sqlite3 *db, const struct sb_spec *s)
{
	sqlite3_stmt *q = NULL;
	bool found = false;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sandboxes WHERE run_id=?1 AND sandbox_id=?2", -1, &q,
	                       NULL) == SQLITE_OK) {
		sqlite3_bind_text(q, 1, s->run_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(q, 2, s->sandbox_id, -1, SQLITE_TRANSIENT);
		found = sqlite3_step(q) == SQLITE_ROW;
	}
	sqlite3_finalize(q);
	return found;
}

static int admit(void *ctx, const struct sb_spec *s, const char *config_json, struct sb_error *e)
{
	struct st_store *st = ctx;
	int max = st_max_concurrent(getenv("SMITHERS_MAX_CONCURRENT_SANDBOXES"));
	sqlite3_stmt *q = NULL;
	int active, rc;

	if (max <= 0)
		max = ST_DEFAULT_MAX_CONCURRENT;
	if (exec_sql(st->db, "BEGIN IMMEDIATE") < 0)
		return db_fail(e, st->db, "locking the state database");
	if (reconcile_locked(st) < 0 || (active = count_active(st->db, s->run_id)) < 0) {
		exec_sql(st->db, "ROLLBACK");
		return db_fail(e, st->db, "reading the state database");
	}
	if (row_exists(st->db, s)) {
		exec_sql(st->db, "ROLLBACK");
		return sb_fail(e, SB_INVALID_INPUT, 0,
		               json_pack("{s:s,s:s}", "runId", s->run_id, "sandboxId", s->sandbox_id),
		               "Sandbox %s already exists in run %s; a sandboxId is used once per run.",
		               s->sandbox_id, s->run_id);
	}
	if (active >= max) {
		exec_sql(st->db, "ROLLBACK");
		return sb_fail(e, SB_EXECUTION_FAILED, 0,
		               json_pack("{s:s,s:i,s:i}", "runId", s->run_id, "maxConcurrent", max,
		                         "activeSandboxCount", active),
		               "Sandbox concurrency limit reached for run %s (%d).", s->run_id, max);
	}
	rc = sqlite3_prepare_v2(st->db,
	        "INSERT INTO sandboxes(run_id, sandbox_id, runtime, status, config_json,"
	        " created_at_ms, heartbeat_at_ms, owner_pid, owner_start)"
	        " VALUES (?1, ?2, 'native', 'pending', ?3, ?4, ?4, ?5, ?6)", -1, &q, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_bind_text(q, 1, s->run_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(q, 2, s->sandbox_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(q, 3, config_json, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(q, 4, cl_wall_ms());
		sqlite3_bind_int64(q, 5, getpid());
		sqlite3_bind_text(q, 6, st->owner_start, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(q);
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE || exec_sql(st->db, "COMMIT") < 0) {
		int r = db_fail(e, st->db, "recording the sandbox");
		exec_sql(st->db, "ROLLBACK");
		return r;
	}
	return 0;
}

static void update(void *ctx, const struct sb_spec *s, const char *status, json_t *f,
                   const char *ev_type, const char *ev_payload)
{
	struct st_store *st = ctx;
	sqlite3_stmt *q = NULL;
	bool done = strcmp(status, "shipped") != 0 && strcmp(status, "pending") != 0;

	/* A write lock first: an autocommit UPDATE on a stale WAL snapshot
	 * fails with SQLITE_BUSY_SNAPSHOT instead of waiting. */
	if (exec_sql(st->db, "BEGIN IMMEDIATE") < 0)
		return;
	if (sqlite3_prepare_v2(st->db,
	        "UPDATE sandboxes SET status=?3, heartbeat_at_ms=?4,"
	        " shipped_at_ms=CASE WHEN ?3='shipped' AND shipped_at_ms IS NULL THEN ?4 ELSE shipped_at_ms END,"
	        " completed_at_ms=CASE WHEN ?5 THEN ?4 ELSE completed_at_ms END,"
	        " remote_run_id=COALESCE(?6, remote_run_id), workspace_id=COALESCE(?7, workspace_id),"
	        " container_id=COALESCE(?8, container_id), bundle_path=COALESCE(?9, bundle_path)"
	        " WHERE run_id=?1 AND sandbox_id=?2", -1, &q, NULL) != SQLITE_OK) {
		exec_sql(st->db, "ROLLBACK");
		return;
	}
	sqlite3_bind_text(q, 1, s->run_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(q, 2, s->sandbox_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(q, 3, status, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(q, 4, cl_wall_ms());
	sqlite3_bind_int(q, 5, done);
	sqlite3_bind_text(q, 6, json_string_value(json_object_get(f, "remoteRunId")), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(q, 7, json_string_value(json_object_get(f, "workspaceId")), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(q, 8, json_string_value(json_object_get(f, "containerId")), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(q, 9, json_string_value(json_object_get(f, "bundlePath")), -1, SQLITE_TRANSIENT);
	/* The row and its event commit together or not at all. */
	bool ok = sqlite3_step(q) == SQLITE_DONE &&
	          (!ev_type || insert_event(st->db, s->run_id, ev_type, ev_payload) == 0);
	sqlite3_finalize(q);
	exec_sql(st->db, ok ? "COMMIT" : "ROLLBACK");
}

static void event(void *ctx, const struct sb_spec *s, const char *type, const char *payload)
{
	struct st_store *st = ctx;

	if (exec_sql(st->db, "BEGIN IMMEDIATE") < 0)
		return;
	exec_sql(st->db, insert_event(st->db, s->run_id, type, payload) < 0 ? "ROLLBACK" : "COMMIT");
}

void st_store_hooks(struct st_store *st, struct sb_store *hooks)
{
	hooks->ctx = st;
	hooks->admit = admit;
	hooks->update = update;
	hooks->event = event;
}
