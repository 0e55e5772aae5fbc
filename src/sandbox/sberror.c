/* Sandbox errors: Smithers' codes and messages carried next to cloister's
 * cl_error, rendered as one JSON object or one readable line. */
#define CL_ERROR_IMPL
#include "src/sandbox/sberror.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 5, 0)))
static int vset(struct sb_error *e, enum sb_code code, int errnum, json_t *details,
                const char *fmt, va_list ap)
{
	e->code = code;
	e->base.errnum = errnum;
	e->base.note[0] = '\0';
	vsnprintf(e->base.msg, sizeof(e->base.msg), fmt, ap);
	if (e->details)
		json_decref(e->details);
	e->details = details;
	return errnum > 0 ? -errnum : -EINVAL;
}

int sb_fail(struct sb_error *e, enum sb_code code, int errnum, json_t *details,
            const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vset(e, code, errnum, details, fmt, ap);
	va_end(ap);
	return rc;
}

int sb_invalid(struct sb_error *e, const char *field, const char *fmt, ...)
{
	json_t *d = field ? json_pack("{s:s}", "field", field) : NULL;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vset(e, SB_INVALID_INPUT, 0, d, fmt, ap);
	va_end(ap);
	return rc;
}

int sb_from_cl(struct sb_error *e, enum sb_code code, const cl_error *err)
{
	char line[CL_ERROR_MSG_MAX + 128];

	cl_error_format(err, line, sizeof(line));
	/* The formatted line already names the errno: keep the code only. */
	sb_fail(e, code, 0, NULL, "%s", line);
	return err->errnum > 0 ? -err->errnum : -EINVAL;
}

void sb_error_clear(struct sb_error *e)
{
	if (e->details)
		json_decref(e->details);
	memset(e, 0, sizeof(*e));
}

const char *sb_code_name(enum sb_code code)
{
	switch (code) {
	case SB_INVALID_INPUT: return "INVALID_INPUT";
	case SB_TOOL_PATH_ESCAPE: return "TOOL_PATH_ESCAPE";
	case SB_TOOL_PATH_INVALID: return "TOOL_PATH_INVALID";
	case SB_EXECUTION_FAILED: return "SANDBOX_EXECUTION_FAILED";
	case SB_PROCESS_SPAWN_FAILED: return "PROCESS_SPAWN_FAILED";
	}
	return "SANDBOX_EXECUTION_FAILED";
}

json_t *sb_error_to_json(const struct sb_error *e)
{
	char line[CL_ERROR_MSG_MAX + 128];

	cl_error_format(&e->base, line, sizeof(line));
	json_t *o = json_pack("{s:s,s:s}", "code", sb_code_name(e->code), "message", line);

	if (o)
		json_object_set_new(o, "details", e->details ? json_incref(e->details) : json_object());
	return o;
}

int sb_error_exit_code(const struct sb_error *e)
{
	return e->code == SB_EXECUTION_FAILED ? 1 : 125;
}
