/* Small cgroupfs file helpers shared by the backends: fd-relative reads and
 * writes, killing what is left, removing directories, sweeping stale ones. */
#define _GNU_SOURCE
#include "cgroups/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/fdio.h"

int cg_write(int dirfd, const char *file, const char *val)
{
	return cl_write_file_at(dirfd, file, val);
}

int cg_write_u64(int dirfd, const char *file, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return cg_write(dirfd, file, buf);
}

ssize_t cg_read(int dirfd, const char *file, char *buf, size_t len)
{
	cl_autoclose int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC);
	size_t off = 0;

	if (fd < 0)
		return -errno;
	while (off < len - 1) {
		ssize_t n = read(fd, buf + off, len - 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	return (ssize_t)off;
}

int cg_read_key(int dirfd, const char *file, const char *key, int64_t *out)
{
	char buf[4096];
	ssize_t n = cg_read(dirfd, file, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return cg_parse_key(buf, key, out);
}

int cg_read_i64(int dirfd, const char *file, int64_t *out)
{
	char buf[64], *end;
	ssize_t n = cg_read(dirfd, file, buf, sizeof(buf));
	long long v;

	if (n < 0)
		return (int)n;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	*out = v;
	return 0;
}

bool cg_is_empty(int dirfd)
{
	char buf[16];

	return cg_read(dirfd, "cgroup.procs", buf, sizeof(buf)) == 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000L};

	nanosleep(&ts, NULL);
}

static bool listed(const char *procs, long pid)
{
	for (const char *p = procs; *p;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v == pid)
			return true;
		p = end + strspn(end, "\n");
	}
	return false;
}

/* Used when nothing better is there (v1, or v2 before cgroup.kill). The
 * sandbox is normally a pid namespace whose init already died, so this only
 * meets processes that are on their way out. A pid read from cgroup.procs
 * may be reused once its process is reaped, so each one is pinned with a
 * pidfd and signalled only if it is still listed after pinning. */
int cg_kill_loop(int dirfd)
{
	char buf[8192], again[8192];

	for (int round = 0; round < 2000; round++) {
		int fds[256];
		long pids[256];
		size_t n_fd = 0;
		ssize_t n = cg_read(dirfd, "cgroup.procs", buf, sizeof(buf));

		if (n < 0)
			return (int)n;
		if (n == 0)
			return 0;
		for (char *p = buf; *p && n_fd < 256;) {
			char *end;
			long pid = strtol(p, &end, 10);
			if (end == p)
				break;
			p = end + strspn(end, "\n");
			fds[n_fd] = pid > 0 ? (int)syscall(SYS_pidfd_open, (pid_t)pid, 0) : -1;
			pids[n_fd] = pid;
			if (fds[n_fd] >= 0)
				n_fd++;
		}
		if (cg_read(dirfd, "cgroup.procs", again, sizeof(again)) < 0)
			again[0] = '\0';
		for (size_t i = 0; i < n_fd; i++) {
			if (listed(again, pids[i]))
				syscall(SYS_pidfd_send_signal, fds[i], SIGKILL, NULL, 0);
			close(fds[i]);
		}
		sleep_ms(1);
	}
	return -EBUSY;
}

int cg_rmdir(int parent_fd, const char *name)
{
	/* Dying tasks keep the directory busy for a moment after they left
	 * cgroup.procs; wait up to ~2 s. */
	for (int i = 0; i < 2000; i++) {
		if (unlinkat(parent_fd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		sleep_ms(1);
	}
	return -EBUSY;
}

int cg_open_dir(const char *path, bool create, int *fd)
{
	if (create && mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	*fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return *fd < 0 ? -errno : 0;
}

static bool owner_dead(pid_t pid)
{
	return kill(pid, 0) < 0 && errno == ESRCH;
}

int cg_sweep(int dirfd, const char *dirpath, bool explicit_parent,
             void (*report)(const char *path))
{
	int dup_fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *e;
	int removed = 0;

	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return -errno;
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		pid_t pid;
		int sub;
		bool empty;

		if (e->d_type != DT_DIR)
			continue;
		pid = cg_parse_leaf(e->d_name, explicit_parent);
		if (pid <= 0 || pid == getpid() || !owner_dead(pid))
			continue;
		sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub < 0)
			continue;
		/* Processes left means a sandbox that outlived its cloister on
		 * purpose (no die-with-parent): not ours to kill. */
		empty = cg_is_empty(sub);
		close(sub);
		if (!empty)
			continue;
		if (unlinkat(dirfd, e->d_name, AT_REMOVEDIR) < 0) {
			if (report)
				fprintf(stderr, "cloister: cannot remove stale cgroup %s/%s: %s\n",
				        dirpath, e->d_name, strerror(errno));
			continue;
		}
		removed++;
		if (report) {
			char p[PATH_MAX];
			snprintf(p, sizeof(p), "%s/%s", dirpath, e->d_name);
			report(p);
		}
	}
	closedir(d);
	return removed;
}

enum cg_mode cg_detect_mode(void)
{
	struct statfs s;

	if (statfs(CG_ROOT, &s) < 0)
		return CG_MODE_NONE;
	if (s.f_type == CGROUP2_SUPER_MAGIC)
		return CG_MODE_V2;
	if (statfs(CG_ROOT "/unified", &s) == 0 && s.f_type == CGROUP2_SUPER_MAGIC)
		return CG_MODE_HYBRID;
	if (statfs(CG_ROOT "/memory", &s) == 0 && s.f_type == CGROUP_SUPER_MAGIC)
		return CG_MODE_V1;
	if (statfs(CG_ROOT "/pids", &s) == 0 && s.f_type == CGROUP_SUPER_MAGIC)
		return CG_MODE_V1;
	return CG_MODE_NONE;
}

const char *cg_mode_name(enum cg_mode m)
{
	switch (m) {
	case CG_MODE_V2: return "v2";
	case CG_MODE_HYBRID: return "hybrid";
	case CG_MODE_V1: return "v1";
	default: return "none";
	}
}

void cg_sweep_beside(const struct cg_dir *d, bool explicit_parent)
{
	char parent[sizeof(d->path)];
	char *slash;

	if (d->parent_fd < 0)
		return;
	snprintf(parent, sizeof(parent), "%s", d->path);
	slash = strrchr(parent, '/');
	if (slash)
		*slash = '\0';
	cg_sweep(d->parent_fd, parent, explicit_parent, NULL);
}
