/* Connecting to a session's control socket and one request/reply round. */
#define _GNU_SOURCE
#include "src/session/client.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int ss_connect(const char *key, struct ss_info *in, cl_error *err)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct ss_info tmp;
	char dir[4096];
	int fd;

	if (!in)
		in = &tmp;
	if (ss_find(key, dir, sizeof(dir), in, err) < 0)
		return -1;
	if (!ss_alive(in->pid, in->start))
		return cl_fail(err, 0, "session '%s' is gone (its supervisor died); `cloister rm %s` "
		               "or `cloister gc` removes what is left", key, key);
	if (snprintf(a.sun_path, sizeof(a.sun_path), "%s/sock", dir) >= (int)sizeof(a.sun_path))
		return cl_fail(err, 0, "session socket path too long: %s", dir);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return cl_fail_errno(err, "creating a socket");
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		close(fd);
		return cl_fail(err, e, "connecting to session '%s'", key);
	}
	return fd;
}

int ss_request(int sock, const struct ss_buf *b, const int *fds, size_t n_fds, cl_error *err)
{
	int rc;

	if (b->oom)
		return cl_fail(err, ENOMEM, "building the request");
	if (b->len > SS_REQ_MAX)
		return cl_fail(err, E2BIG, "request too large (at most %d bytes of arguments and "
		               "environment)", SS_REQ_MAX);
	rc = ss_send(sock, b->data, b->len, fds, n_fds);
	if (rc < 0)
		return cl_fail(err, -rc, "sending the request to the session");
	return 0;
}

int ss_reply_read(int sock, struct ss_reply *rep, cl_error *err)
{
	ssize_t n;

	do
		n = recv(sock, rep, sizeof(*rep), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return cl_fail_errno(err, "reading the session's reply");
	if (n == 0)
		return cl_fail(err, 0, "the session ended before answering (removed, or its "
		               "supervisor died)");
	if ((size_t)n != sizeof(*rep) || rep->magic != SS_REPLY_MAGIC)
		return cl_fail(err, 0, "malformed reply from the session");
	rep->msg[sizeof(rep->msg) - 1] = '\0';
	return 0;
}

int ss_call(int sock, const struct ss_buf *b, const int *fds, size_t n_fds,
            struct ss_reply *rep, cl_error *err)
{
	if (ss_request(sock, b, fds, n_fds, err) < 0)
		return -1;
	return ss_reply_read(sock, rep, err);
}
