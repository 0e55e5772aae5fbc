/* The sync socket protocol (SOCK_SEQPACKET: one message per datagram, EOF
 * when every holder closed its end). */
#define _GNU_SOURCE   /* struct ucred */
#include "ns/sync.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = src ? strnlen(src, len - 1) : 0;

	memcpy(dst, src ? src : "", n);
	memset(dst + n, 0, len - n);
}

static void fill(struct ns_msg *m, uint32_t type, int errnum, int status, const char *step,
                 const char *text)
{
	m->type = type;
	m->id = 0;
	m->errnum = errnum;
	m->status = status;
	copy_str(m->step, sizeof(m->step), step);
	copy_str(m->text, sizeof(m->text), text);
}

static int send_msg(int fd, struct ns_msg *m, int passfd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = m, .iov_len = sizeof(*m)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (passfd >= 0) {
		struct cmsghdr *c;
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &passfd, sizeof(int));
	}
	do
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(*m) ? 0 : -EIO;
}

int ns_msg_send(int fd, uint32_t type, int errnum, int status, const char *step,
                const char *text)
{
	struct ns_msg m;

	fill(&m, type, errnum, status, step, text);
	return send_msg(fd, &m, -1);
}

int ns_msg_send_fd(int fd, uint32_t type, uint32_t id, int errnum, int status, int passfd)
{
	struct ns_msg m;

	fill(&m, type, errnum, status, "", "");
	m.id = id;
	return send_msg(fd, &m, passfd);
}

/* Takes the first passed fd, closes any others (a peer must not be able to
 * fill our fd table), and notes the sender's pid. */
static int take_fds(struct msghdr *mh, pid_t *from)
{
	int got = -1;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
			struct ucred cr;
			memcpy(&cr, CMSG_DATA(c), sizeof(cr));
			*from = cr.pid;
			continue;
		}
		if (c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int f;
			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (got < 0)
				got = f;
			else
				close(f);
		}
	}
	return got;
}

int ns_msg_recv_from(int fd, struct ns_msg *m, int *passfd, pid_t *from)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = m, .iov_len = sizeof(*m)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
	                    .msg_controllen = sizeof(u.buf)};
	ssize_t n;
	pid_t sender = 0;

	bool reset = false;

	*passfd = -1;
	/* ECONNRESET: the peer closed while a message of ours was still
	 * unread (a child that failed before reading its id maps). The kernel
	 * reports that once, ahead of what the peer sent before it closed:
	 * read on, or its setup error is lost. */
	do {
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_TRUNC);
		if (n < 0 && errno == ECONNRESET && !reset) {
			reset = true;
			errno = EINTR;   /* read again, once */
		}
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	*passfd = take_fds(&mh, &sender);
	if (from)
		*from = sender;
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof(*m) || m->type < NS_MSG_SETUP_ERROR || m->type > NS_MSG_NSFD) {
		if (*passfd >= 0)
			close(*passfd);
		*passfd = -1;
		return -EPROTO;
	}
	if (m->errnum < 0 || m->errnum > 4095)
		m->errnum = EIO;
	m->step[sizeof(m->step) - 1] = '\0';
	m->text[sizeof(m->text) - 1] = '\0';
	return 1;
}

int ns_msg_recv_fd(int fd, struct ns_msg *m, int *passfd)
{
	return ns_msg_recv_from(fd, m, passfd, NULL);
}

int ns_msg_recv(int fd, struct ns_msg *m)
{
	int passfd, rc = ns_msg_recv_fd(fd, m, &passfd);

	/* Callers of this form expect no fd: never keep one. */
	if (passfd >= 0)
		close(passfd);
	return rc;
}
