/* A small HTTP/1.1 client over a unix socket: what the docker executor
 * needs of the Engine API (one request per connection, and the hijacked
 * stream of attach). */
#ifndef CL_UHTTP_H
#define CL_UHTTP_H

#include <stddef.h>

#include "src/util/error.h"

struct uh_resp {
	int status;      /* HTTP status code */
	char *body;      /* NUL-terminated, de-chunked; caller frees */
	size_t len;
};

/* Connects to the socket path; fd or a negative code (err filled). */
int uh_connect(const char *sock, cl_error *err);
/* METHOD path with an optional JSON body; reads the whole response.
 * timeout_ms bounds every read and write (0 = none). */
int uh_request(const char *sock, const char *method, const char *path, const char *json,
               int timeout_ms, struct uh_resp *r, cl_error *err);
/* POST path asking for a raw stream (Engine API attach): returns the
 * connection positioned after the response headers, or a negative code. */
int uh_hijack(const char *sock, const char *path, cl_error *err);
void uh_resp_free(struct uh_resp *r);

#endif
