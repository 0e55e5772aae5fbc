/* The docker Tty mode: when it is chosen, the create body for it, and the
 * window size passed to the container's pty. */
#define _GNU_SOURCE
#include "src/executors/docker_tty.h"

#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "src/executors/docker_api.h"

#define RESIZE_MS 10000

bool cl_docker_tty_wanted(const struct cl_policy *p)
{
	return p->pty && isatty(0) && isatty(1) && isatty(2);
}

static bool caller_size(struct winsize *ws)
{
	return ioctl(0, TIOCGWINSZ, ws) == 0 && ws->ws_row && ws->ws_col;
}

void cl_docker_tty_body(json_t *body)
{
	struct winsize ws;

	json_object_set_new(body, "Tty", json_true());
	if (caller_size(&ws))
		json_object_set_new(json_object_get(body, "HostConfig"), "ConsoleSize",
		                    json_pack("[i,i]", (int)ws.ws_row, (int)ws.ws_col));
}

void cl_docker_resize(const char *sock, const char *id)
{
	struct winsize ws;
	char path[192];
	json_t *resp = NULL;
	cl_error err = {0};
	int status = 0;

	if (!caller_size(&ws))
		return;
	snprintf(path, sizeof(path), "/containers/%s/resize?h=%u&w=%u", id, (unsigned)ws.ws_row,
	         (unsigned)ws.ws_col);
	cl_docker_call(sock, "POST", path, NULL, RESIZE_MS, &status, &resp, &err);
	json_decref(resp);
}
