/* The error contract: negative errno codes plus a message that gathers
 * context as it travels up, printed once as a single line. */
#define CL_ERROR_IMPL
#include "src/util/error.h"
#include "src/util/limits.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int code_of(int errnum)
{
	return errnum > 0 ? -errnum : -EINVAL;
}

__attribute__((format(printf, 3, 0)))
static int vfail(cl_error *err, int errnum, const char *fmt, va_list ap)
{
	err->errnum = errnum;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	/* Only the errnos that mean a limit whatever the call (fds). */
	cl_limit_note(errnum, 0, false, err->note, sizeof(err->note));
	return code_of(errnum);
}

int cl_fail(cl_error *err, int errnum, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(err, errnum, fmt, ap);
	va_end(ap);
	return rc;
}

int cl_fail_errno(cl_error *err, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(err, saved, fmt, ap);
	va_end(ap);
	return rc;
}

int cl_wrap(cl_error *err, const char *fmt, ...)
{
	char out[CL_ERROR_MSG_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, sizeof(out), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(out) - 1)
		n = (int)sizeof(out) - 1;
	/* "context: old message", cut at the buffer's end. */
	for (const char *src = ": "; *src && (size_t)n < sizeof(out) - 1; src++)
		out[n++] = *src;
	for (const char *src = err->msg; *src && (size_t)n < sizeof(out) - 1; src++)
		out[n++] = *src;
	out[n] = '\0';
	memcpy(err->msg, out, sizeof(out));
	return code_of(err->errnum);
}

void cl_error_format(const cl_error *err, char *buf, size_t len)
{
	if (err->errnum > 0 && err->note[0])
		snprintf(buf, len, "%s: %s (%s)", err->msg, strerror(err->errnum), err->note);
	else if (err->errnum > 0)
		snprintf(buf, len, "%s: %s", err->msg, strerror(err->errnum));
	else
		snprintf(buf, len, "%s", err->msg);
}

/* Program name on error lines ("bwrap" in bwrap mode, as scripts expect). */
const char *cl_error_prog = "cloister";

void cl_error_print(const cl_error *err)
{
	char line[CL_ERROR_MSG_MAX + CL_ERROR_NOTE_MAX + 128];

	cl_error_format(err, line, sizeof(line));
	fprintf(stderr, "%s: %s\n", cl_error_prog, line);
}

int cl_error_code(const cl_error *err)
{
	return code_of(err->errnum);
}
