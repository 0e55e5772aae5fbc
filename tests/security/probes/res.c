/* Resources: a fork bomb, a memory bomb, filling /tmp, flooding stdout.
 * Each stops at a ceiling of its own, so the host control cannot hurt the
 * host; reaching the ceiling means nothing stopped it. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>
#include "probe.h"

#define FORK_CEILING 4000   /* above the default RLIMIT_NPROC of 2048 */
#define MEM_CEILING (512L << 20)   /* twice the --memory the suite sets */
#define FILL_CEILING (1088L << 20)   /* above the default 1 GiB /tmp cap */
#define FLOOD_BYTES (16L << 20)

static int fork_bomb(const struct ctx *c)
{
	static pid_t kids[FORK_CEILING];
	int n = 0, e = 0;
	for (; n < FORK_CEILING; n++) {
		pid_t p = fork();
		if (p == 0) {
			/* Gone with the probe, whatever kills it. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			pause();
			_exit(0);
		}
		if (p < 0) { e = errno; break; }
		kids[n] = p;
	}
	for (int i = 0; i < n; i++) kill(kids[i], SIGKILL);
	for (int i = 0; i < n; i++) waitpid(kids[i], NULL, 0);
	if (n == FORK_CEILING) return escaped("%d processes forked, nothing stopped them", n);
	return blocked("fork stopped after %d processes: %s", n, ename(e));
}

/* In a child: an OOM kill then ends only the child (unless the sandbox's
 * whole cgroup is killed, which escape_suite.sh also counts as stopped). */
static int mem_child(void)
{
	long done = 0, step = 16L << 20;
	for (; done < MEM_CEILING; done += step) {
		char *m = mmap(NULL, (size_t)step, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) { printf("mmap failed after %ld MiB: %s\n", done >> 20, ename(errno)); return 3; }
		memset(m, 1, (size_t)step);
	}
	return 0;
}
static int memory_bomb(const struct ctx *c)
{
	fflush(stdout);
	pid_t p = fork();
	int st;
	if (p == 0) _exit(mem_child());
	waitpid(p, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return escaped("%ld MiB allocated and touched, nothing stopped it", MEM_CEILING >> 20);
	if (WIFSIGNALED(st)) return blocked("the allocating process was killed by signal %d", WTERMSIG(st));
	return blocked("allocation refused");
}

static int tmpfs_fill(const struct ctx *c)
{
	static char buf[1 << 20];
	char p[64];
	long done = 0;
	int e = 0;
	snprintf(p, sizeof(p), "/tmp/escprobe-fill-%d", (int)getpid());
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) return blocked("%s: %s", p, ename(errno));
	unlink(p);   /* the space goes with the fd */
	memset(buf, 'x', sizeof(buf));
	while (done < FILL_CEILING) {
		long n = write(fd, buf, sizeof(buf));
		if (n <= 0) { e = errno; break; }
		done += n;
	}
	close(fd);
	if (done >= FILL_CEILING) return escaped("%ld MiB written to /tmp, nothing stopped it", done >> 20);
	return blocked("/tmp full after %ld MiB: %s", done >> 20, ename(e));
}

/* Judged by the runner: how many bytes reach the caller. */
static int output_flood(const struct ctx *c)
{
	static char buf[1 << 16];
	long done = 0;
	memset(buf, 'y', sizeof(buf));
	while (done < FLOOD_BYTES) {
		long n = write(1, buf, sizeof(buf));
		if (n <= 0) return blocked("stdout closed after %ld bytes: %s", done, ename(errno));
		done += n;
	}
	return P_BLOCKED;
}

static const struct probe probes[] = {
	{"res_fork_bomb", "resources", C_HOST, "fork 4000 processes (host as root: no RLIMIT_NPROC)", fork_bomb},
	{"res_memory_bomb", "resources", C_HOST, "allocate and touch 512 MiB", memory_bomb},
	{"res_tmpfs_fill", "resources", C_HOST, "write 1088 MiB to /tmp", tmpfs_fill},
	{"res_output_flood", "resources", C_HOST, "write 16 MiB to stdout (the runner counts what reaches the caller)", output_flood},
};
FAMILY(fam_res, probes);
