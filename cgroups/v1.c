/* cgroup v1 backend (v1-only and hybrid hosts): one directory per needed
 * hierarchy, limits written before the child is released, stats read after. */
#define _GNU_SOURCE
#include "cgroups/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#define V1_HINT "cgroup v1 hierarchies are root-only here: run as root, " \
	"use a cgroup v2 host with a delegated cgroup (systemd-run --user -p Delegate=yes --scope ...), " \
	"or pass --cgroup-parent with a v1 cgroup this user owns"

struct v1_ctrl {
	const char *name;
	const char *flag;     /* the limit that needs it, for messages */
	bool required;
};

/* st_dev of the hierarchy mounted at CG_ROOT/name, or 0 if none: co-mounted
 * controllers (cpu,cpuacct) share one superblock and so one directory. */
static dev_t v1_hierarchy(const char *name)
{
	char path[64];
	struct statfs sf;
	struct stat st;

	snprintf(path, sizeof(path), CG_ROOT "/%s", name);
	if (statfs(path, &sf) < 0 || sf.f_type != CGROUP_SUPER_MAGIC || stat(path, &st) < 0)
		return 0;
	return st.st_dev;
}

static int v1_fail(cl_error *err, const char *flag, const char *path, int e, const char *hint)
{
	return cl_fail(err, 0, "%s: cannot create cgroup %s: %s; %s", flag, path, strerror(e), hint);
}

/* Creates CG_ROOT/ctrl/<parent>/<name>; required hierarchies fail loudly,
 * optional ones (stats only) are skipped when not permitted. */
static int v1_make_dir(struct cg_handle *h, const struct cl_limits *l, const struct v1_ctrl *c,
                       cl_error *err)
{
	struct cg_dir *d = &h->dirs[h->n];
	char base[PATH_MAX];
	int rc;

	snprintf(base, sizeof(base), CG_ROOT "/%s%s", c->name,
	         l->cgroup_parent ? l->cgroup_parent : "/" CG_BASE);
	rc = cg_open_dir(base, !l->cgroup_parent, &d->parent_fd);
	if (rc < 0) {
		d->parent_fd = -1;
		if (!c->required)
			return 0;
		return v1_fail(err, c->flag, base, -rc,
		               rc == -ENOENT && l->cgroup_parent
		                       ? "--cgroup-parent must name an existing cgroup" : V1_HINT);
	}
	snprintf(d->path, sizeof(d->path), "%s/%s", base, h->name);
	d->fd = -1;
	if (mkdirat(d->parent_fd, h->name, 0755) < 0) {
		rc = -errno;
		close(d->parent_fd);
		d->parent_fd = -1;
		if (!c->required)
			return 0;
		return v1_fail(err, c->flag, d->path, -rc, V1_HINT);
	}
	d->fd = openat(d->parent_fd, h->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d->ctrl = c->name;
	h->n++;
	if (d->fd < 0)
		return cl_fail_errno(err, "%s: opening cgroup %s", c->flag, d->path);
	return 1;
}

static int v1_write(cl_error *err, const struct cg_dir *d, const char *flag, const char *file,
                    uint64_t v)
{
	int rc = cg_write_u64(d->fd, file, v);

	if (rc < 0)
		return cl_fail(err, -rc, "%s: writing %s/%s", flag, d->path, file);
	return 0;
}

static int v1_limits(struct cg_handle *h, const struct cl_limits *l, size_t i, cl_error *err)
{
	const struct cg_dir *d = &h->dirs[i];
	int64_t memsw = cg_memsw_limit(l->memory, l->memory_swap);

	if (strcmp(d->ctrl, "memory") == 0 && l->memory) {
		if (v1_write(err, d, "--memory", "memory.limit_in_bytes", l->memory) < 0)
			return -1;
		if (memsw < 0)
			return 0;
		if (faccessat(d->fd, "memory.memsw.limit_in_bytes", F_OK, 0) < 0)
			return cl_fail(err, 0, "--memory-swap: this kernel does not account swap in "
			               "cgroup v1 (no memory.memsw.limit_in_bytes): boot with "
			               "swapaccount=1, or drop --memory-swap");
		return v1_write(err, d, "--memory-swap", "memory.memsw.limit_in_bytes", (uint64_t)memsw);
	}
	if (strcmp(d->ctrl, "cpu") == 0 && l->cpu_quota_us) {
		if (v1_write(err, d, "--cpus", "cpu.cfs_period_us", l->cpu_period_us) < 0)
			return -1;
		return v1_write(err, d, "--cpus", "cpu.cfs_quota_us", l->cpu_quota_us);
	}
	if (strcmp(d->ctrl, "pids") == 0 && l->pids)
		return v1_write(err, d, "--pids", "pids.max", l->pids);
	return 0;
}

static int v1_create(struct cg_handle *h, const struct cl_limits *l, cl_error *err)
{
	const struct v1_ctrl ctrls[CG_V1_MAX] = {
		{"memory", "--memory", l->memory != 0},
		{"cpu", "--cpus", l->cpu_quota_us != 0},
		{"cpuacct", "--cpus", false},
		{"pids", "--pids", l->pids != 0},
		{"freezer", "pausing the session", false},
	};
	dev_t seen[CG_V1_MAX] = {0};
	size_t n_seen = 0;

	for (size_t i = 0; i < CG_V1_MAX; i++) {
		const struct v1_ctrl *c = &ctrls[i];
		dev_t dev = v1_hierarchy(c->name);
		bool dup = false;
		int rc;

		for (size_t j = 0; j < n_seen; j++)
			dup |= seen[j] == dev;
		if (!dev || dup) {
			if (!dev && c->required)
				return cl_fail(err, 0, "%s: the %s cgroup controller is not mounted at "
				               CG_ROOT "/%s; enable it, or drop %s", c->flag, c->name,
				               c->name, c->flag);
			/* cpuacct co-mounted with cpu: stats come from the cpu dir. */
			if (dup && strcmp(c->name, "cpuacct") == 0)
				for (size_t j = 0; j < h->n; j++)
					if (strcmp(h->dirs[j].ctrl, "cpu") == 0)
						h->cpuacct = (int)j;
			continue;
		}
		/* Each hierarchy costs a mkdir, an attach and an rmdir per run: cpu
		 * and pids only for their limits; memory always (OOM and peak
		 * reports); a separate cpuacct never: init's rusage, which covers
		 * every descendant it reaped, gives the cpu times.
		 * A session's freezer where it may (an optional dir), and with no
		 * limits that alone. */
		bool optional = (strcmp(c->name, "memory") == 0 && !h->freezer_only) ||
		                (strcmp(c->name, "freezer") == 0 && h->want_freezer);
		if (!c->required && !optional)
			continue;
		seen[n_seen++] = dev;
		rc = v1_make_dir(h, l, c, err);
		if (rc < 0)
			return rc;
		if (rc == 0)
			continue;
		if (strcmp(c->name, "memory") == 0)
			h->mem = (int)h->n - 1;
		if (strcmp(c->name, "cpuacct") == 0)
			h->cpuacct = (int)h->n - 1;
		if (v1_limits(h, l, h->n - 1, err) < 0)
			return cl_error_code(err);
	}
	if (!h->n && !h->freezer_only)
		return cl_fail(err, 0, "--cgroup-parent: no cgroup v1 hierarchy could be used; " V1_HINT);
	return 0;
}

static int v1_attach(struct cg_handle *h, pid_t pid, cl_error *err)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", (int)pid);
	for (size_t i = 0; i < h->n; i++) {
		int rc = cg_write(h->dirs[i].fd, "cgroup.procs", buf);
		if (rc < 0)
			return cl_fail(err, -rc, "placing the sandbox in cgroup %s", h->dirs[i].path);
	}
	return 0;
}

static int v1_collect(struct cg_handle *h, struct cg_stats *st)
{
	int64_t v;

	if (h->mem >= 0) {
		int fd = h->dirs[h->mem].fd;
		/* oom_kill counts kills in this memcg (Linux >= 4.13); failcnt
		 * (limit hits) is the best older kernels give. */
		if (cg_read_key(fd, "memory.oom_control", "oom_kill", &v) == 0 ||
		    cg_read_i64(fd, "memory.failcnt", &v) == 0)
			st->oom_killed = v > 0;
		if (cg_read_i64(fd, "memory.max_usage_in_bytes", &v) == 0)
			st->memory_peak = v;
	}
	if (h->cpuacct >= 0) {
		int fd = h->dirs[h->cpuacct].fd;
		int64_t sys;
		if (cg_read_i64(fd, "cpuacct.usage_user", &v) == 0 &&
		    cg_read_i64(fd, "cpuacct.usage_sys", &sys) == 0) {
			st->user_ms = (double)v / 1e6;
			st->sys_ms = (double)sys / 1e6;
		} else if (cg_read_key(fd, "cpuacct.stat", "user", &v) == 0 &&
		           cg_read_key(fd, "cpuacct.stat", "system", &sys) == 0) {
			st->user_ms = cg_ticks_to_ms(v, sysconf(_SC_CLK_TCK));
			st->sys_ms = cg_ticks_to_ms(sys, sysconf(_SC_CLK_TCK));
		}
	}
	return 0;
}

static void v1_destroy(struct cg_handle *h)
{
	for (size_t i = 0; i < h->n; i++) {
		struct cg_dir *d = &h->dirs[i];
		if (d->fd >= 0) {
			/* A frozen v1 task cannot die: thawed before the kill. */
			if (strcmp(d->ctrl, "freezer") == 0)
				cg_write(d->fd, "freezer.state", "THAWED");
			cg_kill_loop(d->fd);
			close(d->fd);
		}
		int rc = cg_rmdir(d->parent_fd, h->name);
		if (rc < 0)
			fprintf(stderr, "cloister: removing cgroup %s: %s (`cloister gc` retries)\n",
			        d->path, strerror(-rc));
		cg_sweep_beside(d, h->explicit_parent);
		close(d->parent_fd);
	}
	h->n = 0;
}

const struct cg_backend cg_backend_v1 = {
	.name = "v1",
	.create = v1_create,
	.attach = v1_attach,
	.collect = v1_collect,
	.destroy = v1_destroy,
};
