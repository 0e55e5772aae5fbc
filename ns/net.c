/* Loopback bring-up with libmnl: the hot path needs one netlink request, so
 * no `ip` program and no libnl cache. */
#define _GNU_SOURCE
#include "ns/net.h"

#include <errno.h>
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <netinet/in.h>
#include <unistd.h>
#include <linux/if.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <time.h>

#include "src/util/cleanup.h"

/* Turns the kernel's ack into 0 or -errno (errno is never lost). */
static int check_ack(const char *buf, ssize_t len, unsigned int seq, unsigned int portid)
{
	int rc = mnl_cb_run(buf, (size_t)len, seq, portid, NULL, NULL);

	if (rc < 0)
		return -(errno ? errno : EPROTO);
	return 0;
}

int ns_net_loopback_up(cl_error *err)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifm;
	unsigned int seq = (unsigned int)time(NULL), portid;
	ssize_t n;
	int rc;

	nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!nl)
		return cl_fail_errno(err, "opening rtnetlink");
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		rc = cl_fail_errno(err, "binding rtnetlink");
		mnl_socket_close(nl);
		return rc;
	}
	portid = mnl_socket_get_portid(nl);

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	memset(ifm, 0, sizeof(*ifm));
	ifm->ifi_family = AF_UNSPEC;
	ifm->ifi_index = 1;   /* lo is always ifindex 1 in a new namespace */
	ifm->ifi_flags = IFF_UP;
	ifm->ifi_change = IFF_UP;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		rc = cl_fail_errno(err, "bringing up lo");
		mnl_socket_close(nl);
		return rc;
	}
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	rc = n < 0 ? -errno : check_ack(buf, n, seq, portid);
	mnl_socket_close(nl);
	if (rc < 0)
		return cl_fail(err, -rc, "bringing up lo");
	return 0;
}

int ns_net_listen_loopback(uint16_t port, cl_error *err)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port),
	                         .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return cl_fail_errno(err, "creating the listener for port %u", port);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 512) < 0) {
		int rc = cl_fail_errno(err, "listening on 127.0.0.1:%u inside the sandbox", port);
		close(fd);
		return rc;
	}
	return fd;
}
