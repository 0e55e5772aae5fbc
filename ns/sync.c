/* The sync socket protocol (SOCK_SEQPACKET: one message per datagram, EOF
 * when every holder closed its end). */
#include "ns/sync.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = src ? strnlen(src, len - 1) : 0;

	memcpy(dst, src ? src : "", n);
	memset(dst + n, 0, len - n);
}

int ns_msg_send(int fd, uint32_t type, int errnum, int status, const char *step,
                const char *text)
{
	struct ns_msg m;
	ssize_t n;

	m.type = type;
	m.errnum = errnum;
	m.status = status;
	copy_str(m.step, sizeof(m.step), step);
	copy_str(m.text, sizeof(m.text), text);
	do
		n = send(fd, &m, sizeof(m), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(m) ? 0 : -EIO;
}

int ns_msg_recv(int fd, struct ns_msg *m)
{
	ssize_t n;

	do
		n = recv(fd, m, sizeof(*m), MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof(*m) || m->type < NS_MSG_SETUP_ERROR || m->type > NS_MSG_READY)
		return -EPROTO;
	if (m->errnum < 0 || m->errnum > 4095)
		m->errnum = EIO;
	m->step[sizeof(m->step) - 1] = '\0';
	m->text[sizeof(m->text) - 1] = '\0';
	return 1;
}
