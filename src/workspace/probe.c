/* The overlay probe (a forked child) and its cache: one fork, unshare and two mounts (~1-2 ms)
 * per `--workspace` launch become one small read. The file is in
 * cloister's own 0700 state dir, never inside a sandbox's workspace; a
 * wrong "yes" would only make the launch fail at the overlay mount (and
 * a wrong "no" take the copy), never weaken the sandbox. */
#define _GNU_SOURCE
#include "src/workspace/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/fdio.h"
#include "src/util/probe.h"
#include "src/workspace/root.h"

#define CACHE ".overlay-probe"

static bool boot_id(char *out, size_t len)
{
	cl_autoclose int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, out, len - 1);

	if (n <= 0)
		return false;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return out[0] != '\0';
}

#if CL_NATIVE
static int write_map(const char *path, const char *text)
{
	int rc = cl_write_file_at(AT_FDCWD, path, text);

	if (rc < 0)
		errno = -rc;   /* cl_probe_in_child() reports errno */
	return rc < 0 ? -1 : 0;
}

/* The probe's base directory: made by the parent, used by the child. */
static char overlay_base[64];

/* In a new user+mount namespace: a private tmpfs at the base (so the answer
 * does not depend on what /tmp is), then an overlay of dirs inside it. */
static int try_overlay(void)
{
	static const char *const sub[] = {"l", "u", "w", "m"};
	char path[4][96], line[64], opts[512];
	/* Before unshare: afterwards they read as the overflow id. */
	unsigned uid = (unsigned)getuid(), gid = (unsigned)getgid();
	int rc;

	rc = unshare(CLONE_NEWUSER | CLONE_NEWNS);
	if (rc == 0)
		rc = write_map("/proc/self/setgroups", "deny");
	snprintf(line, sizeof(line), "0 %u 1", uid);
	if (rc == 0)
		rc = write_map("/proc/self/uid_map", line);
	/* Without a gid mapping, overlay cannot create its work directory. */
	snprintf(line, sizeof(line), "0 %u 1", gid);
	if (rc == 0)
		rc = write_map("/proc/self/gid_map", line);
	if (rc == 0)
		rc = mount("tmpfs", overlay_base, "tmpfs", 0, "mode=0700");
	for (int i = 0; rc == 0 && i < 4; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/%s", overlay_base, sub[i]);
		rc = mkdir(path[i], 0700);
	}
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", path[0], path[1], path[2]);
	if (rc == 0)
		rc = mount("overlay", path[3], "overlay", 0, opts);
	return rc;   /* the mounts die with this child's namespace */
}

bool ws_overlay_probe(int *err)
{
	bool ok;

	*err = 0;
	snprintf(overlay_base, sizeof(overlay_base), "/tmp/cloister-check-XXXXXX");
	ok = mkdtemp(overlay_base) && cl_probe_in_child(try_overlay, err);
	if (!ok && !*err)
		*err = errno;
	rmdir(overlay_base);
	return ok;
}
#else
/* No user namespaces of its own here: --workspace is refused before this. */
bool ws_overlay_probe(int *err)
{
	*err = ENOSYS;
	return false;
}
#endif

/* 1 or 0 as cached for this boot, -1 when there is no usable answer. */
static int cached(int dir_fd, const char *boot)
{
	cl_autoclose int fd = openat(dir_fd, CACHE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	char buf[128];
	struct stat st;
	size_t n = strlen(boot);
	ssize_t got;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return -1;
	got = read(fd, buf, sizeof(buf) - 1);
	if (got <= 0)
		return -1;
	buf[got] = '\0';
	if (strncmp(buf, boot, n) || buf[n] != ' ' || (buf[n + 1] != '0' && buf[n + 1] != '1') || buf[n + 2] != '\n')
		return -1;
	return buf[n + 1] == '1';
}

bool ws_overlay_works(int dir_fd)
{
	char boot[64], line[96];
	int e, c;
	bool ok;

	if (!boot_id(boot, sizeof(boot)))
		return ws_overlay_probe(&e);
	if ((c = cached(dir_fd, boot)) >= 0)
		return c == 1;
	ok = ws_overlay_probe(&e);
	snprintf(line, sizeof(line), "%s %d\n", boot, ok);
	/* Best effort: without it, the next launch probes again. */
	(void)ws_write_small(dir_fd, CACHE, line);
	return ok;
}
