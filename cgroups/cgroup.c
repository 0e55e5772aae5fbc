/* Placeholder until the cgroup backends land: no limits, no cgroup. */
#include "cgroups/cgroup.h"
#include "src/check_cgroup.h"

#include <stdio.h>

int cg_create(const struct cl_policy *p, struct cg_handle **out, cl_error *err)
{
	const struct cl_limits *l = &p->limits;

	*out = NULL;
	if (!l->memory && !l->cpu_quota_us && !l->pids && !l->cgroup_parent)
		return 0;
	return cl_fail(err, 0, "resource limits are not built yet");
}

int cg_clone_fd(const struct cg_handle *h) { return -1; }
int cg_attach(struct cg_handle *h, pid_t pid, cl_error *err) { return 0; }
int cg_collect(struct cg_handle *h, struct cg_stats *st) { return -1; }
void cg_destroy(struct cg_handle *h) {}
void cl_check_cgroup(struct probe_result *r)
{
	r->ok = false;
	snprintf(r->detail, sizeof(r->detail), "not probed yet");
}
