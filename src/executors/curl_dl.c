/* Loads libcurl.so.4 the first time the codeplane executor talks HTTP, so
 * no other command (and no native launch) pays for it. */
#define _GNU_SOURCE
#include "src/executors/curl_dl.h"
#include "src/util/dl.h"

#include <stdbool.h>
#include <string.h>

struct cl_curl_api cl_curl;

int cl_curl_load(cl_error *err)
{
	static const char *const names[] = {
		"curl_easy_init", "curl_easy_setopt", "curl_easy_perform", "curl_easy_getinfo",
		"curl_easy_cleanup", "curl_easy_strerror", "curl_slist_append", "curl_slist_free_all",
	};
	static bool loaded;
	struct cl_curl_api api;
	void **slot = (void **)&api;

	_Static_assert(sizeof(api) == sizeof(names) / sizeof(*names) * sizeof(void *),
	               "one name per table entry");
	if (loaded)
		return 0;
	if (cl_dl_table("libcurl.so.4", "libcurl4", names, sizeof(names) / sizeof(*names), slot, err) < 0)
		return cl_error_code(err);
	memcpy(&cl_curl, &api, sizeof(api));
	loaded = true;
	return 0;
}
