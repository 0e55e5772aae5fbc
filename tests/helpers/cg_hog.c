/* Resource hog for the limits tests: "mem MB" touches MB of memory,
 * "spin SECONDS" burns cpu, "forks N" tries to keep N children alive and
 * prints how many forks succeeded, "cgroup" prints /proc/self/cgroup. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "mem") == 0) {
		long mb = atol(argv[2]);
		for (long i = 0; i < mb; i++) {
			char *p = malloc(1 << 20);
			if (!p)
				return 3;
			memset(p, (int)i | 1, 1 << 20);
		}
		printf("touched %ld MB\n", mb);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "spin") == 0) {
		double end = now() + atof(argv[2]);
		volatile unsigned long x = 0;
		while (now() < end)
			for (int i = 0; i < 100000; i++)
				x++;
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "forks") == 0) {   /* argv[3]: a test marker */
		int n = atoi(argv[2]), ok = 0, failed = 0;
		for (int i = 0; i < n; i++) {
			pid_t p = fork();
			if (p == 0) {
				pause();
				_exit(0);
			}
			if (p > 0)
				ok++;
			else
				failed++;
		}
		printf("forked %d failed %d\n", ok, failed);
		fflush(stdout);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "cgroup") == 0) {
		char buf[4096];
		FILE *f = fopen("/proc/self/cgroup", "r");
		size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
		fwrite(buf, 1, n, stdout);
		return 0;
	}
	fprintf(stderr, "usage: cg_hog mem MB | spin S | forks N | cgroup\n");
	return 2;
}
