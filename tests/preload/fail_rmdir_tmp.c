/* LD_PRELOAD probe for tests/integration/sandbox.sh: the sandbox run's
 * teardown fails. Removing a directory named "tmp" (the sandbox's tmp/,
 * emptied first) fails with EBUSY; every other unlinkat is the real one. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int unlinkat(int dirfd, const char *path, int flags)
{
	if ((flags & AT_REMOVEDIR) && strcmp(path, "tmp") == 0) {
		errno = EBUSY;
		return -1;
	}
	return (int)syscall(SYS_unlinkat, dirfd, path, flags);
}
