/* LD_PRELOAD probe for tests/security/root_identity.sh: the sandbox child's
 * first setup step fails, at a moment the test chooses. prctl(
 * PR_SET_PDEATHSIG) fails with EPERM when called as pid 1 of a pid
 * namespace (the child, before it has read its id maps). With
 * FAIL_PDEATHSIG=early the parent waits for that child to exit before it
 * writes the child's uid_map; with FAIL_PDEATHSIG=late the child fails only
 * once the parent's "maps" message is waiting for it, unread. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static bool mode(const char *m)
{
	const char *v = getenv("FAIL_PDEATHSIG");

	return v && strcmp(v, m) == 0;
}

/* Until one of our sockets has a message to read (10 s at most). */
static void wait_for_message(void)
{
	struct pollfd p[64];
	nfds_t n = 0;
	struct stat st;

	for (int fd = 3; fd < 64 && n < 64; fd++)
		if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode))
			p[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
	poll(p, n, 10000);
}

int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;

	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_PDEATHSIG && syscall(SYS_getpid) == 1) {
		if (mode("late"))
			wait_for_message();
		errno = EPERM;
		return -1;
	}
	return (int)syscall(SYS_prctl, option, a[0], a[1], a[2], a[3]);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	static int (*real)(int, const char *, int, ...);
	mode_t m = 0;
	va_list ap;
	int pid;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		m = va_arg(ap, mode_t);
	va_end(ap);
	if (!real)
		real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
	if (mode("early") && (flags & O_WRONLY) && sscanf(path, "/proc/%d/uid_map", &pid) == 1) {
		siginfo_t si;
		waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT);
	}
	return real(dirfd, path, flags, m);
}
