/* Syscall-heavy probe for `make bench` (P5): N getppid() calls, so the
 * cost of a seccomp filter per syscall shows in the wall time. Static. */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;

	/* The raw syscall: glibc must not cache or skip it. */
	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	return 0;
}
