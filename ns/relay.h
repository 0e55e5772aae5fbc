/* Port publishing and outbound forwards, supervisor side. Host listeners are
 * bound before clone; sockets inside the sandbox's network namespace come
 * from the sandbox's init over the sync socket; bytes move with splice. */
#ifndef NS_RELAY_H
#define NS_RELAY_H

#include <stdint.h>

#include "src/util/error.h"
#include "src/policy/policy.h"

/* Every epoll registration of the supervisor carries one of these. Kind 0
 * is no kind: zeroed memory behind a stale pointer must never read as an
 * event (it once read as "sandbox exited" and ended supervision). */
enum ns_ev_kind {
	NS_EV_PIDFD = 1, NS_EV_SYNC, NS_EV_SIGNAL, NS_EV_TIMER,   /* ns/launch.c */
	NS_EV_PUB_TCP, NS_EV_PUB_UDP, NS_EV_FWD_LISTEN,            /* relay listeners */
	NS_EV_CONN, NS_EV_UDP_PEER, NS_EV_PUB_RETRY,               /* relay flows */
	NS_EV_OUTPUT,                                              /* ns/output.c */
	NS_EV_PTY,                                                 /* ns/pty.c */
	NS_EV_SESSION,                                             /* src/session/ */
};

struct ns_ev {
	enum ns_ev_kind kind;
	int fd;
	void *owner;
};

struct ns_relay;

/* Binds every --publish listener (errors: exit 125, nothing left) and
 * resolves every --forward-out target. *out stays NULL when p has none. */
int ns_relay_open(const struct cl_policy *p, int epfd, struct ns_relay **out, cl_error *err);
/* The supervisor's end of the sync socket, for socket requests to init. */
void ns_relay_set_sync(struct ns_relay *r, int sync_fd);
void ns_relay_event(struct ns_relay *r, struct ns_ev *ev, uint32_t events);
/* Replies from the sandbox side: a socket for request id, or a listener
 * for forward index. Takes ownership of fd. */
void ns_relay_on_socket(struct ns_relay *r, uint32_t id, int fd, int errnum);
void ns_relay_on_listener(struct ns_relay *r, int index, int fd);
/* Frees flows closed while handling the last epoll batch: an event later
 * in the same batch may still point at them (their fds are out of epoll
 * already, so no later batch can). */
void ns_relay_end_batch(struct ns_relay *r);
/* Closes every listener and flow; r may be NULL. */
void ns_relay_close(struct ns_relay *r);

#endif
