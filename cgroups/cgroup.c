/* The launch path's view of resource limits: picks the backend for this
 * host (v2, or v1 on v1/hybrid hosts) and runs it through a small table. */
#define _GNU_SOURCE
#include "cgroups/cgroup.h"
#include "cgroups/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static bool wants_cgroup(const struct cl_limits *l)
{
	return l->memory || l->memory_swap >= 0 || l->cpu_quota_us || l->pids || l->cgroup_parent;
}

static uint32_t leaf_random(void)
{
	uint32_t r;
	struct timespec ts;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)ts.tv_nsec ^ ((uint32_t)getpid() << 16);
}

int cg_create(const struct cl_policy *p, struct cg_handle **out, cl_error *err)
{
	const struct cl_limits *l = &p->limits;
	enum cg_mode mode;
	struct cg_handle *h;
	char what[96];
	int rc;

	*out = NULL;
	mode = !wants_cgroup(l) && !p->session ? CG_MODE_NONE : cg_detect_mode();
	/* A session without limits still gets a v1 freezer cgroup where it
	 * may (its snapshots pause it); anything else without limits, or a v2
	 * host (no cgroup to make without a delegation), none. */
	if (!wants_cgroup(l) && (mode == CG_MODE_NONE || mode == CG_MODE_V2))
		return 0;
	if (mode == CG_MODE_NONE) {
		cg_describe_limits(l, what, sizeof(what));
		return cl_fail(err, 0, "%s: no cgroup filesystem is mounted at " CG_ROOT
		               "; mount cgroup2 there, or drop the limit flags", what);
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return cl_fail(err, ENOMEM, "creating the sandbox cgroup");
	h->be = mode == CG_MODE_V2 ? &cg_backend_v2 : &cg_backend_v1;
	h->clone_fd = -1;
	h->mem = h->cpuacct = -1;
	h->explicit_parent = l->cgroup_parent != NULL;
	h->want_freezer = p->session;
	h->freezer_only = !wants_cgroup(l);
	for (size_t i = 0; i < CG_V1_MAX; i++)
		h->dirs[i].fd = h->dirs[i].parent_fd = -1;
	cg_fmt_leaf(h->name, sizeof(h->name), getpid(), leaf_random(), l->cgroup_parent != NULL);
	rc = h->be->create(h, l, err);
	if (rc < 0 || (h->freezer_only && !h->n)) {
		cg_destroy(h);
		/* Only a pause was wanted: without it the session runs, and its
		 * snapshots say that it was not paused. */
		if (!wants_cgroup(l)) {
			*err = (cl_error){0};
			return 0;
		}
		return rc;
	}
	*out = h;
	return 0;
}

int cg_clone_fd(const struct cg_handle *h)
{
	return h ? h->clone_fd : -1;
}

int cg_attach(struct cg_handle *h, pid_t pid, cl_error *err)
{
	return h ? h->be->attach(h, pid, err) : 0;
}

int cg_collect(struct cg_handle *h, struct cg_stats *st)
{
	return h ? h->be->collect(h, st) : -1;
}

void cg_destroy(struct cg_handle *h)
{
	if (!h)
		return;
	h->be->destroy(h);
	free(h);
}
