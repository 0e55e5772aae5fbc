/* cgroup v2 backend: one leaf per sandbox under a parent this caller may
 * write (root: /cloister; rootless: beside its own delegated cgroup, or
 * --cgroup-parent), entered atomically with clone3(CLONE_INTO_CGROUP). */
#define _GNU_SOURCE
#include "cgroups/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define V2_HINT "give this user a delegated cgroup (systemd-run --user -p Delegate=yes --scope ...), " \
	"pass --cgroup-parent with a cgroup this user owns, or run as root"

static bool has_word(const char *list, const char *w)
{
	size_t wl = strlen(w);

	for (const char *p = list; (p = strstr(p, w)); p += wl)
		if ((p == list || p[-1] == ' ') && (p[wl] == ' ' || p[wl] == '\n' || !p[wl]))
			return true;
	return false;
}

/* Enables ctrl for the children of dirfd unless `have` (the current
 * cgroup.subtree_control) already lists it. */
static int v2_enable(int dirfd, const char *have, const char *ctrl)
{
	char op[32];

	if (has_word(have, ctrl))
		return 0;
	snprintf(op, sizeof(op), "+%s", ctrl);
	return cg_write(dirfd, "cgroup.subtree_control", op);
}

struct v2_need {
	const char *ctrl;
	const char *flag;
	bool required;
};

/* Enables the controllers in one level; optional ones (memory for the
 * peak/OOM report) are best effort. */
static int v2_enable_all(int dirfd, const char *path, const struct v2_need *need, size_t n,
                         cl_error *err)
{
	char have[512] = "";

	cg_read(dirfd, "cgroup.subtree_control", have, sizeof(have));
	for (size_t i = 0; i < n; i++) {
		int rc = v2_enable(dirfd, have, need[i].ctrl);
		const char *why;

		if (rc == 0 || !need[i].required)
			continue;
		if (rc == -EBUSY)
			why = "that cgroup holds processes of its own and cgroup v2 allows controllers "
			      "only above leaves: start cloister from a leaf cgroup below it";
		else if (rc == -ENOENT || rc == -EINVAL)
			why = "the controller is not delegated to it: enable it in the parent "
			      "(systemd: Delegate=yes)";
		else
			why = V2_HINT;
		return cl_fail(err, 0, "%s: cannot enable the %s controller in %s: %s; %s",
		               need[i].flag, need[i].ctrl, path, strerror(-rc), why);
	}
	return 0;
}

/* Rootless: the parent of our own cgroup, if this user may write it. Our
 * own cgroup holds our processes, so it cannot host controllers itself. */
static int v2_delegated(char *base, size_t len, const char *what, cl_error *err)
{
	char text[4096], own[PATH_MAX - 64], *slash;
	int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 0)
		return cl_fail_errno(err, "%s: reading /proc/self/cgroup", what);
	text[n] = '\0';
	if (cg_parse_proc_cgroup(text, "", own, sizeof(own)) < 0)
		return cl_fail(err, 0, "%s: this process has no cgroup v2 path; %s", what, V2_HINT);
	slash = strrchr(own, '/');
	if (slash == own)
		return cl_fail(err, 0, "%s: this process's cgroup %s is not delegated (it is the "
		               "root cgroup); %s", what, own, V2_HINT);
	*slash = '\0';
	if (snprintf(base, len, CG_ROOT "%s", own) >= (int)len)
		return cl_fail(err, ENAMETOOLONG, "%s: cgroup path %s", what, own);
	{
		char procs[PATH_MAX + 32];
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", base);
		if (access(base, W_OK) < 0 || access(procs, W_OK) < 0)
			return cl_fail(err, 0, "%s: cgroup %s (the parent of this process's cgroup) is "
			               "not delegated to this user: %s; %s", what, base, strerror(errno),
			               V2_HINT);
	}
	return 0;
}

static int v2_write(cl_error *err, const struct cg_dir *d, const char *flag, const char *file,
                    const char *val)
{
	int rc = cg_write(d->fd, file, val);

	if (rc == -ENOENT)
		return cl_fail(err, 0, "%s: %s/%s is missing (controller not enabled there); "
		               "drop %s or enable the controller", flag, d->path, file, flag);
	if (rc < 0)
		return cl_fail(err, -rc, "%s: writing %s/%s", flag, d->path, file);
	return 0;
}

static int v2_limits(struct cg_handle *h, const struct cl_limits *l, cl_error *err)
{
	const struct cg_dir *d = &h->dirs[0];
	int64_t swap = cg_swap_max(l->memory, l->memory_swap);
	char buf[64];

	if (l->memory) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)l->memory);
		if (v2_write(err, d, "--memory", "memory.max", buf) < 0)
			return -1;
	}
	if (swap >= 0) {
		snprintf(buf, sizeof(buf), "%lld", (long long)swap);
		if (faccessat(d->fd, "memory.swap.max", F_OK, 0) < 0)
			return cl_fail(err, 0, "--memory-swap: this kernel does not account swap "
			               "(no memory.swap.max): drop --memory-swap");
		if (v2_write(err, d, "--memory-swap", "memory.swap.max", buf) < 0)
			return -1;
	}
	if (l->cpu_quota_us) {
		cg_fmt_cpu_max(buf, sizeof(buf), l->cpu_quota_us, l->cpu_period_us);
		if (v2_write(err, d, "--cpus", "cpu.max", buf) < 0)
			return -1;
	}
	if (l->pids) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)l->pids);
		if (v2_write(err, d, "--pids", "pids.max", buf) < 0)
			return -1;
	}
	return 0;
}

static bool clone3_available(void)
{
	/* A zero-sized clone_args is rejected with EINVAL when clone3 exists. */
	return !(syscall(SYS_clone3, NULL, 0) < 0 && errno == ENOSYS);
}

static int v2_create(struct cg_handle *h, const struct cl_limits *l, cl_error *err)
{
	const struct v2_need need[] = {
		{"memory", "--memory", l->memory != 0},
		{"cpu", "--cpus", l->cpu_quota_us != 0},
		{"pids", "--pids", l->pids != 0},
	};
	const size_t n_need = sizeof(need) / sizeof(*need);
	struct cg_dir *d = &h->dirs[0];
	char what[96], top[PATH_MAX], base[PATH_MAX + 16];
	int top_fd = -1, rc;

	cg_describe_limits(l, what, sizeof(what));
	d->ctrl = "";
	d->fd = d->parent_fd = -1;
	if (l->cgroup_parent) {
		snprintf(base, sizeof(base), CG_ROOT "%s", l->cgroup_parent);
		rc = cg_open_dir(base, false, &d->parent_fd);
		if (rc < 0)
			return cl_fail(err, 0, "--cgroup-parent: cannot open cgroup %s: %s", base,
			               strerror(-rc));
	} else {
		if (geteuid() == 0)
			snprintf(top, sizeof(top), CG_ROOT);
		else if (v2_delegated(top, sizeof(top), what, err) < 0)
			return -1;
		rc = cg_open_dir(top, false, &top_fd);
		if (rc < 0)
			return cl_fail(err, 0, "%s: opening cgroup %s: %s; %s", what, top,
			               strerror(-rc), V2_HINT);
		rc = v2_enable_all(top_fd, top, need, n_need, err);
		if (rc < 0) {
			close(top_fd);
			return rc;
		}
		snprintf(base, sizeof(base), "%s/" CG_BASE, top);
		rc = cg_open_dir(base, true, &d->parent_fd);
		close(top_fd);
		if (rc < 0)
			return cl_fail(err, 0, "%s: cannot create cgroup %s: %s; %s", what, base,
			               strerror(-rc), V2_HINT);
	}
	if (v2_enable_all(d->parent_fd, base, need, n_need, err) < 0)
		return cl_error_code(err);
	snprintf(d->path, sizeof(d->path), "%s/%s", base, h->name);
	if (mkdirat(d->parent_fd, h->name, 0755) < 0)
		return cl_fail(err, 0, "%s: cannot create cgroup %s: %s; %s", what, d->path,
		               strerror(errno), V2_HINT);
	h->n = 1;
	d->fd = openat(d->parent_fd, h->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->fd < 0)
		return cl_fail_errno(err, "%s: opening cgroup %s", what, d->path);
	h->mem = h->cpuacct = 0;
	if (v2_limits(h, l, err) < 0)
		return cl_error_code(err);
	/* Without clone3 the parent writes cgroup.procs before the "go". */
	h->clone_fd = clone3_available() ? d->fd : -1;
	return 0;
}

static int v2_attach(struct cg_handle *h, pid_t pid, cl_error *err)
{
	char buf[32];
	int rc;

	snprintf(buf, sizeof(buf), "%d", (int)pid);
	rc = cg_write(h->dirs[0].fd, "cgroup.procs", buf);
	if (rc < 0)
		return cl_fail(err, -rc, "placing the sandbox in cgroup %s", h->dirs[0].path);
	return 0;
}

static int v2_collect(struct cg_handle *h, struct cg_stats *st)
{
	int fd = h->dirs[0].fd;
	int64_t v, sys;

	if (cg_read_key(fd, "memory.events", "oom_kill", &v) == 0)
		st->oom_killed = v > 0;
	if (cg_read_i64(fd, "memory.peak", &v) == 0)
		st->memory_peak = v;
	if (cg_read_key(fd, "cpu.stat", "user_usec", &v) == 0 &&
	    cg_read_key(fd, "cpu.stat", "system_usec", &sys) == 0) {
		st->user_ms = (double)v / 1e3;
		st->sys_ms = (double)sys / 1e3;
	}
	return 0;
}

static void v2_destroy(struct cg_handle *h)
{
	struct cg_dir *d = &h->dirs[0];
	int rc;

	if (d->fd >= 0) {
		/* cgroup.kill (Linux >= 5.14) kills every member at once. */
		if (cg_write(d->fd, "cgroup.kill", "1") < 0)
			cg_kill_loop(d->fd);
		close(d->fd);
	}
	if (h->n) {
		rc = cg_rmdir(d->parent_fd, h->name);
		if (rc < 0)
			fprintf(stderr, "cloister: removing cgroup %s: %s (`cloister gc` retries)\n",
			        d->path, strerror(-rc));
	}
	if (h->n)
		cg_sweep_beside(d, h->explicit_parent);
	if (d->parent_fd >= 0)
		close(d->parent_fd);
	h->n = 0;
	h->clone_fd = -1;
}

const struct cg_backend cg_backend_v2 = {
	.name = "v2",
	.create = v2_create,
	.attach = v2_attach,
	.collect = v2_collect,
	.destroy = v2_destroy,
};
