/* Internal to the relay: shared state and the flow functions (TCP
 * connections and UDP peers) used by ns/relay.c. */
#ifndef NS_RELAY_FLOW_H
#define NS_RELAY_FLOW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "ns/relay.h"

struct rl_listener {
	struct ns_ev ev;
	int index;                       /* into p->ports or p->forwards */
	struct sockaddr_storage target;  /* forward-out: where to connect */
	socklen_t target_len;
};

struct rl_conn;
struct rl_peer;

struct ns_relay {
	const struct cl_policy *p;
	int epfd;
	int sync_fd;
	struct rl_listener *pubs;
	struct rl_listener *fwds;
	struct rl_conn *conns;
	struct rl_peer *peers;
	struct ns_ev retry;              /* timerfd for refused --publish connects, fd -1 until needed */
	struct rl_conn *dead_conns;      /* freed after the epoll batch */
	struct rl_peer *dead_peers;
	size_t n_conns, n_peers;
	uint32_t next_id;
};

int rl_watch(struct ns_relay *r, struct ns_ev *ev, uint32_t events);
/* EPOLL_CTL_DEL, then close; fd < 0 is a no-op. */
void rl_close_watched(struct ns_relay *r, int fd);
int rl_request_socket(struct ns_relay *r, int type, uint32_t id);

void rl_accept_publish(struct ns_relay *r, struct rl_listener *l);
void rl_accept_forward(struct ns_relay *r, struct rl_listener *l);
void rl_conn_event(struct ns_relay *r, struct rl_conn *c, uint32_t events);
/* The retry timer fired: connections whose next try is due ask init for a
 * new inside socket. */
void rl_retry_due(struct ns_relay *r);
void rl_udp_from_host(struct ns_relay *r, struct rl_listener *l);
void rl_udp_from_inside(struct ns_relay *r, struct rl_peer *peer);
void rl_flow_on_socket(struct ns_relay *r, uint32_t id, int fd);
void rl_flows_close(struct ns_relay *r);
void rl_flows_reap(struct ns_relay *r);

#endif
