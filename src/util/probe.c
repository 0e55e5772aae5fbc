/* Forked probes: fn runs in a throw-away child, so whatever it unshares or
 * mounts dies with it; the parent learns only ok and errno. */
#define _GNU_SOURCE
#include "src/util/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

bool cl_probe_in_child(int (*fn)(void), int *child_errno)
{
	int pipefd[2], e = 0, st;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return false;
	pid = fork();
	if (pid == 0) {
		int rc = fn();
		e = errno;
		if (write(pipefd[1], &e, sizeof(e)) < 0)
			_exit(2);
		_exit(rc == 0 ? 0 : 1);
	}
	close(pipefd[1]);
	if (pid < 0 || read(pipefd[0], &e, sizeof(e)) != (ssize_t)sizeof(e))
		e = EIO;
	close(pipefd[0]);
	if (pid > 0)
		waitpid(pid, &st, 0);
	*child_errno = e;
	return pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}
