/* CPU time and memory peak of a docker run, read on the host: the container
 * is made under a cgroup of cloister's own, whose counters outlive the
 * container's own cgroup (docker's stats of an exited container are 0). */
#ifndef CL_DOCKER_ACCT_H
#define CL_DOCKER_ACCT_H

#include <stdbool.h>

#include "src/util/error.h"
#include "src/policy/status.h"

/* The container label naming its accounting cgroup, for `cloister gc`. */
#define CL_DK_ACCT_LABEL "org.cloister.acct.cgroup"

struct dk_acct {
	char parent[256];  /* the CgroupParent docker is given; "" = not measured */
	int version;       /* the daemon's cgroup version, 1 or 2 */
	int cpu_fd;        /* our cgroup in the cpuacct (v1) or unified (v2) tree, or -1 */
	int mem_fd;        /* ... in the memory tree (v1; = cpu_fd's tree on v2), or -1 */
};

/* Before create: makes <base>/<name> (base: the policy's --cgroup-parent,
 * else docker's /docker) in the accounting hierarchies, when the daemon
 * puts containers in cgroupfs paths this process sees and may create.
 * Anything else leaves the run unmeasured (a->parent ""), never an error:
 * the fields are then null. */
void cl_dk_acct_prepare(struct dk_acct *a, const char *sock, const char *name,
                        const char *base);
/* After the container is gone: user_ms, sys_ms and memory_peak into st,
 * each only when the counter shows the container was there. */
void cl_dk_acct_read(const struct dk_acct *a, struct cl_status *st);
/* Removes our cgroup from every hierarchy (docker made it in the others
 * too). Only once the container is removed: its cgroup is a child. */
void cl_dk_acct_release(struct dk_acct *a);
/* gc: removes the accounting cgroup PARENT of a removed container NAME,
 * only if it is one cloister makes (".../NAME", NAME "cloister-..."): a
 * label is anyone's to write. */
void cl_dk_acct_forget(const char *parent, const char *name);

#endif
