/* Network with --network none: the host's loopback services, its abstract
 * and path unix sockets, raw and packet sockets, netlink route changes and
 * any interface but lo. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "probe.h"

static int connect_to(const char *what, int fam, struct sockaddr *a, socklen_t len)
{
	int s = socket(fam, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0) return blocked("%s: socket: %s", what, ename(errno));
	int r = connect(s, a, len);
	int e = errno;
	close(s);
	return r == 0 ? escaped("connected to %s", what) : blocked("%s: %s", what, ename(e));
}

static int loopback(const struct ctx *c)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)c->port),
	                        .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (!c->port) return broken("no port= given");
	return connect_to("the host's 127.0.0.1 listener", AF_INET, (struct sockaddr *)&a, sizeof(a));
}

static int unix_sock(const char *what, const char *name, int abstract)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	if (n + 2 > sizeof(a.sun_path)) return broken("socket name too long");
	memcpy(a.sun_path + abstract, name, n);
	return connect_to(what, AF_UNIX, (struct sockaddr *)&a,
	                  (socklen_t)(offsetof(struct sockaddr_un, sun_path) + abstract + n));
}
static int abstract(const struct ctx *c)
{
	if (!c->abs) return broken("no abs= given");
	return unix_sock("the host's abstract unix socket", c->abs, 1);
}
static int pathsock(const struct ctx *c)
{
	if (!c->upath) return broken("no upath= given");
	return unix_sock("the host's path unix socket", c->upath, 0);
}

static int sock(const char *what, int fam, int type, int proto)
{
	int s = socket(fam, type | SOCK_CLOEXEC, proto);
	if (s >= 0) { close(s); return escaped("%s socket made", what); }
	return blocked("%s: %s", what, ename(errno));
}
static int raw(const struct ctx *c) { return sock("raw IPv4", AF_INET, SOCK_RAW, IPPROTO_RAW); }
static int packet(const struct ctx *c) { return sock("AF_PACKET", AF_PACKET, SOCK_RAW, 0); }

/* RTM_NEWLINK on lo that sets IFF_UP (already up: a no-op on the host).
 * Allowed only with CAP_NET_ADMIN over the network namespace. */
static int netlink_link(const struct ctx *c)
{
	struct { struct nlmsghdr h; struct ifinfomsg i; } m;
	struct sockaddr_nl k = {.nl_family = AF_NETLINK};
	char buf[512];
	int s = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (s < 0) return blocked("netlink socket: %s", ename(errno));
	memset(&m, 0, sizeof(m));
	m.h.nlmsg_len = sizeof(m);
	m.h.nlmsg_type = RTM_NEWLINK;
	m.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	m.i.ifi_family = AF_UNSPEC;
	m.i.ifi_index = (int)if_nametoindex("lo");
	m.i.ifi_flags = IFF_UP;
	m.i.ifi_change = IFF_UP;
	if (sendto(s, &m, sizeof(m), 0, (struct sockaddr *)&k, sizeof(k)) < 0) {
		close(s);
		return blocked("netlink send: %s", ename(errno));
	}
	long n = recv(s, buf, sizeof(buf), 0);
	close(s);
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	if (n < (long)sizeof(*h) || h->nlmsg_type != NLMSG_ERROR)
		return broken("netlink: no ack");
	int err = -((struct nlmsgerr *)NLMSG_DATA(h))->error;
	return err == 0 ? escaped("RTM_NEWLINK on lo accepted") : blocked("RTM_NEWLINK: %s", ename(err));
}

static int interfaces(const struct ctx *c)
{
	struct if_nameindex *l = if_nameindex(), *i;
	char names[256] = "";
	int other = 0;
	if (!l) return blocked("if_nameindex: %s", ename(errno));
	for (i = l; i->if_index; i++)
		if (strcmp(i->if_name, "lo")) {
			other++;
			strncat(names, i->if_name, sizeof(names) - strlen(names) - 2);
			strcat(names, " ");
		}
	if_freenameindex(l);
	return other ? escaped("interfaces besides lo: %s", names) : blocked("only lo");
}

static const struct probe probes[] = {
	{"net_host_loopback_tcp", "network (none)", C_HOST, "connect to a TCP listener on the host's 127.0.0.1", loopback},
	{"net_host_abstract_unix", "network (none)", C_HOST, "connect to the host's abstract unix socket", abstract},
	{"net_host_path_unix", "network (none)", C_HOST, "connect to the host's path unix socket (not bound)", pathsock},
	{"net_raw_socket", "network (none)", C_ROOT, "a raw IPv4 socket", raw},
	{"net_packet_socket", "network (none)", C_ROOT, "an AF_PACKET socket", packet},
	{"net_netlink_link_change", "network (none)", C_ROOT, "RTM_NEWLINK on lo through rtnetlink", netlink_link},
	{"net_host_interfaces", "network (none)", C_HOST, "any network interface besides lo", interfaces},
};
FAMILY(fam_net, probes);
