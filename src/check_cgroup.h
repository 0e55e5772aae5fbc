/* The cgroup probe of `cloister check` (mode, controllers, what the caller
 * may limit); lives with the cgroup code that knows the answers. */
#ifndef CL_CHECK_CGROUP_H
#define CL_CHECK_CGROUP_H

#include "src/check.h"

void cl_check_cgroup(struct probe_result *r);

#endif
