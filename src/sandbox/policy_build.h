/* A validated sandbox spec plus its layout -> the plain cl_policy the
 * native executor runs. No file system access. */
#ifndef SB_POLICY_BUILD_H
#define SB_POLICY_BUILD_H

#include <jansson.h>

#include "src/policy/policy.h"
#include "src/sandbox/layout.h"
#include "src/sandbox/spec.h"

/* extra_env: object of strings added after the spec's env (egress,
 * protocol variables). */
int sb_build_policy(const struct sb_spec *s, const struct sb_layout *l, const json_t *extra_env,
                    struct cl_policy *p, struct sb_error *e);

#endif
