/* The overlay probe's cache: one fork, unshare and two mounts (~1-2 ms)
 * per `--workspace` launch become one small read. The file is in
 * cloister's own 0700 state dir, never inside a sandbox's workspace; a
 * wrong "yes" would only make the launch fail at the overlay mount (and
 * a wrong "no" take the copy), never weaken the sandbox. */
#define _GNU_SOURCE
#include "src/workspace/probe.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/check.h"
#include "src/cleanup.h"
#include "src/workspace/state.h"

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
		return cl_check_overlay(&e);
	if ((c = cached(dir_fd, boot)) >= 0)
		return c == 1;
	ok = cl_check_overlay(&e);
	snprintf(line, sizeof(line), "%s %d\n", boot, ok);
	/* Best effort: without it, the next launch probes again. */
	(void)ws_write_small(dir_fd, CACHE, line);
	return ok;
}
