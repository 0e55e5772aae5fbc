/* libsqlite3, loaded on first use: only the state commands need it, and a
 * shared library linked into cloister would cost every `cloister run`
 * launch its share of ld.so time. Include after <sqlite3.h>; the sqlite3_*
 * names used by src/state/ then go through the loaded table. */
#ifndef ST_SQLITE_DL_H
#define ST_SQLITE_DL_H

#include <sqlite3.h>

#include "src/util/error.h"

struct st_sqlite_api {
	int (*open_v2)(const char *, sqlite3 **, int, const char *);
	int (*close)(sqlite3 *);
	int (*busy_timeout)(sqlite3 *, int);
	int (*exec)(sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *, char **);
	const char *(*errmsg)(sqlite3 *);
	int (*prepare_v2)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
	int (*step)(sqlite3_stmt *);
	int (*finalize)(sqlite3_stmt *);
	int (*bind_text)(sqlite3_stmt *, int, const char *, int, void (*)(void *));
	int (*bind_int64)(sqlite3_stmt *, int, sqlite3_int64);
	int (*bind_int)(sqlite3_stmt *, int, int);
	const unsigned char *(*column_text)(sqlite3_stmt *, int);
	int (*column_int)(sqlite3_stmt *, int);
	sqlite3_int64 (*column_int64)(sqlite3_stmt *, int);
	int (*column_type)(sqlite3_stmt *, int);
};

extern struct st_sqlite_api st_sqlite;

/* Loads libsqlite3.so.0 once; 0, or err says what is missing. */
int st_sqlite_load(cl_error *err);

#ifndef ST_SQLITE_DL_IMPL
#define sqlite3_open_v2 st_sqlite.open_v2
#define sqlite3_close st_sqlite.close
#define sqlite3_busy_timeout st_sqlite.busy_timeout
#define sqlite3_exec st_sqlite.exec
#define sqlite3_errmsg st_sqlite.errmsg
#define sqlite3_prepare_v2 st_sqlite.prepare_v2
#define sqlite3_step st_sqlite.step
#define sqlite3_finalize st_sqlite.finalize
#define sqlite3_bind_text st_sqlite.bind_text
#define sqlite3_bind_int64 st_sqlite.bind_int64
#define sqlite3_bind_int st_sqlite.bind_int
#define sqlite3_column_text st_sqlite.column_text
#define sqlite3_column_int st_sqlite.column_int
#define sqlite3_column_int64 st_sqlite.column_int64
#define sqlite3_column_type st_sqlite.column_type
#endif

#endif
