/* Builds the sandbox's filesystem in the child's new mount namespace and
 * pivots into it. Runs as root of the new user namespace, before exec. */
#ifndef NS_MOUNTS_H
#define NS_MOUNTS_H

#include <stdint.h>

#include "src/util/error.h"
#include "src/policy/policy.h"

/* Private propagation, every mount of p in order, masks, pivot_root.
 * pre[i] >= 0 is mount i's source already opened and flagged by the
 * parent (ns/idmap.c), pre_root likewise for --rootfs; pre may be NULL. */
int ns_mounts_setup(const struct cl_policy *p, const int *pre, int pre_root, cl_error *err);

/* The mount attributes of a bind with CL_MF_* flags (nosuid always, nodev
 * unless a device bind, read-only with CL_MF_RO), for every path that
 * makes one. */
uint64_t ns_bind_attrs(unsigned flags);

#endif
