/* Errors of the sandbox front-end: a Smithers error code, the cl_error
 * message (context added with cl_wrap) and a JSON details object. */
#ifndef SB_ERROR_H
#define SB_ERROR_H

#include <jansson.h>
#include <stdbool.h>

#include "src/util/error.h"

enum sb_code {
	SB_INVALID_INPUT,
	SB_TOOL_PATH_ESCAPE,
	SB_TOOL_PATH_INVALID,
	SB_EXECUTION_FAILED,
	SB_PROCESS_SPAWN_FAILED,
};

struct sb_error {
	enum sb_code code;
	cl_error base;      /* message (and errno for host-side failures) */
	json_t *details;    /* object, owned; NULL = {} */
};

/* Sets e (details is stolen, may be NULL) and returns -EINVAL or -errnum. */
int sb_fail(struct sb_error *e, enum sb_code code, int errnum, json_t *details,
            const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* INVALID_INPUT with details {"field": field} (field may be NULL). */
int sb_invalid(struct sb_error *e, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A cl_error from shared code (executor, fd I/O) under a sandbox code. */
int sb_from_cl(struct sb_error *e, enum sb_code code, const cl_error *err);
void sb_error_clear(struct sb_error *e);
/* Always negative, for the analyzer (see CL_NEGATIVE in src/util/error.h). */
#if defined(__clang_analyzer__) && !defined(CL_ERROR_IMPL)
#define sb_fail(...) CL_NEGATIVE((sb_fail)(__VA_ARGS__))
#define sb_invalid(...) CL_NEGATIVE((sb_invalid)(__VA_ARGS__))
#define sb_from_cl(...) CL_NEGATIVE((sb_from_cl)(__VA_ARGS__))
#endif
const char *sb_code_name(enum sb_code code);
/* {"code","message","details"}; caller decrefs. */
json_t *sb_error_to_json(const struct sb_error *e);
/* Exit code for a failure: 125 for input and setup errors, else 1. */
int sb_error_exit_code(const struct sb_error *e);

#endif
