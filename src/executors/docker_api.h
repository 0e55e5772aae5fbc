/* Engine API calls the docker executor makes, each one request. */
#ifndef CL_DOCKER_API_H
#define CL_DOCKER_API_H

#include <jansson.h>
#include <stdbool.h>

#include "src/util/error.h"

/* The daemon's socket: DOCKER_HOST (unix:// only) or the default. NULL
 * with err set when DOCKER_HOST names something else. */
const char *cl_docker_socket(cl_error *err);
/* GET /_ping within a short timeout. */
int cl_docker_ping(const char *sock, cl_error *err);
/* A call whose answer is JSON (or empty). *status gets the HTTP status;
 * *out the parsed body (NULL if empty or not JSON). Transport failures
 * are errors; HTTP errors are the caller's to read. */
int cl_docker_call(const char *sock, const char *method, const char *path, json_t *body,
                   int timeout_ms, int *status, json_t **out, cl_error *err);
/* The daemon's error message from an error body, or a fallback. */
const char *cl_docker_message(const json_t *body);
/* DELETE /containers/ID?force=1: gone afterwards, running or not. */
int cl_docker_remove(const char *sock, const char *id, cl_error *err);

#endif
