/* Throughput driver for `make bench` (P3): P concurrent launchers, each
 * running COMMAND N times back to back; prints launches per second. */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int launcher(int n, char **cmd)
{
	for (int i = 0; i < n; i++) {
		pid_t pid;
		int st;

		if (posix_spawnp(&pid, cmd[0], NULL, NULL, cmd, environ) != 0)
			return 1;
		if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	int p, n, bad = 0, st;

	if (argc < 4 || (p = atoi(argv[1])) < 1 || (n = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: par LAUNCHERS LAUNCHES COMMAND [ARG...]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < p; i++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(launcher(n, argv + 3));
		if (pid < 0)
			return 1;
	}
	while (wait(&st) > 0)
		bad += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	clock_gettime(CLOCK_MONOTONIC, &b);
	double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	if (bad) {
		fprintf(stderr, "par: %d launcher(s) saw a failing command\n", bad);
		return 1;
	}
	printf("%.6f %.1f\n", s, (double)p * n / s);
	return 0;
}
