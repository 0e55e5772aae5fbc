/* `cloister check`'s cgroup probe: which cgroup mode this host runs, which
 * controllers exist, and whether this caller could set each limit. Read-only. */
#define _GNU_SOURCE
#include "cgroups/internal.h"
#include "cgroups/check.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

static const char *const limit_ctrl[] = {"memory", "cpu", "pids"};
static const char *const limit_flag[] = {"--memory", "--cpus", "--pids"};

static bool v1_mounted(const char *ctrl)
{
	char path[64];
	struct statfs sf;

	snprintf(path, sizeof(path), CG_ROOT "/%s", ctrl);
	return statfs(path, &sf) == 0 && sf.f_type == CGROUP_SUPER_MAGIC;
}

/* v1: root can create under each hierarchy; nobody else can (no delegation). */
static void probe_v1(struct probe_result *r, enum cg_mode mode)
{
	static const char *const all[] = {"memory", "cpu", "cpuacct", "pids", "freezer"};
	char ctrls[96] = "", can[128] = "";
	bool all_ok = true;

	for (size_t i = 0; i < sizeof(all) / sizeof(*all); i++)
		if (v1_mounted(all[i]))
			snprintf(ctrls + strlen(ctrls), sizeof(ctrls) - strlen(ctrls), " %s", all[i]);
	for (size_t i = 0; i < 3; i++) {
		char path[64];
		bool ok;
		snprintf(path, sizeof(path), CG_ROOT "/%s", limit_ctrl[i]);
		ok = v1_mounted(limit_ctrl[i]) && access(path, W_OK) == 0;
		all_ok &= ok;
		snprintf(can + strlen(can), sizeof(can) - strlen(can), "%s %s %s", i ? "," : "",
		         limit_flag[i], ok ? "yes" : "no");
	}
	r->ok = all_ok;
	snprintf(r->detail, sizeof(r->detail), "%s (v1 controllers:%s); limits:%s",
	         cg_mode_name(mode), ctrls[0] ? ctrls : " none", can);
	if (!all_ok)
		snprintf(r->hint, sizeof(r->hint), geteuid() == 0
		         ? "mount the missing v1 controllers, or boot with cgroup v2"
		         : "v1 hierarchies are root-only: run as root, or use a cgroup v2 host "
		           "with a delegated cgroup; limit flags fail with exit 125 here");
}

static void probe_v2(struct probe_result *r)
{
	char ctrls[256] = "", text[4096], own[PATH_MAX], dir[PATH_MAX + 16], can[128] = "";
	const char *why = NULL;
	bool writable = geteuid() == 0, all_ok = true;

	cg_read(AT_FDCWD, CG_ROOT "/cgroup.controllers", ctrls, sizeof(ctrls));
	ctrls[strcspn(ctrls, "\n")] = '\0';
	snprintf(dir, sizeof(dir), CG_ROOT);
	if (!writable) {
		if (cg_read(AT_FDCWD, "/proc/self/cgroup", text, sizeof(text)) < 0 ||
		    cg_parse_proc_cgroup(text, "", own, sizeof(own)) < 0) {
			why = "this process has no cgroup v2 path";
		} else {
			char *slash = strrchr(own, '/'), procs[PATH_MAX + 32];
			if (slash && slash != own)
				*slash = '\0';
			else
				own[0] = '\0';
			snprintf(dir, sizeof(dir), CG_ROOT "%s", own);
			snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
			writable = own[0] && access(dir, W_OK) == 0 && access(procs, W_OK) == 0;
			if (!writable)
				why = "the parent of this process's cgroup is not delegated to this user";
		}
	}
	{
		char avail[256] = "", file[PATH_MAX + 48];
		snprintf(file, sizeof(file), "%s/cgroup.controllers", dir);
		cg_read(AT_FDCWD, file, avail, sizeof(avail));
		for (size_t i = 0; i < 3; i++) {
			bool ok = writable && strstr(avail, limit_ctrl[i]) != NULL;
			if (writable && !ok && !why)
				why = "a controller is not delegated to this user's cgroup";
			all_ok &= ok;
			snprintf(can + strlen(can), sizeof(can) - strlen(can), "%s %s %s",
			         i ? "," : "", limit_flag[i], ok ? "yes" : "no");
		}
	}
	r->ok = all_ok;
	/* A cut detail line is still a useful one (checked only to say so). */
	if (snprintf(r->detail, sizeof(r->detail), "v2 (controllers: %s); limits:%s",
	             ctrls[0] ? ctrls : "none", can) >= (int)sizeof(r->detail))
		r->detail[sizeof(r->detail) - 2] = '~';
	if (!all_ok)
		snprintf(r->hint, sizeof(r->hint), "%s: use systemd-run --user -p Delegate=yes "
		         "--scope, or --cgroup-parent with a cgroup this user owns",
		         why ? why : "controllers missing");
}

void cl_check_cgroup(struct probe_result *r)
{
	enum cg_mode mode = cg_detect_mode();

	if (mode == CG_MODE_NONE) {
		r->ok = false;
		snprintf(r->detail, sizeof(r->detail), "no cgroup filesystem at " CG_ROOT);
		snprintf(r->hint, sizeof(r->hint), "mount cgroup2 at " CG_ROOT " to use limits");
		return;
	}
	if (mode == CG_MODE_V2)
		probe_v2(r);
	else
		probe_v1(r, mode);
}
