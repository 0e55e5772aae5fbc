/* libcurl, loaded with dlopen on the codeplane executor's first request:
 * linking it would cost every native launch its ~20 shared libraries. */
#ifndef CL_CURL_DL_H
#define CL_CURL_DL_H

#include <curl/curl.h>

#include "src/util/error.h"

struct cl_curl_api {
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
};

extern struct cl_curl_api cl_curl;
/* Loads libcurl.so.4 once; an error names the package to install. */
int cl_curl_load(cl_error *err);

#endif
