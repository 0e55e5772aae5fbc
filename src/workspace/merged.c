/* A sticky workspace's merged view for `cloister workspace snapshot`: the
 * overlay is mounted by the kernel, which alone decides what the upper's
 * whiteouts and opaque dirs mean, so no walker here reinterprets them. */
#define _GNU_SOURCE
#include "src/workspace/merged.h"

#include <errno.h>

#if CL_NATIVE
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ns/sync.h"
#include "src/util/cleanup.h"
#include "src/util/fdio.h"

/* The caller's own ids, mapped to themselves: the files of both layers
 * (the caller's) keep their owner inside. */
static int map_self(unsigned uid, unsigned gid)
{
	char line[64];
	int rc;

	if ((rc = cl_write_file_at(AT_FDCWD, "/proc/self/setgroups", "deny")) < 0)
		return rc;
	snprintf(line, sizeof(line), "%u %u 1", uid, uid);
	if ((rc = cl_write_file_at(AT_FDCWD, "/proc/self/uid_map", line)) < 0)
		return rc;
	snprintf(line, sizeof(line), "%u %u 1", gid, gid);
	return cl_write_file_at(AT_FDCWD, "/proc/self/gid_map", line);
}

static int child_fail(int sock, const char *step)
{
	ns_msg_send(sock, NS_MSG_SETUP_ERROR, errno, 0, step, strerror(errno));
	return 1;
}

/* ---- child: new user + mount namespace, privileged only inside them ---- */
static int child(int sock, const char *upper, const char *base, unsigned uid, unsigned gid)
{
	char lower[128];
	int up, lo, fsfd, mfd, rc;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return child_fail(sock, "unshare");
	if ((rc = map_self(uid, gid)) < 0)
		return errno = -rc, child_fail(sock, "id maps");
	/* Opened after unshare: overlayfs refuses a layer whose mount belongs
	 * to another mount namespace, which an inherited fd's would. */
	if ((up = open(upper, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return child_fail(sock, "opening the upper dir");
	if ((lo = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return child_fail(sock, "opening the base dir");
	/* Two lower layers and no upper: read-only, the upper's marks honoured
	 * as a middle layer's. userxattr: the marks the sandbox's overlay made
	 * (in its user namespace) are user.overlay.*. */
	snprintf(lower, sizeof(lower), "/proc/self/fd/%d:/proc/self/fd/%d", up, lo);
	if ((fsfd = fsopen("overlay", FSOPEN_CLOEXEC)) < 0)
		return child_fail(sock, "fsopen overlay");
	if (fsconfig(fsfd, FSCONFIG_SET_STRING, "lowerdir", lower, 0) < 0 ||
	    fsconfig(fsfd, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
	    fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return child_fail(sock, "overlay options");
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC,
	             MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	if (mfd < 0)
		return child_fail(sock, "fsmount");
	return ns_msg_send_fd(sock, NS_MSG_READY, 0, 0, 0, mfd) < 0;
}

int ws_merged_open(const char *upper, const char *base, cl_error *err)
{
	/* Before the fork: in the child they would read as the overflow id. */
	unsigned uid = (unsigned)geteuid(), gid = (unsigned)getegid();
	struct ns_msg m;
	int sv[2], mfd = -1, st, got;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return cl_fail_errno(err, "mounting the workspace's merged view");
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		_exit(child(sv[1], upper, base, uid, gid));
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return cl_fail_errno(err, "mounting the workspace's merged view");
	}
	got = ns_msg_recv_fd(sv[0], &m, &mfd);
	close(sv[0]);
	/* The mount outlives the child: a detached mount lives as long as
	 * its fd. */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got == 1 && m.type == NS_MSG_READY && mfd >= 0) {
		/* fsmount gives an O_PATH fd: readable only once reopened. */
		int dfd = openat(mfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(mfd);
		return dfd >= 0 ? dfd : cl_fail_errno(err, "opening the workspace's merged view");
	}
	if (mfd >= 0)
		close(mfd);
	if (got == 1 && m.type == NS_MSG_SETUP_ERROR)
		return cl_fail(err, m.errnum, "mounting the workspace's merged view (%s)", m.step);
	return cl_fail(err, EIO, "mounting the workspace's merged view: the helper process died");
}

#else
int ws_merged_open(const char *upper, const char *base, cl_error *err)
{
	(void)upper;
	(void)base;
	return cl_fail(err, ENOSYS, "workspace snapshots need the native runtime (built with NATIVE=0)");
}
#endif
