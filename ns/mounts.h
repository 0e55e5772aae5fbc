/* Builds the sandbox's filesystem in the child's new mount namespace and
 * pivots into it. Runs as root of the new user namespace, before exec. */
#ifndef NS_MOUNTS_H
#define NS_MOUNTS_H

#include "src/error.h"
#include "src/policy.h"

/* Private propagation, every mount of p in order, masks, pivot_root. */
int ns_mounts_setup(const struct cl_policy *p, cl_error *err);

#endif
