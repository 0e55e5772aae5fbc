/* The kernel limit behind a failed call's errno, named with its value, so
 * that an error line says which sysctl or rlimit was reached. */
#ifndef CL_LIMITS_H
#define CL_LIMITS_H

#include <stdbool.h>
#include <stddef.h>

#include "src/util/error.h"

/* Into buf: what limit errnum means for the call that failed, e.g.
 * "too many user namespaces for this user (user.max_user_namespaces = 0)";
 * "" when it names none. ns_flags: the CLONE_NEW* flags of a failed clone
 * or unshare (0 for any other call); forking: the call made a process. */
void cl_limit_note(int errnum, int ns_flags, bool forking, char *buf, size_t size);
/* The same for err->errnum, into err->note (printed after the errno text). */
void cl_error_note_limit(cl_error *err, int ns_flags, bool forking);

#endif
