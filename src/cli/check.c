/* Host capability probes for `cloister check`. Each probe answers ok or
 * unavailable, with the reason and what to do; all are read-only except the
 * namespace probes, which run in a throw-away child. */
#define _GNU_SOURCE
#include "src/cli/check.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/landlock.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroups/check.h"
#include "src/executors/cp_api.h"
#include "src/util/fdio.h"
#include "src/policy/policy.h"
#include "src/util/probe.h"
#include "src/workspace/probe.h"

#if CL_NATIVE
static bool read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

static int try_userns(void)
{
	return unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
	               CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP);
}

static void probe_userns(struct probe_result *r)
{
	char v[32];
	int e = 0;

	r->ok = cl_probe_in_child(try_userns, &e);
	if (r->ok) {
		snprintf(r->detail, sizeof(r->detail), "user+mount+pid+net+ipc+uts+cgroup namespaces can be created");
		return;
	}
	snprintf(r->detail, sizeof(r->detail), "creating namespaces failed: %s", strerror(e));
	if (read_small("/proc/sys/kernel/unprivileged_userns_clone", v, sizeof(v)) && v[0] == '0')
		snprintf(r->hint, sizeof(r->hint), "sysctl kernel.unprivileged_userns_clone=1");
	else if (read_small("/proc/sys/user/max_user_namespaces", v, sizeof(v)) && strcmp(v, "0") == 0)
		snprintf(r->hint, sizeof(r->hint), "sysctl user.max_user_namespaces=15000");
	else if (read_small("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", v, sizeof(v)) &&
	         v[0] == '1')
		snprintf(r->hint, sizeof(r->hint), "AppArmor restricts user namespaces: add a profile for cloister or sysctl kernel.apparmor_restrict_unprivileged_userns=0");
	else
		snprintf(r->hint, sizeof(r->hint), "use --runtime docker, or run where user namespaces are allowed");
}

static void probe_clone3(struct probe_result *r)
{
	long rc = syscall(SYS_clone3, NULL, 0);

	/* EINVAL/EFAULT: the call exists; ENOSYS: kernel or filter lacks it. */
	r->ok = !(rc < 0 && errno == ENOSYS);
	snprintf(r->detail, sizeof(r->detail), r->ok ? "clone3 available (CLONE_INTO_CGROUP usable)"
	                                              : "clone3 missing: falling back to clone");
	if (!r->ok)
		snprintf(r->hint, sizeof(r->hint), "Linux >= 5.7 places the sandbox atomically in its cgroup");
}

static void probe_pidfd(struct probe_result *r)
{
	long fd = syscall(SYS_pidfd_open, getpid(), 0);

	r->ok = fd >= 0;
	if (fd >= 0)
		close((int)fd);
	snprintf(r->detail, sizeof(r->detail), r->ok ? "pidfd_open available" : "pidfd_open failed: %s",
	         strerror(errno));
	if (!r->ok)
		snprintf(r->hint, sizeof(r->hint), "Linux >= 5.3 is needed");
}

static void probe_seccomp(struct probe_result *r)
{
	char v[256];

	r->ok = read_small("/proc/sys/kernel/seccomp/actions_avail", v, sizeof(v));
	snprintf(r->detail, sizeof(r->detail), r->ok ? "actions: %s" : "seccomp not available", v);
	if (!r->ok)
		snprintf(r->hint, sizeof(r->hint), "a kernel with CONFIG_SECCOMP_FILTER is needed");
}

static void probe_landlock(struct probe_result *r)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	r->ok = abi > 0;
	if (r->ok)
		snprintf(r->detail, sizeof(r->detail), "Landlock ABI %ld", abi);
	else
		snprintf(r->detail, sizeof(r->detail), "Landlock unavailable: %s", strerror(errno));
	if (!r->ok)
		snprintf(r->hint, sizeof(r->hint), "boot with lsm=...,landlock (not required by cloister)");
}

static void probe_overlay(struct probe_result *r)
{
	int e = 0;

	r->ok = ws_overlay_probe(&e);
	snprintf(r->detail, sizeof(r->detail), r->ok ? "overlayfs mounts inside a user namespace "
	                                              "(run --workspace uses it)"
	                                              : "overlay in a user namespace failed: %s; run "
	                                                "--workspace falls back to copying DIR (slower)",
	         strerror(e));
	if (!r->ok)
		snprintf(r->hint, sizeof(r->hint), "Linux >= 5.11 allows unprivileged overlay");
}

#endif

static void probe_docker(struct probe_result *r)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	const char *host = getenv("DOCKER_HOST");
	const char *path = "/var/run/docker.sock";
	int fd;

	if (host && strncmp(host, "unix://", 7) == 0)
		path = host + 7;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	r->ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	snprintf(r->detail, sizeof(r->detail), r->ok ? "docker daemon socket %s answers"
	                                              : "no docker daemon at %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (!r->ok)
		snprintf(r->hint, sizeof(r->hint), "start dockerd to enable --runtime docker (optional)");
}

#if CL_NATIVE
/* What `cloister run` bounds with no limit option, for this caller, and
 * what stays unbounded (docs/limits.md). */
static void probe_bounds(struct probe_result *r)
{
	struct probe_result cg = {0};
	char tasks[96];

	cl_check_cgroup(&cg);
	/* A root caller's sandbox runs as an unprivileged host id (ns/idmap.c),
	 * so the limit binds it too; only --host-root keeps the kernel's
	 * exemption of host root. */
	if (getuid() == 0)
		snprintf(tasks, sizeof(tasks), "tasks <= %d (RLIMIT_NPROC, counted per sandbox; "
		         "not with --host-root)", (int)cl_policy_nproc_bound(CL_DEFAULT_NPROC));
	else
		snprintf(tasks, sizeof(tasks), "tasks <= %d (RLIMIT_NPROC, counted per sandbox)",
		         (int)cl_policy_nproc_bound(CL_DEFAULT_NPROC));
	r->ok = true;
	snprintf(r->detail, sizeof(r->detail), "%s; tmpfs /tmp %lluM, /dev/shm %lluM; output "
	         "with --output-limit", tasks,
	         (unsigned long long)(cl_policy_default_tmpfs_size() >> 20),
	         (unsigned long long)(CL_DEFAULT_DEV_SIZE >> 20));
	snprintf(r->hint, sizeof(r->hint), "%s%s", cg.ok
	         ? "memory and CPU are unbounded unless --memory/--cpus are given"
	         : "memory and CPU cannot be bounded here (no usable cgroup, see above)",
	         getuid() == 0 ? "; give --pids to bound tasks" : "");
}

#endif

/* Codeplane: what auto tries last; only its configuration is checked
 * here (no workspace is made). */
static void probe_codeplane(struct probe_result *r)
{
	struct cp_config c;
	cl_error e = {0};

	r->ok = cp_config_load(&c, &e) == 0;
	if (r->ok)
		snprintf(r->detail, sizeof(r->detail), "configured for %.80s at %.140s", c.repo,
		         c.base);
	else
		cl_error_format(&e, r->detail, sizeof(r->detail));
	memset(c.token, 0, sizeof(c.token));
	if (!r->ok)
		snprintf(r->hint, sizeof(r->hint), "optional: only --runtime codeplane needs it");
}

/* The native runtime: what `--runtime auto` tries first. */
static void probe_native(struct probe_result *r)
{
#if CL_NATIVE
	probe_userns(r);
	snprintf(r->detail, sizeof(r->detail), "%s", r->ok ? "native runtime can run sandboxes here"
	         : "native runtime unavailable: user namespaces cannot be created (see below)");
#else
	r->ok = false;
	snprintf(r->detail, sizeof(r->detail), "native runtime unavailable: this build has none "
	         "(built with NATIVE=0, without libseccomp, libcap and libmnl)");
	snprintf(r->hint, sizeof(r->hint), "use --runtime docker (or codeplane); build with "
	         "NATIVE=1 on Linux for the native runtime");
#endif
}

static const struct {
	const char *name;
	void (*probe)(struct probe_result *r);
} probes[] = {
	{"native runtime", probe_native},
#if CL_NATIVE
	{"user namespaces", probe_userns},
	{"clone3", probe_clone3},
	{"pidfd", probe_pidfd},
	{"cgroups", cl_check_cgroup},
	{"default bounds", probe_bounds},
	{"seccomp", probe_seccomp},
	{"landlock", probe_landlock},
	{"overlay in userns", probe_overlay},
#endif
	{"docker", probe_docker},
	{"codeplane", probe_codeplane},
};

int cl_check_main(int argc, char **argv)
{
	bool json = argc > 1 && strcmp(argv[1], "--json") == 0;
	json_t *arr = json ? json_array() : NULL;

	if (argc > 2 || (argc == 2 && !json)) {
		fputs("cloister: usage: cloister check [--json]\n", stderr);
		return 125;
	}
	for (size_t i = 0; i < sizeof(probes) / sizeof(*probes); i++) {
		struct probe_result r = {0};
		probes[i].probe(&r);
		if (json) {
			json_array_append_new(arr, json_pack("{s:s, s:b, s:s, s:s?}", "name", probes[i].name,
			                                     "ok", r.ok, "detail", r.detail, "hint",
			                                     r.hint[0] ? r.hint : NULL));
			continue;
		}
		printf("%-18s %-11s %s%s%s\n", probes[i].name, r.ok ? "ok" : "unavailable", r.detail,
		       r.hint[0] ? " -- " : "", r.hint);
	}
	if (json) {
		char *s = json_dumps(arr, JSON_INDENT(2));
		puts(s ? s : "[]");
		free(s);
		json_decref(arr);
	}
	return 0;
}
