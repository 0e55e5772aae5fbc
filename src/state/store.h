/* The sandbox state and event store: one SQLite database per project
 * (<rootDir>/.smithers/cloister.db, WAL), shared by concurrent cloisters. */
#ifndef ST_STORE_H
#define ST_STORE_H

#include <stdbool.h>

#include "src/sandbox/run.h"
#include "src/sandbox/sberror.h"

#define ST_DEFAULT_MAX_CONCURRENT 10

struct st_store;

/* Opens (creating) <root_dir>/.smithers/cloister.db. */
int st_store_open(const char *root_dir, struct st_store **out, struct sb_error *e);
void st_store_close(struct st_store *st);
/* Fills hooks so sb_run records rows and events in st. */
void st_store_hooks(struct st_store *st, struct sb_store *hooks);
/* SMITHERS_MAX_CONCURRENT_SANDBOXES: a positive number (floored), else 10. */
int st_max_concurrent(const char *env_value);
/* Marks active rows whose owning cloister is gone as failed; returns how
 * many were reconciled, or -errno. */
int st_reconcile(struct st_store *st);
/* For gc: removes what is left of request/ and tmp/ of every finished,
 * failed or cancelled sandbox (a run whose own cleanup failed, say),
 * warning about what still cannot be removed; result/ stays. Returns the
 * number of rows looked at, or -errno. */
int st_sweep_finished(struct st_store *st);

/* For `cloister gc`: reconciles ./.smithers/cloister.db when it exists
 * (never creates it); prints how many rows were marked failed. */
void st_gc_reconcile_cwd(void);

/* `cloister ps [--json] [--root DIR]`, `cloister events RUN_ID [--root DIR]`. */
int st_cli_ps_main(int argc, char **argv);
int st_cli_events_main(int argc, char **argv);

#endif
