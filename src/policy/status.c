/* Final status of a run as JSON (--json-status FILE|fd:N). */
#define _GNU_SOURCE
#include "src/policy/status.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/util/fdio.h"

void cl_status_init(struct cl_status *st)
{
	memset(st, 0, sizeof(*st));
	st->user_ms = -1;
	st->sys_ms = -1;
	st->memory_peak = -1;
	st->runtime = "native";
}

void cl_status_release(struct cl_status *st)
{
	json_decref(st->ws_skipped);
	st->ws_skipped = NULL;
}

static json_t *ms_or_null(double v)
{
	return v < 0 ? json_null() : json_real((double)(long long)(v * 1000.0 + 0.5) / 1000.0);
}

char *cl_status_to_json(const struct cl_status *st)
{
	json_t *o = json_object();
	char *s;

	json_object_set_new(o, "exit_code", json_integer(st->exit_code));
	json_object_set_new(o, "signal", st->signal ? json_integer(st->signal) : json_null());
	json_object_set_new(o, "timed_out", json_boolean(st->timed_out));
	json_object_set_new(o, "oom_killed", json_boolean(st->oom_killed));
	json_object_set_new(o, "output_truncated", json_boolean(st->output_truncated));
	json_object_set_new(o, "wall_ms", ms_or_null(st->wall_ms));
	json_object_set_new(o, "user_ms", ms_or_null(st->user_ms));
	json_object_set_new(o, "sys_ms", ms_or_null(st->sys_ms));
	json_object_set_new(o, "memory_peak_bytes",
	                    st->memory_peak < 0 ? json_null() : json_integer(st->memory_peak));
	json_object_set_new(o, "runtime", json_string(st->runtime ? st->runtime : "native"));
	json_object_set_new(o, "child_pid", st->child_pid > 0 ? json_integer(st->child_pid)
	                                                      : json_null());
	if (st->fallback[0])
		json_object_set_new(o, "runtime_fallback", json_string(st->fallback));
	if (json_array_size(st->ws_skipped))
		json_object_set(o, "skipped", st->ws_skipped);
	/* 15 significant digits: the millisecond values are rounded to 3
	 * decimals above, and jansson's default (17) would print the binary
	 * approximation of that (451.99200000000002). */
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	json_decref(o);
	return s;
}

int cl_status_write(const struct cl_status *st, const char *path, int fd, cl_error *err)
{
	char *json = cl_status_to_json(st);
	int rc = 0, own = -1;

	if (!json)
		return cl_fail(err, ENOMEM, "formatting the status JSON");
	if (path) {
		own = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (own < 0)
			rc = cl_fail_errno(err, "writing status to %s", path);
		fd = own;
	}
	if (rc == 0 && fd >= 0) {
		size_t len = strlen(json);
		json[len] = '\n';
		rc = cl_write_all(fd, json, len + 1);
		json[len] = '\0';
		if (rc < 0)
			rc = cl_fail(err, -rc, "writing the status JSON");
	}
	if (own >= 0)
		close(own);
	free(json);
	return rc;
}
