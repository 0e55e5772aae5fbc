/* Whether a config file (and everything it names) may be believed: only
 * root or the caller could have written it, and no sandbox can. */
#ifndef CL_TRUST_H
#define CL_TRUST_H

#include "src/util/error.h"
#include "src/policy/policy.h"

/* Opens path for reading (O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC) and checks it as
 * sshd's StrictModes would: a regular file owned by root or the caller,
 * not writable by group or others; every directory from / down to it
 * owned by root or the caller and not writable by group or others (a
 * sticky one, as /tmp, may be). With sandbox set, the file must also be
 * out of reach of that sandbox: not the source of one of its writable
 * binds, nor below one where the caller owns it or a directory on the
 * way (the sandbox writes as the caller and could replace it for the next
 * launch). "what" names the file in errors ("policy", "seccomp profile").
 * Returns 0 with *out, -errno of the open (err untouched: the caller says
 * what a missing file means), or -errno with err filled. */
int cl_trust_open(const char *path, const char *what, const struct cl_policy *sandbox,
                  int *out, cl_error *err);

#endif
