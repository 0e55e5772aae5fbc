/* Relay flows: one TCP connection = two sockets and two pipes moved with
 * splice (zero copy), half-close propagated with shutdown; one UDP peer =
 * a connected socket inside. Edge-triggered: every event pumps both ways
 * until EAGAIN. A --publish connection refused inside is retried until
 * its publish-wait deadline, then the client is reset. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "ns/relay_flow.h"

#define MAX_CONNS 4096
#define MAX_PEERS 256
#define PIPE_BYTES (256 * 1024)
#define UDP_MAX 65536
/* Refused inward connects are retried after 10 ms, doubling up to 100 ms:
 * a service that is starting is reached within 100 ms of listening. */
#define RETRY_FIRST_NS 10000000ULL
#define RETRY_MAX_NS 100000000ULL

struct half {              /* one direction: from -> pipe -> to */
	int pipe[2];
	size_t queued;
	bool eof;              /* read side saw EOF */
	bool shut;             /* write side was shut down */
};

struct rl_conn {
	struct ns_ev ev_a, ev_b;   /* a: the accepting side, b: the one we dialled */
	int a, b;
	struct half ab, ba;
	bool connecting;
	bool pending;              /* waiting for init's socket */
	bool unsent;               /* request not sent yet: init's queue was full */
	bool dead;                 /* closed; freed at the end of the batch */
	bool started;              /* pipes made and a watched (conn_start) */
	bool publish;              /* --publish: a refused connect is retried */
	bool waiting;              /* refused: b closed until retry_at */
	unsigned tries;
	uint64_t deadline, retry_at;   /* CLOCK_MONOTONIC ns */
	uint16_t inside_port;
	uint32_t id;
	struct rl_conn *next;
};

struct rl_peer {
	struct ns_ev ev;
	struct rl_listener *l;
	struct sockaddr_storage addr;
	socklen_t alen;
	uint32_t id;
	char *pend;                /* first datagram, until the socket arrives */
	size_t pend_len;
	bool unsent;
	bool dead;
	struct rl_peer *next;
};

/* Asks init for a socket. init's receive queue is bounded
 * (net.unix.max_dgram_qlen): when it is full the request waits in *unsent
 * and goes out after the next reply, which always frees a slot. */
static int ask(struct ns_relay *r, int type, uint32_t id, bool *unsent)
{
	int rc = rl_request_socket(r, type, id);

	*unsent = rc == -EAGAIN;
	return *unsent ? 0 : rc;
}

/* Sends waiting requests until the queue is full again. */
static void flush_unsent(struct ns_relay *r)
{
	struct rl_conn *c;
	struct rl_peer *p;
	int rc = 0;

	for (c = r->conns; c && rc != -EAGAIN; c = c->next)
		if (c->unsent && (rc = rl_request_socket(r, SOCK_STREAM, c->id)) != -EAGAIN)
			c->unsent = false;
	for (p = r->peers; p && rc != -EAGAIN; p = p->next)
		if (p->unsent && (rc = rl_request_socket(r, SOCK_DGRAM, p->id)) != -EAGAIN)
			p->unsent = false;
}

static void inside_addr(struct sockaddr_in *sa, uint16_t port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

static void half_close(struct half *h)
{
	if (h->pipe[0] >= 0)
		close(h->pipe[0]);
	if (h->pipe[1] >= 0)
		close(h->pipe[1]);
	h->pipe[0] = h->pipe[1] = -1;
}

static void conn_free(struct ns_relay *r, struct rl_conn *c)
{
	for (struct rl_conn **pp = &r->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	/* The pipes are never watched; the sockets must leave epoll before
	 * the struct can be freed. */
	rl_close_watched(r, c->a);
	rl_close_watched(r, c->b);
	half_close(&c->ab);
	half_close(&c->ba);
	c->a = c->b = -1;
	c->dead = true;
	r->n_conns--;
	c->next = r->dead_conns;
	r->dead_conns = c;
}

static struct rl_conn *conn_new(struct ns_relay *r, int a)
{
	struct rl_conn *c;

	if (r->n_conns >= MAX_CONNS || !(c = calloc(1, sizeof(*c)))) {
		close(a);
		return NULL;
	}
	c->a = a;
	c->b = -1;
	c->ab.pipe[0] = c->ab.pipe[1] = c->ba.pipe[0] = c->ba.pipe[1] = -1;
	c->ev_a = (struct ns_ev){.kind = NS_EV_CONN, .fd = a, .owner = c};
	c->id = ++r->next_id;
	c->next = r->conns;
	r->conns = c;
	r->n_conns++;
	return c;
}

static int open_pipe(struct half *h)
{
	if (pipe2(h->pipe, O_NONBLOCK | O_CLOEXEC) < 0)
		return -errno;
	/* A bigger pipe means fewer splice calls per megabyte. */
	fcntl(h->pipe[1], F_SETPIPE_SZ, PIPE_BYTES);
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Closes the client's end with an RST: what a refused connect would have
 * told it, had the relay not accepted first. */
static void conn_reset(struct ns_relay *r, struct rl_conn *c)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};

	setsockopt(c->a, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	conn_free(r, c);
}

/* Both ends known: make pipes and watch both sockets. After a retry only
 * the new inside socket is new: a and the pipes stay as they were. */
static int conn_start(struct ns_relay *r, struct rl_conn *c)
{
	const uint32_t ev = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;

	c->ev_b = (struct ns_ev){.kind = NS_EV_CONN, .fd = c->b, .owner = c};
	if (!c->started) {
		if (open_pipe(&c->ab) < 0 || open_pipe(&c->ba) < 0 || rl_watch(r, &c->ev_a, ev) < 0)
			return -1;
		c->started = true;
	}
	return rl_watch(r, &c->ev_b, ev);
}

/* Arms the retry timer for the earliest waiting connection, or disarms
 * it when none waits. The timerfd is made on first use. */
static int retry_arm(struct ns_relay *r)
{
	struct itimerspec its = {0};
	uint64_t first = 0;

	for (struct rl_conn *c = r->conns; c; c = c->next)
		if (c->waiting && (!first || c->retry_at < first))
			first = c->retry_at;
	if (r->retry.fd < 0) {
		if (!first)
			return 0;
		r->retry.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (r->retry.fd < 0)
			return -errno;
		if (rl_watch(r, &r->retry, EPOLLIN) < 0) {
			close(r->retry.fd);
			r->retry.fd = -1;
			return -1;
		}
	}
	/* first == 0 (none waits) disarms; a time already past fires at once. */
	its.it_value.tv_sec = (time_t)(first / 1000000000ULL);
	its.it_value.tv_nsec = (long)(first % 1000000000ULL);
	return timerfd_settime(r->retry.fd, TFD_TIMER_ABSTIME, &its, NULL) < 0 ? -errno : 0;
}

/* The inside port refused c: nothing listens there (yet). A --publish
 * connection still within its deadline drops the inside socket and
 * tries again later; anything else resets the client. */
static void conn_refused(struct ns_relay *r, struct rl_conn *c)
{
	uint64_t now = now_ns(), delay;

	if (!c->publish || now >= c->deadline) {
		conn_reset(r, c);
		return;
	}
	rl_close_watched(r, c->b);
	c->b = -1;
	c->connecting = false;
	c->waiting = true;
	delay = c->tries >= 4 ? RETRY_MAX_NS : RETRY_FIRST_NS << c->tries;
	if (delay > RETRY_MAX_NS)
		delay = RETRY_MAX_NS;
	c->tries++;
	/* The last try is at the deadline itself, so the client is reset no
	 * later than the bound it was given. */
	c->retry_at = now + delay < c->deadline ? now + delay : c->deadline;
	if (retry_arm(r) < 0)
		conn_reset(r, c);
}

void rl_retry_due(struct ns_relay *r)
{
	uint64_t expirations, now = now_ns();
	struct rl_conn *c, *next;

	/* Drained before the scan: a wake-up with nothing due is harmless. */
	if (read(r->retry.fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		return;
	for (c = r->conns; c; c = next) {
		next = c->next;   /* conn_reset unlinks c, never its successor */
		if (!c->waiting || c->retry_at > now)
			continue;
		c->waiting = false;
		c->pending = true;
		if (ask(r, SOCK_STREAM, c->id, &c->unsent) < 0)
			conn_reset(r, c);
	}
	if (retry_arm(r) < 0)
		for (c = r->conns; c; c = next) {
			next = c->next;
			if (c->waiting)
				conn_reset(r, c);
		}
}

/* Moves bytes from -> to through h until one side would block.
 * Returns -1 on a hard error (the connection is dropped). */
static int pump(int from, int to, struct half *h)
{
	const unsigned fl = SPLICE_F_NONBLOCK | SPLICE_F_MOVE;

	for (;;) {
		if (h->queued > 0) {
			ssize_t w = splice(h->pipe[0], NULL, to, NULL, h->queued, fl);
			if (w > 0) {
				h->queued -= (size_t)w;
				continue;
			}
			if (w < 0 && errno == EAGAIN)
				return 0;
			return -1;
		}
		if (h->eof) {
			/* Half-close: the peer sees EOF once all data is through. */
			if (!h->shut && shutdown(to, SHUT_WR) == 0)
				h->shut = true;
			return 0;
		}
		ssize_t n = splice(from, NULL, h->pipe[1], NULL, PIPE_BYTES, fl);
		if (n > 0)
			h->queued += (size_t)n;
		else if (n == 0)
			h->eof = true;
		else
			return errno == EAGAIN ? 0 : -1;
	}
}

/* Where c->b's connect stands: 1 connected, 0 still in progress, or the
 * negative errno it failed with. An event on the client's side can come
 * before the connect is done, and a pending connect has no error yet. */
static int connect_state(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLOUT};
	int e = 0;
	socklen_t el = sizeof(e);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
		return -errno;
	if (e)
		return -e;
	if (poll(&pfd, 1, 0) < 0)
		return -errno;
	return (pfd.revents & POLLOUT) ? 1 : 0;
}

void rl_conn_event(struct ns_relay *r, struct rl_conn *c, uint32_t events)
{
	/* No inside socket (waiting for a retry or for init's reply): the
	 * client's bytes wait in its socket until there is one. */
	if (c->dead || c->b < 0)
		return;
	if (c->connecting) {
		int st = connect_state(c->b);
		if (st == -ECONNREFUSED) {
			conn_refused(r, c);
			return;
		}
		if (st < 0) {
			conn_free(r, c);
			return;
		}
		if (st == 0)
			return;
		c->connecting = false;
	}
	if (pump(c->a, c->b, &c->ab) < 0 || pump(c->b, c->a, &c->ba) < 0) {
		conn_free(r, c);
		return;
	}
	if (c->ab.shut && c->ba.shut)
		conn_free(r, c);
}

/* Starts a non-blocking connect of c->b to sa, then watches both ends. */
static void conn_dial(struct ns_relay *r, struct rl_conn *c, const struct sockaddr *sa, socklen_t len)
{
	if (connect(c->b, sa, len) < 0 && errno != EINPROGRESS) {
		/* Loopback refuses at once, without EINPROGRESS. */
		if (errno == ECONNREFUSED)
			conn_refused(r, c);
		else
			conn_free(r, c);
		return;
	}
	c->connecting = true;
	if (conn_start(r, c) < 0)
		conn_free(r, c);
}

void rl_accept_publish(struct ns_relay *r, struct rl_listener *l)
{
	int a;

	while ((a = accept4(l->ev.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct rl_conn *c = conn_new(r, a);
		if (!c)
			continue;
		c->pending = true;
		c->publish = true;
		c->deadline = now_ns() + (uint64_t)r->p->publish_wait_ms * 1000000ULL;
		c->inside_port = r->p->ports[l->index].sandbox_port;
		/* The inside end must be made by init, inside the netns. */
		if (ask(r, SOCK_STREAM, c->id, &c->unsent) < 0)
			conn_free(r, c);
	}
}

void rl_accept_forward(struct ns_relay *r, struct rl_listener *l)
{
	int a;

	while ((a = accept4(l->ev.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct rl_conn *c = conn_new(r, a);
		if (!c)
			continue;
		c->b = socket(l->target.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c->b < 0) {
			conn_free(r, c);
			continue;
		}
		conn_dial(r, c, (struct sockaddr *)&l->target, l->target_len);
	}
}

/* ---- UDP ---- */
static void flow_on_socket(struct ns_relay *r, uint32_t id, int fd);

static struct rl_peer *peer_find(struct ns_relay *r, struct rl_listener *l,
                                 const struct sockaddr_storage *a, socklen_t alen)
{
	for (struct rl_peer *p = r->peers; p; p = p->next)
		if (p->l == l && p->alen == alen && memcmp(&p->addr, a, alen) == 0)
			return p;
	return NULL;
}

static void peer_free(struct ns_relay *r, struct rl_peer *peer)
{
	for (struct rl_peer **pp = &r->peers; *pp; pp = &(*pp)->next)
		if (*pp == peer) {
			*pp = peer->next;
			break;
		}
	rl_close_watched(r, peer->ev.fd);
	peer->ev.fd = -1;
	free(peer->pend);
	peer->pend = NULL;
	peer->dead = true;
	r->n_peers--;
	peer->next = r->dead_peers;
	r->dead_peers = peer;
}

static struct rl_peer *peer_new(struct ns_relay *r, struct rl_listener *l,
                                const struct sockaddr_storage *a, socklen_t alen)
{
	struct rl_peer *peer, *last = NULL;

	/* Bounded: the oldest peer (list tail) makes room for a new one. */
	if (r->n_peers >= MAX_PEERS) {
		for (last = r->peers; last && last->next; last = last->next)
			;
		if (last)
			peer_free(r, last);
	}
	peer = calloc(1, sizeof(*peer));
	if (!peer)
		return NULL;
	peer->l = l;
	memcpy(&peer->addr, a, alen);
	peer->alen = alen;
	peer->ev = (struct ns_ev){.kind = NS_EV_UDP_PEER, .fd = -1, .owner = peer};
	peer->id = ++r->next_id;
	peer->next = r->peers;
	r->peers = peer;
	r->n_peers++;
	if (ask(r, SOCK_DGRAM, peer->id, &peer->unsent) < 0) {
		peer_free(r, peer);
		return NULL;
	}
	return peer;
}

void rl_udp_from_host(struct ns_relay *r, struct rl_listener *l)
{
	static char buf[UDP_MAX];
	struct sockaddr_storage a;
	socklen_t alen = sizeof(a);
	ssize_t n;

	while ((n = recvfrom(l->ev.fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&a, &alen)) >= 0) {
		struct rl_peer *peer = peer_find(r, l, &a, alen);
		if (!peer)
			peer = peer_new(r, l, &a, alen);
		if (peer && peer->ev.fd >= 0) {
			send(peer->ev.fd, buf, (size_t)n, MSG_DONTWAIT);
		} else if (peer && !peer->pend && (peer->pend = malloc((size_t)n + 1))) {
			memcpy(peer->pend, buf, (size_t)n);
			peer->pend_len = (size_t)n;
		}
		alen = sizeof(a);
	}
}

void rl_udp_from_inside(struct ns_relay *r, struct rl_peer *peer)
{
	static char buf[UDP_MAX];
	ssize_t n;

	if (peer->dead)
		return;
	while ((n = recv(peer->ev.fd, buf, sizeof(buf), MSG_DONTWAIT)) >= 0)
		sendto(peer->l->ev.fd, buf, (size_t)n, MSG_DONTWAIT, (struct sockaddr *)&peer->addr,
		       peer->alen);
}

static void peer_ready(struct ns_relay *r, struct rl_peer *peer, int fd)
{
	struct sockaddr_in sa;

	inside_addr(&sa, r->p->ports[peer->l->index].sandbox_port);
	peer->ev.fd = fd;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || rl_watch(r, &peer->ev, EPOLLIN) < 0) {
		peer_free(r, peer);
		return;
	}
	if (peer->pend)
		send(fd, peer->pend, peer->pend_len, MSG_DONTWAIT);
	free(peer->pend);
	peer->pend = NULL;
}

static void flow_on_socket(struct ns_relay *r, uint32_t id, int fd)
{
	struct sockaddr_in sa;

	for (struct rl_conn *c = r->conns; c; c = c->next) {
		if (c->id != id || !c->pending)
			continue;
		c->pending = false;
		if (fd < 0) {
			conn_free(r, c);
			return;
		}
		c->b = fd;
		inside_addr(&sa, c->inside_port);
		conn_dial(r, c, (struct sockaddr *)&sa, sizeof(sa));
		return;
	}
	for (struct rl_peer *p = r->peers; p; p = p->next)
		if (p->id == id && p->ev.fd < 0) {
			if (fd < 0)
				peer_free(r, p);
			else
				peer_ready(r, p, fd);
			return;
		}
	if (fd >= 0)
		close(fd);   /* its flow is gone already */
}

void rl_flows_close(struct ns_relay *r)
{
	while (r->conns)
		conn_free(r, r->conns);
	while (r->peers)
		peer_free(r, r->peers);
}

void rl_flows_reap(struct ns_relay *r)
{
	while (r->dead_conns) {
		struct rl_conn *c = r->dead_conns;
		r->dead_conns = c->next;
		free(c);
	}
	while (r->dead_peers) {
		struct rl_peer *p = r->dead_peers;
		r->dead_peers = p->next;
		free(p);
	}
}

void rl_flow_on_socket(struct ns_relay *r, uint32_t id, int fd)
{
	flow_on_socket(r, id, fd);
	flush_unsent(r);
}
