/* Loads libsqlite3 with dlopen the first time the state store is opened,
 * so commands that never touch the store do not pay for the library. */
#define _GNU_SOURCE
#define ST_SQLITE_DL_IMPL
#include "src/state/sqlite_dl.h"
#include "src/util/dl.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>

struct st_sqlite_api st_sqlite;

int st_sqlite_load(cl_error *err)
{
	static const char *const names[] = {
		"sqlite3_open_v2", "sqlite3_close", "sqlite3_busy_timeout", "sqlite3_exec",
		"sqlite3_errmsg", "sqlite3_prepare_v2", "sqlite3_step", "sqlite3_finalize",
		"sqlite3_bind_text", "sqlite3_bind_int64", "sqlite3_bind_int", "sqlite3_column_text",
		"sqlite3_column_int", "sqlite3_column_int64", "sqlite3_column_type",
	};
	static bool loaded;
	struct st_sqlite_api api;
	void **slot = (void **)&api;

	_Static_assert(sizeof(api) == sizeof(names) / sizeof(*names) * sizeof(void *),
	               "one name per table entry");
	if (loaded)
		return 0;
	if (cl_dl_table("libsqlite3.so.0", "libsqlite3-0", names, sizeof(names) / sizeof(*names), slot, err) < 0)
		return cl_error_code(err);
	memcpy(&st_sqlite, &api, sizeof(api));
	loaded = true;
	return 0;
}
