/* The policy as JSON, for --dry-run --json. */
#ifndef CL_POLICY_JSON_H
#define CL_POLICY_JSON_H

#include "src/policy/policy.h"

/* Caller frees. NULL on allocation failure. */
char *cl_policy_to_json(const struct cl_policy *p);
/* --dry-run: prints the policy's JSON line on stdout; 0, or -1 when it
 * could not be made. */
int cl_policy_print_json(const struct cl_policy *p);

#endif
