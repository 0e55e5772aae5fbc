/* The cgroup probe of `cloister check` (mode, controllers, what the caller
 * may limit); lives with the cgroup code that knows the answers. */
#ifndef CG_CHECK_H
#define CG_CHECK_H

#include "src/util/probe.h"

void cl_check_cgroup(struct probe_result *r);

#endif
