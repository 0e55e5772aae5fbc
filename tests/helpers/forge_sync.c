/* Run as a sandboxed command under a dumpable init (bwrap mode with
 * --info-fd): takes a copy of each socket init holds (pidfd_getfd) and
 * sends, on each, the messages init sends the supervisor: a setup error
 * with the text FORGED-BY-COMMAND and an exit status of 42. Prints what it
 * managed, then exits 0. The supervisor must ignore all of it (ns/sync.h:
 * only init's pid is believed). */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ns/sync.h"

static int send_forged(int fd, uint32_t type, int status, const char *text)
{
	struct ns_msg m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.status = status;
	snprintf(m.step, sizeof(m.step), "%s", "init");
	snprintf(m.text, sizeof(m.text), "%s", text);
	return send(fd, &m, sizeof(m), MSG_NOSIGNAL) == (ssize_t)sizeof(m) ? 0 : -1;
}

int main(void)
{
	int pidfd = (int)syscall(SYS_pidfd_open, 1, 0), sent = 0;

	if (pidfd < 0) {
		perror("pidfd_open(1)");
		return 0;
	}
	for (int target = 3; target < 64; target++) {
		struct stat st;
		int fd = (int)syscall(SYS_pidfd_getfd, pidfd, target, 0);

		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
		    send_forged(fd, NS_MSG_SETUP_ERROR, 0, "FORGED-BY-COMMAND") == 0 &&
		    send_forged(fd, NS_MSG_EXIT, 42 << 8, "") == 0)
			sent++;
		close(fd);
	}
	printf("forged messages sent on %d socket(s)\n", sent);
	return 0;
}
