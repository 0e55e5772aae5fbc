/* The runtime and other sandboxes: overwrite the cloister binary or get a
 * handle on it (CVE-2019-5736 class), reach the state database, another
 * sandbox's directories, or a cgroup outside the sandbox's own. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "probe.h"

/* Opening for writing is the attack; nothing is ever written. */
static int open_write(const char *what, const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return escaped("%s opened for writing: %s", what, path);
	}
	return blocked("%s: %s", path, ename(errno));
}

static int cloister_binary(const struct ctx *c)
{
	if (!c->exe) return broken("no exe= given");
	return open_write("the host's cloister binary", c->exe);
}

/* Any process visible here whose binary is not in the sandbox's own tree
 * (cloister's init runs the host's cloister binary): a readable
 * /proc/PID/exe is a handle on that host file. */
static int foreign_exe(const struct ctx *c)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int opened = 0;
	if (!d) return blocked("/proc: %s", ename(errno));
	while ((e = readdir(d))) {
		char p[300], t[4096];
		struct stat via, byname;
		if (e->d_name[0] < '1' || e->d_name[0] > '9' || atoi(e->d_name) == getpid())
			continue;
		snprintf(p, sizeof(p), "/proc/%s/exe", e->d_name);
		int fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0) continue;
		long n = readlink(p, t, sizeof(t) - 1);
		t[n > 0 ? n : 0] = 0;
		int ours = fstat(fd, &via) == 0 && stat(t, &byname) == 0 &&
		           via.st_dev == byname.st_dev && via.st_ino == byname.st_ino;
		close(fd);
		opened++;
		if (!ours) {
			closedir(d);
			return escaped("pid %s: /proc/%s/exe is a host binary not in this tree (%s)", e->d_name, e->d_name, t);
		}
	}
	closedir(d);
	return blocked("%d other binaries readable, all in the sandbox's tree", opened);
}

static int state_db(const struct ctx *c)
{
	char p[4096];
	if (!c->statedir) return broken("no statedir= given");
	snprintf(p, sizeof(p), "%s/cloister.db", c->statedir);
	return open_write("the state database", p);
}

static int other_sandbox(const struct ctx *c)
{
	char p[4096];
	if (!c->statedir) return broken("no statedir= given");
	snprintf(p, sizeof(p), "%s/sandboxes/other-run/other-sandbox/result/planted", c->statedir);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
		unlink(p);
		return escaped("planted a file in another sandbox's result dir");
	}
	return blocked("%s: %s", p, ename(errno));
}

/* A cgroup of its own outside the sandbox's, or joining the root cgroup,
 * escapes the limits. */
static int cgroup_mkdir(const struct ctx *c)
{
	const char *roots[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified"};
	char p[300];
	for (size_t i = 0; i < ARRAY_LEN(roots); i++) {
		snprintf(p, sizeof(p), "%s/escprobe-%d", roots[i], (int)getpid());
		if (mkdir(p, 0755) == 0) {
			rmdir(p);
			return escaped("made cgroup %s", p);
		}
	}
	return blocked("mkdir under /sys/fs/cgroup: %s", ename(errno));
}

static int cgroup_join_root(const struct ctx *c)
{
	const char *files[] = {"/sys/fs/cgroup/cgroup.procs", "/sys/fs/cgroup/memory/cgroup.procs",
	                       "/sys/fs/cgroup/pids/cgroup.procs", "/sys/fs/cgroup/unified/cgroup.procs"};
	for (size_t i = 0; i < ARRAY_LEN(files); i++) {
		int fd = open(files[i], O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			return escaped("%s writable (move out of the sandbox's cgroup)", files[i]);
		}
	}
	return blocked("no root cgroup.procs writable: %s", ename(errno));
}

static const struct probe probes[] = {
	{"runtime_binary_write", "runtime and other sandboxes", C_HOST, "open the host's cloister binary for writing (CVE-2019-5736 class)", cloister_binary},
	{"runtime_foreign_exe_handle", "runtime and other sandboxes", C_NONE, "a readable /proc/PID/exe of a binary outside the sandbox's tree; on the host every binary is in the tree", foreign_exe},
	{"state_db_write", "runtime and other sandboxes", C_HOST, "open the state database (.smithers/cloister.db) for writing", state_db},
	{"state_other_sandbox_dir", "runtime and other sandboxes", C_HOST, "plant a file in another sandbox's result directory", other_sandbox},
	{"cgroup_mkdir", "runtime and other sandboxes", C_ROOT, "create a cgroup outside the sandbox's (host: root only)", cgroup_mkdir},
	{"cgroup_join_root", "runtime and other sandboxes", C_ROOT, "open the root cgroup.procs to move out (host: root only)", cgroup_join_root},
};
FAMILY(fam_state, probes);
