/* The cgroup part of `cloister gc` (the command: src/cli/gc.c): removes
 * sandbox cgroups left behind by a cloister that died without cleaning up
 * (SIGKILL, power loss): ours by name, owner pid gone, no process inside.
 * Prints each path removed. */
#define _GNU_SOURCE
#include "cgroups/cgroup.h"
#include "cgroups/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int removed;
static bool quiet;

static void report(const char *path)
{
	if (!quiet)
		printf("removed %s\n", path);
	removed++;
}

static void sweep_path(const char *path, bool explicit_parent)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	cg_sweep(fd, path, explicit_parent, report);
	close(fd);
}

/* The automatic parent of a rootless v2 run: <parent of own cgroup>/cloister. */
static void sweep_delegated(void)
{
	char text[4096], own[PATH_MAX - 64], path[PATH_MAX];
	char *slash;

	if (cg_read(AT_FDCWD, "/proc/self/cgroup", text, sizeof(text)) < 0 ||
	    cg_parse_proc_cgroup(text, "", own, sizeof(own)) < 0)
		return;
	slash = strrchr(own, '/');
	if (!slash || slash == own)
		return;
	*slash = '\0';
	snprintf(path, sizeof(path), CG_ROOT "%s/" CG_BASE, own);
	sweep_path(path, false);
}

static void sweep_all(const char *parent)
{
	static const char *const v1[] = {"memory", "cpu", "cpuacct", "pids", "freezer"};
	enum cg_mode mode = cg_detect_mode();
	char path[PATH_MAX];

	if (mode == CG_MODE_V2) {
		sweep_path(CG_ROOT "/" CG_BASE, false);
		if (geteuid() != 0)
			sweep_delegated();
		if (parent) {
			snprintf(path, sizeof(path), CG_ROOT "%s", parent);
			sweep_path(path, true);
		}
	} else if (mode != CG_MODE_NONE) {
		for (size_t i = 0; i < sizeof(v1) / sizeof(*v1); i++) {
			snprintf(path, sizeof(path), CG_ROOT "/%s/" CG_BASE, v1[i]);
			sweep_path(path, false);
			if (parent) {
				snprintf(path, sizeof(path), CG_ROOT "/%s%s", v1[i], parent);
				sweep_path(path, true);
			}
		}
	}
}

void cg_gc_quiet(void)
{
	quiet = true;
	sweep_all(NULL);
	quiet = false;
}

int cg_gc_sweep(const char *parent)
{
	removed = 0;
	sweep_all(parent);
	return removed;
}
