/* Relay listeners and bookkeeping: host-side --publish listeners, inside
 * --forward-out listeners, and matching init's socket replies to the flow
 * that asked. The byte pumps are in relay_flow.c. */
#define _GNU_SOURCE
#include "ns/relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ns/relay_flow.h"
#include "ns/sync.h"

static int parse_addr(const char *ip, uint16_t port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, ip, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons(port);
		*len = sizeof(*in4);
		return 0;
	}
	if (inet_pton(AF_INET6, ip, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof(*in6);
		return 0;
	}
	return -EINVAL;
}

int rl_watch(struct ns_relay *r, struct ns_ev *ev, uint32_t events)
{
	struct epoll_event e = {.events = events, .data.ptr = ev};

	return epoll_ctl(r->epfd, EPOLL_CTL_ADD, ev->fd, &e) < 0 ? -errno : 0;
}

void rl_close_watched(struct ns_relay *r, int fd)
{
	if (fd < 0)
		return;
	/* Out of epoll first: close() only drops the registration with the
	 * last reference to the file, and init may still hold one (it sent
	 * us the socket over SCM_RIGHTS); epoll would then keep reporting a
	 * pointer into freed memory. ENOENT (never watched) is fine. */
	epoll_ctl(r->epfd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
}

static int bind_publish(struct ns_relay *r, size_t i, cl_error *err)
{
	const struct cl_port *pt = &r->p->ports[i];
	struct rl_listener *l = &r->pubs[i];
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, fd;

	l->index = (int)i;
	l->ev.owner = l;
	l->ev.kind = pt->udp ? NS_EV_PUB_UDP : NS_EV_PUB_TCP;
	l->ev.fd = -1;
	if (parse_addr(pt->host_ip, pt->host_port, &ss, &len) < 0)
		return cl_fail(err, 0, "--publish: '%s' is not an IP address", pt->host_ip);
	fd = socket(ss.ss_family, (pt->udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return cl_fail_errno(err, "publishing %s:%u", pt->host_ip, pt->host_port);
	l->ev.fd = fd;
	if (!pt->udp)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || (!pt->udp && listen(fd, 512) < 0))
		return cl_fail_errno(err, "publishing %s:%u%s", pt->host_ip, pt->host_port,
		                     pt->udp ? "/udp" : "");
	if (rl_watch(r, &l->ev, EPOLLIN) < 0)
		return cl_fail_errno(err, "watching %s:%u", pt->host_ip, pt->host_port);
	return 0;
}

static int resolve_forward(struct ns_relay *r, size_t i, cl_error *err)
{
	const struct cl_forward *f = &r->p->forwards[i];
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res = NULL;
	char port[8];
	int rc;

	r->fwds[i].index = (int)i;
	r->fwds[i].ev.fd = -1;
	snprintf(port, sizeof(port), "%u", f->host_port);
	rc = getaddrinfo(f->host, port, &hints, &res);
	if (rc != 0 || !res)
		return cl_fail(err, 0, "--forward-out: cannot resolve '%s': %s", f->host, gai_strerror(rc));
	memcpy(&r->fwds[i].target, res->ai_addr, res->ai_addrlen);
	r->fwds[i].target_len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

int ns_relay_open(const struct cl_policy *p, int epfd, struct ns_relay **out, cl_error *err)
{
	struct ns_relay *r;
	int rc = 0;

	*out = NULL;
	if (!p->n_ports && !p->n_forwards)
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r)
		return cl_fail(err, ENOMEM, "setting up relays");
	r->p = p;
	r->epfd = epfd;
	r->sync_fd = -1;
	r->retry = (struct ns_ev){.kind = NS_EV_PUB_RETRY, .fd = -1, .owner = r};
	r->pubs = calloc(p->n_ports + 1, sizeof(*r->pubs));
	r->fwds = calloc(p->n_forwards + 1, sizeof(*r->fwds));
	if (!r->pubs || !r->fwds)
		rc = cl_fail(err, ENOMEM, "setting up relays");
	for (size_t i = 0; rc == 0 && i < p->n_ports; i++)
		r->pubs[i].ev.fd = -1;
	for (size_t i = 0; rc == 0 && i < p->n_forwards; i++)
		r->fwds[i].ev.fd = -1;
	for (size_t i = 0; rc == 0 && i < p->n_forwards; i++)
		rc = resolve_forward(r, i, err);
	for (size_t i = 0; rc == 0 && i < p->n_ports; i++)
		rc = bind_publish(r, i, err);
	if (rc < 0) {
		ns_relay_close(r);
		return rc;
	}
	*out = r;
	return 0;
}

void ns_relay_set_sync(struct ns_relay *r, int sync_fd)
{
	if (r)
		r->sync_fd = sync_fd;
}

int rl_request_socket(struct ns_relay *r, int type, uint32_t id)
{
	return ns_msg_send_fd(r->sync_fd, NS_MSG_SOCKET_REQ, id, 0, type, -1);
}

void ns_relay_on_listener(struct ns_relay *r, int index, int fd)
{
	if (!r || index < 0 || (size_t)index >= r->p->n_forwards || r->fwds[index].ev.fd >= 0) {
		close(fd);
		return;
	}
	r->fwds[index].ev.kind = NS_EV_FWD_LISTEN;
	r->fwds[index].ev.owner = &r->fwds[index];
	r->fwds[index].ev.fd = fd;
	if (rl_watch(r, &r->fwds[index].ev, EPOLLIN) < 0) {
		close(fd);
		r->fwds[index].ev.fd = -1;
	}
}

void ns_relay_on_socket(struct ns_relay *r, uint32_t id, int fd, int errnum)
{
	if (!r) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rl_flow_on_socket(r, id, fd);
}

void ns_relay_event(struct ns_relay *r, struct ns_ev *ev, uint32_t events)
{
	switch (ev->kind) {
	case NS_EV_PUB_TCP:
		rl_accept_publish(r, ev->owner);
		break;
	case NS_EV_FWD_LISTEN:
		rl_accept_forward(r, ev->owner);
		break;
	case NS_EV_PUB_UDP:
		rl_udp_from_host(r, ev->owner);
		break;
	case NS_EV_CONN:
		rl_conn_event(r, ev->owner, events);
		break;
	case NS_EV_UDP_PEER:
		rl_udp_from_inside(r, ev->owner);
		break;
	case NS_EV_PUB_RETRY:
		rl_retry_due(r);
		break;
	default:
		break;
	}
}

void ns_relay_end_batch(struct ns_relay *r)
{
	if (r)
		rl_flows_reap(r);
}

void ns_relay_close(struct ns_relay *r)
{
	if (!r)
		return;
	rl_flows_close(r);
	rl_flows_reap(r);
	rl_close_watched(r, r->retry.fd);
	for (size_t i = 0; r->pubs && i < r->p->n_ports; i++)
		rl_close_watched(r, r->pubs[i].ev.fd);
	for (size_t i = 0; r->fwds && i < r->p->n_forwards; i++)
		rl_close_watched(r, r->fwds[i].ev.fd);
	free(r->pubs);
	free(r->fwds);
	free(r);
}
