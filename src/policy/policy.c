/* The sandbox policy: defaults for `cloister run`, mutation helpers for the
 * front-ends, and the single validation pass every executor relies on. */
#define _GNU_SOURCE
#include "src/policy/policy.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "src/policy/parse.h"

size_t cl_strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

char **cl_strv_push(char ***v, const char *s)
{
	size_t n = cl_strv_len(*v);
	char **nv = realloc(*v, (n + 2) * sizeof(char *));

	if (!nv)
		return NULL;
	*v = nv;
	nv[n] = strdup(s);
	if (!nv[n])
		return NULL;
	nv[n + 1] = NULL;
	return nv;
}

void cl_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Whether this process's user namespace maps host id `id` (file is
 * /proc/self/uid_map or gid_map). Root of a nested namespace (`unshare
 * -r`, a rootless container) usually maps only itself: it is no host root
 * to begin with, and an unmapped id could not be used anyway. */
static bool id_mapped_here(const char *file, unsigned long id)
{
	unsigned long in, out, n;
	bool found = false;
	FILE *f = fopen(file, "re");

	if (!f)
		return false;
	/* The kernel writes this file: three decimal numbers a line. */
	/* NOLINTNEXTLINE(cert-err34-c) */
	while (!found && fscanf(f, "%lu %lu %lu", &in, &out, &n) == 3)
		found = id >= in && id - in < n;
	fclose(f);
	return found;
}

void cl_policy_root_identity(struct cl_policy *p, size_t first_user)
{
	if (getuid() != 0 ||
	    !id_mapped_here("/proc/self/uid_map", CL_UNPRIVILEGED_HOST_ID) ||
	    !id_mapped_here("/proc/self/gid_map", CL_UNPRIVILEGED_HOST_ID))
		return;
	p->host_uid = CL_UNPRIVILEGED_HOST_ID;
	p->host_gid = CL_UNPRIVILEGED_HOST_ID;
	for (size_t i = first_user; i < p->n_mounts; i++)
		if (p->mounts[i].kind == CL_MNT_BIND)
			p->mounts[i].flags |= CL_MF_CALLER_OPEN |
			                      (p->mounts[i].flags & CL_MF_RO ? 0 : CL_MF_IDMAP);
}

bool cl_policy_root_guarded(const struct cl_policy *p)
{
	return getuid() == 0 && (p->host_uid != 0 || p->host_gid != 0);
}

void cl_policy_init(struct cl_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->ns_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
	              CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
	p->root_readonly = true;
	p->uid = getuid();
	p->gid = getgid();
	p->host_uid = getuid();
	p->host_gid = getgid();
	p->no_new_privs = true;
	p->new_session = true;
	p->die_with_parent = true;
	p->pty = true;
	p->network = CL_NET_NONE;
	p->publish_wait_ms = CL_DEFAULT_PUBLISH_WAIT_MS;
	p->limits.memory_swap = -1;
	p->seccomp = CL_SC_DEFAULT;
	p->json_status_fd = -1;
	p->runtime = CL_RT_AUTO;
	p->hooks.info_fd = p->hooks.status_fd = -1;
	p->hooks.block_fd = p->hooks.userns_block_fd = -1;
	p->hooks.userns_fd = p->hooks.userns2_fd = p->hooks.pidns_fd = -1;
}

struct cl_mount *cl_policy_add_mount(struct cl_policy *p, enum cl_mount_kind kind,
                                     const char *src, const char *dest, unsigned flags)
{
	struct cl_mount *nm = realloc(p->mounts, (p->n_mounts + 1) * sizeof(*nm));
	struct cl_mount *m;

	if (!nm)
		return NULL;
	p->mounts = nm;
	m = &nm[p->n_mounts];
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->flags = flags;
	m->src_fd = -1;
	m->mode = (mode_t)-1;
	m->src = src ? strdup(src) : NULL;
	m->dest = dest ? strdup(dest) : NULL;
	if ((src && !m->src) || (dest && !m->dest)) {
		free(m->src);
		free(m->dest);
		return NULL;
	}
	p->n_mounts++;
	return m;
}

/* RAM does not change while we parse: sysinfo() once, however many
 * --tmpfs there are. */
/* Only ever lowers: a hard limit below the bound (limits.conf on hardened
 * hosts) wins, as raising a hard limit needs CAP_SYS_RESOURCE in the parent
 * namespace, and refusing to run there would be worse than bwrap, which
 * leaves the limit alone. */
uint64_t cl_policy_nproc_bound(uint64_t want)
{
	struct rlimit r;

	if (getrlimit(RLIMIT_NPROC, &r) == 0 && r.rlim_max != RLIM_INFINITY &&
	    r.rlim_max < want)
		return r.rlim_max;
	return want;
}

uint64_t cl_policy_default_tmpfs_size(void)
{
	static uint64_t size;
	struct sysinfo si;
	uint64_t ram;

	if (size)
		return size;
	if (sysinfo(&si) < 0)
		return size = CL_DEFAULT_TMPFS_MAX;
	ram = (uint64_t)si.totalram * si.mem_unit;
	size = ram / CL_DEFAULT_TMPFS_RAM_DIV < CL_DEFAULT_TMPFS_MAX && ram
	       ? ram / CL_DEFAULT_TMPFS_RAM_DIV : CL_DEFAULT_TMPFS_MAX;
	return size;
}

int cl_policy_add_default_mounts(struct cl_policy *p, cl_error *err)
{
	static const char *const sys_dirs[] = {"/usr", "/bin", "/sbin", "/lib",
	                                       "/lib32", "/lib64", "/libx32", "/etc"};
	bool ok = true;

	if (!p->rootfs) {
		for (size_t i = 0; i < sizeof(sys_dirs) / sizeof(*sys_dirs); i++) {
			/* TRY: bind only the system dirs this host has. KEEP_SYMLINK:
			 * merged-/usr hosts have /bin -> usr/bin; a symlink is
			 * cheaper than a second mount of the same tree. */
			ok = ok && cl_policy_add_mount(p, CL_MNT_BIND, sys_dirs[i], sys_dirs[i],
			                               CL_MF_RO | CL_MF_TRY | CL_MF_KEEP_SYMLINK |
			                               CL_MF_HOST_SYSTEM);
		}
	}
	ok = ok && cl_policy_add_mount(p, CL_MNT_PROC, NULL, "/proc", 0);
	ok = ok && cl_policy_add_mount(p, CL_MNT_DEV, NULL, "/dev", 0);
	/* Size caps: a tmpfs is RAM (and swap) outside any cgroup the caller
	 * may not have; /dev holds /dev/shm. --tmpfs /tmp:size=N overrides. */
	if (ok)
		p->mounts[p->n_mounts - 1].size = CL_DEFAULT_DEV_SIZE;
	ok = ok && cl_policy_add_mount(p, CL_MNT_TMPFS, NULL, "/tmp", 0);
	if (ok) {
		p->mounts[p->n_mounts - 1].mode = 01777;
		p->mounts[p->n_mounts - 1].size = cl_policy_default_tmpfs_size();
	}
	return ok ? 0 : cl_fail(err, ENOMEM, "adding default mounts");
}

int cl_policy_add_publish(struct cl_policy *p, const char *spec, cl_error *err)
{
	struct cl_port port, *np;

	if (cl_parse_publish(spec, &port) < 0)
		return cl_fail(err, 0, "--publish '%s': expected [HOST_IP:]HOST_PORT:SANDBOX_PORT[/tcp|/udp] with ports 1-65535", spec);
	np = realloc(p->ports, (p->n_ports + 1) * sizeof(*np));
	if (!np)
		return cl_fail(err, ENOMEM, "--publish");
	p->ports = np;
	p->ports[p->n_ports++] = port;
	return 0;
}

int cl_policy_add_forward(struct cl_policy *p, const char *spec, cl_error *err)
{
	struct cl_forward f, *nf;

	if (cl_parse_forward(spec, &f) < 0)
		return cl_fail(err, 0, "--forward-out '%s': expected SANDBOX_PORT:HOST:HOST_PORT with ports 1-65535", spec);
	nf = realloc(p->forwards, (p->n_forwards + 1) * sizeof(*nf));
	if (!nf)
		return cl_fail(err, ENOMEM, "--forward-out");
	p->forwards = nf;
	p->forwards[p->n_forwards++] = f;
	return 0;
}

static size_t env_find(char *const *env, const char *key)
{
	size_t klen = strlen(key);
	size_t i;

	for (i = 0; env && env[i]; i++)
		if (strncmp(env[i], key, klen) == 0 && env[i][klen] == '=')
			return i;
	return i;
}

const char *cl_policy_getenv(const struct cl_policy *p, const char *key)
{
	size_t i = env_find(p->env, key);

	return (p->env && p->env[i]) ? p->env[i] + strlen(key) + 1 : NULL;
}

int cl_policy_setenv(struct cl_policy *p, const char *key, const char *value)
{
	size_t klen = strlen(key), vlen = strlen(value);
	size_t i = env_find(p->env, key);
	char *kv = malloc(klen + vlen + 2);

	if (!kv)
		return -ENOMEM;
	/* "KEY=" then VALUE with its NUL: the result is terminated. */
	memcpy(kv, key, klen); /* NOLINT(bugprone-not-null-terminated-result) */
	kv[klen] = '=';
	memcpy(kv + klen + 1, value, vlen + 1);
	if (p->env && p->env[i]) {
		free(p->env[i]);
		p->env[i] = kv;
		return 0;
	}
	if (!cl_strv_push(&p->env, kv)) {
		free(kv);
		return -ENOMEM;
	}
	free(kv);
	return 0;
}

void cl_policy_unsetenv(struct cl_policy *p, const char *key)
{
	size_t i = env_find(p->env, key);

	if (!p->env || !p->env[i])
		return;
	free(p->env[i]);
	memmove(&p->env[i], &p->env[i + 1], (cl_strv_len(p->env) - i) * sizeof(char *));
}

static bool path_is_clean_abs(const char *s)
{
	if (!s || s[0] != '/')
		return false;
	/* Reject ".." components: a destination must not climb out of the root. */
	for (const char *c = s; (c = strstr(c, "..")) != NULL; c += 2) {
		bool start = (c == s || c[-1] == '/');
		bool end = (c[2] == '\0' || c[2] == '/');
		if (start && end)
			return false;
	}
	return true;
}

static int validate_mount(const struct cl_mount *m, cl_error *err)
{
	if (!path_is_clean_abs(m->dest))
		return cl_fail(err, 0, "mount destination '%s' must be an absolute path without '..'",
		               m->dest ? m->dest : "");
	if (m->kind == CL_MNT_BIND && m->src_fd < 0 && (!m->src || m->src[0] != '/'))
		return cl_fail(err, 0, "bind source '%s' must be an absolute path",
		               m->src ? m->src : "");
	return 0;
}

int cl_policy_validate(const struct cl_policy *p, cl_error *err)
{
	if (!p->argv || !p->argv[0] || !p->argv[0][0])
		return cl_fail(err, 0, "no command given (usage: cloister run [OPTIONS] [--] COMMAND [ARG...])");
	if (!path_is_clean_abs(p->workdir ? p->workdir : "/"))
		return cl_fail(err, 0, "working directory '%s' must be an absolute path without '..'",
		               p->workdir);
	if (p->rootfs && p->rootfs[0] != '/')
		return cl_fail(err, 0, "--rootfs '%s' must be an absolute path", p->rootfs);
	if (p->hostname && (strlen(p->hostname) == 0 || strlen(p->hostname) > 64))
		return cl_fail(err, 0, "hostname '%s' must be 1 to 64 characters", p->hostname);
	if (p->hostname && !(p->ns_flags & CLONE_NEWUTS))
		return cl_fail(err, 0, "setting the hostname needs a new UTS namespace");
	if (!(p->ns_flags & CLONE_NEWUSER) && (p->uid != getuid() || p->gid != getgid()))
		return cl_fail(err, 0, "changing uid/gid needs a new user namespace");
	if ((p->host_uid != getuid() || p->host_gid != getgid()) &&
	    (!(p->ns_flags & CLONE_NEWUSER) || getuid() != 0 || p->hooks.userns_fd >= 0 ||
	     p->hooks.userns_block_fd >= 0))
		return cl_fail(err, 0, "running as another host identity needs root and a new user namespace");
	for (size_t i = 0; i < p->n_mounts; i++) {
		int rc = validate_mount(&p->mounts[i], err);
		if (rc < 0)
			return rc;
	}
	/* Native publishes into the sandbox's own network (a relay); docker
	 * publishes only from its bridge, with network allowed (the docker
	 * executor refuses the other combination itself). */
	if ((p->n_ports || p->n_forwards) && !(p->ns_flags & CLONE_NEWNET) &&
	    (p->runtime != CL_RT_DOCKER || p->n_forwards))
		return cl_fail(err, 0, "--publish and --forward-out need the sandbox's own network (--network none)");
	for (size_t i = 0; i < p->n_forwards; i++)
		for (size_t j = 0; j < i; j++)
			if (p->forwards[i].sandbox_port == p->forwards[j].sandbox_port)
				return cl_fail(err, 0, "--forward-out: sandbox port %u is used twice",
				               p->forwards[i].sandbox_port);
	if (p->limits.memory_swap > 0 && p->limits.memory &&
	    (uint64_t)p->limits.memory_swap < p->limits.memory)
		return cl_fail(err, 0, "--memory-swap must be at least --memory (it includes memory)");
	if (p->limits.memory_swap >= 0 && !p->limits.memory)
		return cl_fail(err, 0, "--memory-swap needs --memory");
	return 0;
}

void cl_policy_free(struct cl_policy *p)
{
	for (size_t i = 0; i < p->n_mounts; i++) {
		free(p->mounts[i].src);
		free(p->mounts[i].dest);
		free(p->mounts[i].ovl_work);
		cl_strv_free(p->mounts[i].ovl_lower);
		if (p->mounts[i].src_fd >= 0)
			close(p->mounts[i].src_fd);
	}
	free(p->mounts);
	cl_strv_free(p->argv);
	cl_strv_free(p->env);
	free(p->argv0);
	free(p->workdir);
	free(p->rootfs);
	free(p->hostname);
	free(p->ports);
	free(p->forwards);
	free(p->limits.cgroup_parent);
	free(p->seccomp_path);
	free(p->json_status_path);
	free(p->workspace);
	free(p->diff_out);
	free(p->ws_snapshot);
	free(p->image);
	for (size_t i = 0; i < p->hooks.n_seccomp_fds; i++)
		close(p->hooks.seccomp_fds[i]);
	free(p->hooks.seccomp_fds);
	free(p->hooks.lock_file);
	memset(p, 0, sizeof(*p));
}

int cl_ws_ignore_parse(const char *name)
{
	if (name && strcmp(name, "git") == 0)
		return 0;
	return name && strcmp(name, "none") == 0 ? 1 : -1;
}
