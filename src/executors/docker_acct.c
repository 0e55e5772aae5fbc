/* Accounting for docker runs: a cgroup of cloister's own as the container's
 * CgroupParent. Hierarchical counters (cpuacct, memory watermark; cpu.stat,
 * memory.peak) keep what the container used after its own cgroup is gone. */
#define _GNU_SOURCE
#include "src/executors/docker_acct.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/executors/docker_api.h"
#include "src/util/fdio.h"

#define INFO_MS 10000
#define RMDIR_TRIES 100

/* One cgroup hierarchy as /proc/self/mountinfo shows it. */
struct cg_mnt {
	char path[256];
	char fstype[16];
	char super[256];   /* super options: the v1 controllers */
};

/* Calls fn for every cgroup mount of a hierarchy's root (a mount of a
 * subtree, as in a cgroup namespace, would not show docker's paths). */
static int each_cgroup_mount(int (*fn)(const struct cg_mnt *m, void *arg), void *arg)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;

	if (!f)
		return -errno;
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		struct cg_mnt m;
		char root[256];
		char *sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*s %*s %*s %255s %255s", root, m.path) != 2 ||
		    sscanf(sep + 3, "%15s %*s %255s", m.fstype, m.super) != 2)
			continue;
		/* Escaped paths (\040) are not ours to guess at. */
		if (strcmp(root, "/") != 0 || strchr(m.path, '\\') ||
		    (strcmp(m.fstype, "cgroup") != 0 && strcmp(m.fstype, "cgroup2") != 0))
			continue;
		rc = fn(&m, arg);
	}
	free(line);
	fclose(f);
	return rc;
}

static bool has_controller(const char *super, const char *name)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", super);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (strcmp(t, name) == 0)
			return true;
	return false;
}

struct find {
	int version;
	char cpu[256], mem[256];
};

static int find_tree(const struct cg_mnt *m, void *arg)
{
	struct find *f = arg;

	if (f->version == 2 && strcmp(m->fstype, "cgroup2") == 0 && !f->cpu[0]) {
		snprintf(f->cpu, sizeof(f->cpu), "%s", m->path);
		snprintf(f->mem, sizeof(f->mem), "%s", m->path);
	}
	if (f->version == 1 && strcmp(m->fstype, "cgroup") == 0) {
		if (has_controller(m->super, "cpuacct"))
			snprintf(f->cpu, sizeof(f->cpu), "%s", m->path);
		if (has_controller(m->super, "memory"))
			snprintf(f->mem, sizeof(f->mem), "%s", m->path);
	}
	return 0;
}

/* Docker's own paths only with the cgroupfs driver: systemd's takes a
 * slice name, and its scopes are systemd's to make and remove. */
static int daemon_cgroup_version(const char *sock)
{
	json_t *info = NULL;
	cl_error err = {0};
	int status = 0, v = 0;

	if (cl_docker_call(sock, "GET", "/info", NULL, INFO_MS, &status, &info, &err) < 0)
		return 0;
	const char *drv = json_string_value(json_object_get(info, "CgroupDriver"));
	const char *ver = json_string_value(json_object_get(info, "CgroupVersion"));
	if (status == 200 && drv && strcmp(drv, "cgroupfs") == 0 && ver)
		v = strcmp(ver, "1") == 0 ? 1 : strcmp(ver, "2") == 0 ? 2 : 0;
	json_decref(info);
	return v;
}

/* mkdir -p TREE/BASE, then TREE/BASE/NAME, which must be new (a name is
 * unique to its run); its fd, or -1. */
static int make_ours(const char *tree, const char *base, const char *name)
{
	char path[1024];
	int fd;

	snprintf(path, sizeof(path), "%s", tree);
	for (const char *s = base; *s;) {
		const char *e = strchr(s + 1, '/');
		size_t l = strlen(path), n = e ? (size_t)(e - s) : strlen(s);
		if (l + n >= sizeof(path))
			return -1;
		memcpy(path + l, s, n);
		path[l + n] = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -1;
		s += n;
	}
	if ((size_t)snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s", name) >=
	    sizeof(path) - strlen(path))
		return -1;
	if (mkdir(path, 0755) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		rmdir(path);
	return fd;
}

/* A base docker (root) would take as a path under every hierarchy's root:
 * absolute, plain components only. */
static bool base_ok(const char *base)
{
	char buf[256], *save = NULL;

	if (base[0] != '/' || strlen(base) >= sizeof(buf) - 56)
		return false;
	if (strcmp(base, "/") == 0)
		return true;
	if (base[strlen(base) - 1] == '/' || strstr(base, "//"))
		return false;
	snprintf(buf, sizeof(buf), "%s", base);
	for (char *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save))
		if (strcmp(t, ".") == 0 || strcmp(t, "..") == 0)
			return false;
	return true;
}

void cl_dk_acct_prepare(struct dk_acct *a, const char *sock, const char *name, const char *base)
{
	struct find f = {0};
	const char *b;

	*a = (struct dk_acct){.cpu_fd = -1, .mem_fd = -1};
	if (!base)
		base = "/docker";
	/* Host cgroup trees are root's: anyone else could not make ours (nor
	 * remove it), so the daemon is not even asked. */
	if (geteuid() != 0 || !base_ok(base) || !(f.version = daemon_cgroup_version(sock)))
		return;
	if (each_cgroup_mount(find_tree, &f) < 0 || !f.cpu[0] || !f.mem[0])
		return;
	b = strcmp(base, "/") ? base : "";
	a->version = f.version;
	if ((a->cpu_fd = make_ours(f.cpu, b, name)) < 0)
		return;
	/* From here release removes it (by name, in every hierarchy). */
	snprintf(a->parent, sizeof(a->parent), "%s/%s", b, name);
	a->mem_fd = f.version == 1 ? make_ours(f.mem, b, name)
	                            : fcntl(a->cpu_fd, F_DUPFD_CLOEXEC, 3);
	if (a->mem_fd < 0)
		cl_dk_acct_release(a);
}

/* The number in FILE (key NULL) or on its "KEY N" line; -1 if absent. */
static int64_t read_num(int dirfd, const char *file, const char *key)
{
	cl_autoclose int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC);
	cl_autofree char *text = NULL;
	size_t len, kl = key ? strlen(key) : 0;
	int64_t v = -1;

	if (fd < 0 || cl_read_all(fd, 65536, &text, &len) < 0)
		return -1;
	for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (key && (strncmp(l, key, kl) != 0 || l[kl] != ' '))
			continue;
		const char *num = key ? l + kl : l;
		char *end;
		errno = 0;
		long long x = strtoll(num, &end, 10);
		v = end == num || errno || x < 0 ? -1 : (int64_t)x;
		break;
	}
	return v;
}

static void read_v1(const struct dk_acct *a, struct cl_status *st)
{
	int64_t total = read_num(a->cpu_fd, "cpuacct.usage", NULL);
	int64_t u = read_num(a->cpu_fd, "cpuacct.usage_user", NULL);
	int64_t s = read_num(a->cpu_fd, "cpuacct.usage_sys", NULL);
	long hz = sysconf(_SC_CLK_TCK);

	/* Nothing ever ran here: docker did not use our cgroup. */
	if (total <= 0)
		return;
	if (u >= 0 && s >= 0) {
		st->user_ms = (double)u / 1e6;
		st->sys_ms = (double)s / 1e6;
	} else if ((u = read_num(a->cpu_fd, "cpuacct.stat", "user")) >= 0 &&
	           (s = read_num(a->cpu_fd, "cpuacct.stat", "system")) >= 0 && hz > 0) {
		st->user_ms = (double)u * 1000.0 / (double)hz;
		st->sys_ms = (double)s * 1000.0 / (double)hz;
	}
	/* The watermark counts the children only in a hierarchical memcg. */
	if (read_num(a->mem_fd, "memory.use_hierarchy", NULL) == 1) {
		int64_t peak = read_num(a->mem_fd, "memory.max_usage_in_bytes", NULL);
		if (peak > 0)
			st->memory_peak = peak;
	}
}

static void read_v2(const struct dk_acct *a, struct cl_status *st)
{
	int64_t u = read_num(a->cpu_fd, "cpu.stat", "user_usec");
	int64_t s = read_num(a->cpu_fd, "cpu.stat", "system_usec");
	int64_t peak = read_num(a->mem_fd, "memory.peak", NULL);   /* Linux >= 5.19 */

	if (read_num(a->cpu_fd, "cpu.stat", "usage_usec") <= 0)
		return;
	if (u >= 0 && s >= 0) {
		st->user_ms = (double)u / 1e3;
		st->sys_ms = (double)s / 1e3;
	}
	if (peak > 0)
		st->memory_peak = peak;
}

void cl_dk_acct_read(const struct dk_acct *a, struct cl_status *st)
{
	if (!a->parent[0] || a->cpu_fd < 0 || a->mem_fd < 0)
		return;
	if (a->version == 1)
		read_v1(a, st);
	else
		read_v2(a, st);
}

/* rmdir TREE/PARENT. EBUSY while the kernel still lets go of the
 * container's own cgroup below it: retried, bounded. */
static int remove_one(const struct cg_mnt *m, void *arg)
{
	const struct dk_acct *a = arg;
	char path[1024];

	if ((size_t)snprintf(path, sizeof(path), "%s%s", m->path, a->parent) >= sizeof(path))
		return 0;
	for (int i = 0; rmdir(path) < 0; i++) {
		if (errno == ENOENT)
			return 0;
		if (errno != EBUSY || i == RMDIR_TRIES) {
			fprintf(stderr, "cloister: warning: removing cgroup %s: %s\n", path,
			        strerror(errno));
			return 0;
		}
		nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
	}
	return 0;
}

void cl_dk_acct_release(struct dk_acct *a)
{
	if (a->cpu_fd >= 0)
		close(a->cpu_fd);
	if (a->mem_fd >= 0)
		close(a->mem_fd);
	a->cpu_fd = a->mem_fd = -1;
	if (a->parent[0])
		each_cgroup_mount(remove_one, a);
	a->parent[0] = '\0';
}

void cl_dk_acct_forget(const char *parent, const char *name)
{
	struct dk_acct a = {.cpu_fd = -1, .mem_fd = -1};
	const char *leaf = parent ? strrchr(parent, '/') : NULL;
	size_t base_len = leaf ? (size_t)(leaf - parent) : 0;
	char base[256];

	if (!leaf || !name || strncmp(name, "cloister-", 9) != 0 || strcmp(leaf + 1, name) != 0 ||
	    base_len >= sizeof(base) || strlen(parent) >= sizeof(a.parent))
		return;
	memcpy(base, parent, base_len);
	base[base_len] = '\0';
	if (base_len && !base_ok(base))
		return;
	snprintf(a.parent, sizeof(a.parent), "%s", parent);
	cl_dk_acct_release(&a);
}
