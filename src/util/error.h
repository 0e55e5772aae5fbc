/* One error contract for all of cloister: functions return 0 or a negative
 * errno-style code and fill a cl_error; callers add context on the way up. */
#ifndef CL_ERROR_H
#define CL_ERROR_H

#include <stddef.h>

#define CL_ERROR_MSG_MAX 512
#define CL_ERROR_NOTE_MAX 320

typedef struct cl_error {
	int errnum;                  /* errno of the failed call, 0 for bad input */
	char msg[CL_ERROR_MSG_MAX];  /* what was being done, innermost last */
	char note[CL_ERROR_NOTE_MAX]; /* the kernel limit errnum means, or "" (src/util/limits.h) */
} cl_error;

/* Sets err and returns -errnum (or -EINVAL when errnum is 0: bad input). */
int cl_fail(cl_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Like cl_fail with errnum = errno. */
int cl_fail_errno(cl_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prefixes "context: " to the message; returns the same negative code. */
int cl_wrap(cl_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "message: strerror(errnum) (note)" (or just the message) into buf. */
void cl_error_format(const cl_error *err, char *buf, size_t len);
/* One line on stderr: "cloister: <formatted error>" (cl_error_prog). */
extern const char *cl_error_prog;
void cl_error_print(const cl_error *err);
/* Code to return for err (negative). */
int cl_error_code(const cl_error *err);

/* For clang's static analyzer only (`make lint`; compilers never define
 * __clang_analyzer__): it reads one file at a time and cannot see that
 * these always return a negative code, so it would follow the "success"
 * side of every `if (cl_fail(...) < 0)`. The wrappers state the contract
 * above; error.c defines CL_ERROR_IMPL to see the functions themselves. */
#if defined(__clang_analyzer__) && !defined(CL_ERROR_IMPL)
#define CL_NEGATIVE(call) ({ int cl_neg_ = (call); cl_neg_ < 0 ? cl_neg_ : -1; })
#define cl_fail(...) CL_NEGATIVE((cl_fail)(__VA_ARGS__))
#define cl_fail_errno(...) CL_NEGATIVE((cl_fail_errno)(__VA_ARGS__))
#define cl_wrap(...) CL_NEGATIVE((cl_wrap)(__VA_ARGS__))
#define cl_error_code(e) CL_NEGATIVE((cl_error_code)(e))
#endif

#endif
