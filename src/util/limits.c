/* Names the kernel limit behind EMFILE, ENFILE, a fork's EAGAIN and a
 * namespace clone's ENOSPC/EUSERS, with the value read from the host. */
#define _GNU_SOURCE
#include "src/util/limits.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "src/util/cleanup.h"

/* A sysctl's value as text ("?" when it cannot be read). */
static void sysctl_value(const char *name, char *buf, size_t size)
{
	char path[128];
	cl_autoclose int fd = -1;
	ssize_t n = -1;

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	for (char *p = path + strlen("/proc/sys/"); *p; p++)
		if (*p == '.')
			*p = '/';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		n = read(fd, buf, size - 1);
	if (n <= 0) {
		snprintf(buf, size, "?");
		return;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

static void rlimit_value(int res, char *buf, size_t size)
{
	struct rlimit rl;

	if (getrlimit(res, &rl) < 0)
		snprintf(buf, size, "?");
	else if (rl.rlim_cur == RLIM_INFINITY)
		snprintf(buf, size, "unlimited");
	else
		snprintf(buf, size, "%llu", (unsigned long long)rl.rlim_cur);
}

static const struct { int flag; const char *type; } ns_types[] = {
	{CLONE_NEWUSER, "user"}, {CLONE_NEWNS, "mnt"}, {CLONE_NEWPID, "pid"},
	{CLONE_NEWNET, "net"}, {CLONE_NEWIPC, "ipc"}, {CLONE_NEWUTS, "uts"},
	{CLONE_NEWCGROUP, "cgroup"},
};

/* ENOSPC from a namespace clone: one of the per-user counts of the types
 * asked for (the kernel does not say which), each named with its value;
 * types with the same value share one entry: user.max_{mnt,pid}_namespaces. */
static void ns_note(int ns_flags, char *buf, size_t size)
{
	enum { N = sizeof(ns_types) / sizeof(*ns_types) };
	char val[N][32];
	bool done[N] = {false};
	size_t n;

	for (size_t i = 0; i < N; i++)
		if (ns_flags & ns_types[i].flag) {
			char name[64];
			snprintf(name, sizeof(name), "user.max_%s_namespaces", ns_types[i].type);
			sysctl_value(name, val[i], sizeof(val[i]));
		} else
			done[i] = true;
	n = (size_t)snprintf(buf, size, "too many namespaces for this user:");
	for (size_t i = 0; i < N && n < size; i++) {
		size_t same = 0;
		if (done[i])
			continue;
		for (size_t j = i; j < N; j++)
			same += !done[j] && strcmp(val[j], val[i]) == 0;
		n += (size_t)snprintf(buf + n, size - n, "%s user.max_%s", buf[n - 1] == ':' ? "" : ",",
		                      same > 1 ? "{" : "");
		for (size_t j = i, k = 0; j < N && n < size; j++)
			if (!done[j] && strcmp(val[j], val[i]) == 0) {
				n += (size_t)snprintf(buf + n, size - n, "%s%s", k++ ? "," : "", ns_types[j].type);
				done[j] = j != i;
			}
		if (n < size)
			n += (size_t)snprintf(buf + n, size - n, "%s_namespaces = %s", same > 1 ? "}" : "", val[i]);
		done[i] = true;
	}
	if (n < size)
		snprintf(buf + n, size - n, "; or namespaces nested deeper than 32");
}

void cl_limit_note(int errnum, int ns_flags, bool forking, char *buf, size_t size)
{
	char a[32], b[32], c[32];

	buf[0] = '\0';
	if (errnum == EMFILE) {
		rlimit_value(RLIMIT_NOFILE, a, sizeof(a));
		snprintf(buf, size, "the open-file limit of the process: ulimit -n = %s", a);
	} else if (errnum == ENFILE) {
		sysctl_value("fs.file-max", a, sizeof(a));
		snprintf(buf, size, "the host's open-file limit: fs.file-max = %s", a);
	} else if (errnum == EAGAIN && forking) {
		rlimit_value(RLIMIT_NPROC, a, sizeof(a));
		sysctl_value("kernel.pid_max", b, sizeof(b));
		sysctl_value("kernel.threads-max", c, sizeof(c));
		snprintf(buf, size, "too many processes: ulimit -u = %s for this user, kernel.pid_max = "
		         "%s, kernel.threads-max = %s, or the cgroup's pids.max", a, b, c);
	} else if (errnum == ENOSPC && ns_flags) {
		ns_note(ns_flags, buf, size);
	} else if (errnum == EUSERS && (ns_flags & CLONE_NEWUSER)) {
		snprintf(buf, size, "user namespaces nested deeper than 32");
	}
}

void cl_error_note_limit(cl_error *err, int ns_flags, bool forking)
{
	cl_limit_note(err->errnum, ns_flags, forking, err->note, sizeof(err->note));
}
