/* The launch floor for `make bench`: clone3 into the same namespaces as
 * `cloister run`, map ids, exec the command, wait. Nothing else on purpose. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	/* Exit codes distinguish the failing write when the floor breaks. */
	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		_exit(120);
	close(fd);
}

int main(int argc, char **argv)
{
	struct clone_args ca = {
		.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
		         CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP,
		.exit_signal = SIGCHLD,
	};
	char map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();
	long pid;
	int st;

	/* -n: keep the caller's network namespace, to price CLONE_NEWNET. */
	if (argc > 1 && strcmp(argv[1], "-n") == 0) {
		ca.flags &= ~(uint64_t)CLONE_NEWNET;
		argv++;
		argc--;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: floor [-n] COMMAND [ARG...]\n");
		return 2;
	}
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0) {
		perror("floor: clone3");
		return 125;
	}
	if (pid == 0) {
		/* Child, root of its own userns: the single self-mapping of the
		 * creator's ids needs no help from the parent (as in cloister). */
		put("/proc/self/setgroups", "deny");
		snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
		put("/proc/self/uid_map", map);
		snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
		put("/proc/self/gid_map", map);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	while (waitpid((pid_t)pid, &st, 0) < 0)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
