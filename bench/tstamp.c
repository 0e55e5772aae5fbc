/* Driver for bench/breakdown.sh: runs COMMAND N times and brackets each run
 * with CLOISTER_TRACE-format stamps ("driver spawn", "driver reaped"). */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static void stamp(const char *step)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(stderr, "cloister-trace: %llu driver %s\n",
	        (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec, step);
}

int main(int argc, char **argv)
{
	int n;

	setvbuf(stderr, NULL, _IONBF, 0);
	if (argc < 3 || (n = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: tstamp N COMMAND [ARG...]\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		pid_t pid;
		int st;

		stamp("spawn");
		if (posix_spawnp(&pid, argv[2], NULL, NULL, argv + 2, environ) != 0)
			return 1;
		if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 1;
		stamp("reaped");
	}
	return 0;
}
