/* Engine API requests as JSON in, JSON out, over src/executors/uhttp.c.
 * Version-less paths: the daemon answers them at its own API version. */
#define _GNU_SOURCE
#include "src/executors/docker_api.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/executors/uhttp.h"

#define DOCKER_DEFAULT_SOCK "/var/run/docker.sock"
#define DOCKER_PING_MS 2000

const char *cl_docker_socket(cl_error *err)
{
	const char *host = getenv("DOCKER_HOST");

	if (!host || !host[0])
		return DOCKER_DEFAULT_SOCK;
	if (strncmp(host, "unix://", 7) == 0 && host[7] == '/')
		return host + 7;
	cl_fail(err, 0, "DOCKER_HOST=%s: only unix:// sockets are supported", host);
	return NULL;
}

int cl_docker_ping(const char *sock, cl_error *err)
{
	struct uh_resp r;
	int rc = uh_request(sock, "GET", "/_ping", NULL, DOCKER_PING_MS, &r, err);

	if (rc < 0)
		return rc;
	if (r.status != 200)
		rc = cl_fail(err, 0, "the docker daemon at %s answered /_ping with HTTP %d", sock,
		             r.status);
	uh_resp_free(&r);
	return rc;
}

int cl_docker_call(const char *sock, const char *method, const char *path, json_t *body,
                   int timeout_ms, int *status, json_t **out, cl_error *err)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	struct uh_resp r;
	int rc;

	*out = NULL;
	if (body && !text)
		return cl_fail(err, ENOMEM, "formatting a docker request");
	rc = uh_request(sock, method, path, text, timeout_ms, &r, err);
	free(text);
	if (rc < 0)
		return rc;
	*status = r.status;
	if (r.len)
		*out = json_loadb(r.body, r.len, 0, NULL);
	uh_resp_free(&r);
	return 0;
}

const char *cl_docker_message(const json_t *body)
{
	const char *m = json_string_value(json_object_get(body, "message"));

	return m ? m : "no message";
}

int cl_docker_remove(const char *sock, const char *id, cl_error *err)
{
	char path[256];
	json_t *body;
	int status = 0, rc;

	snprintf(path, sizeof(path), "/containers/%s?force=1&v=1", id);
	rc = cl_docker_call(sock, "DELETE", path, NULL, 30000, &status, &body, err);
	if (rc == 0 && status != 204 && status != 404)
		rc = cl_fail(err, 0, "removing container %s: %s", id, cl_docker_message(body));
	json_decref(body);
	return rc;
}
