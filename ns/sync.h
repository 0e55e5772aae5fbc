/* Messages on the sync socket between cloister (parent) and the sandbox's
 * init and command: setup failures as (step, errno, message), exec failures,
 * the command's wait status, and the parent's "go". */
#ifndef NS_SYNC_H
#define NS_SYNC_H

#include <stdint.h>
#include <sys/types.h>

#include "src/util/error.h"

enum ns_msg_type {
	NS_MSG_SETUP_ERROR = 1,  /* init could not build the sandbox */
	NS_MSG_EXEC_ERROR,       /* command could not be executed */
	NS_MSG_EXIT,             /* command's wait status (init is about to exit) */
	NS_MSG_GO,               /* parent -> child: cgroup placement done */
	NS_MSG_READY,            /* child -> parent: setup done, about to exec */
	NS_MSG_SOCKET_REQ,       /* parent -> init: a socket in the sandbox netns
	                          * (status = SOCK_STREAM/SOCK_DGRAM, id = request) */
	NS_MSG_SOCKET,           /* init -> parent: that socket (fd attached),
	                          * id = request, errnum = error if none */
	NS_MSG_LISTENER,         /* child -> parent: forward-out listener (fd
	                          * attached), status = forward index */
	NS_MSG_PTY,              /* child -> parent: the command's pty master
	                          * (fd attached), ns/pty.c */
	NS_MSG_MAPS,             /* parent -> child: id maps written (ns/idmap.c) */
	NS_MSG_NSFD,             /* session init -> parent: one of its namespaces
	                          * (fd attached), id = NS_SESS_* index */
};

struct ns_msg {
	uint32_t type;
	uint32_t id;             /* socket request/reply pairing; any value */
	int32_t errnum;          /* clamped to 0..4095 on receipt */
	int32_t status;
	char step[48];
	char text[CL_ERROR_MSG_MAX];
};

/* Both are async-signal-safe (used between fork and exec). */
int ns_msg_send(int fd, uint32_t type, int errnum, int status, const char *step,
                const char *text);
/* Sends a message with fd attached (SCM_RIGHTS); fd < 0 sends none. */
int ns_msg_send_fd(int fd, uint32_t type, uint32_t id, int errnum, int status, int passfd);
/* Receives one message; the child side is less trusted, so every field is
 * bounds-checked and NUL-terminated. Returns 1, 0 on EOF, or -errno. */
int ns_msg_recv(int fd, struct ns_msg *m);
/* Like ns_msg_recv, also returning an attached fd in *passfd (or -1). Any
 * extra fds are closed. */
int ns_msg_recv_fd(int fd, struct ns_msg *m, int *passfd);
/* Like ns_msg_recv_fd, also returning the sender's pid as the kernel
 * stamped it (SCM_CREDENTIALS; fd needs SO_PASSCRED set before anything
 * was sent), or 0 when the message carries none. The parent accepts
 * messages only from init's pid: the command may hold a copy of init's
 * socket (a dumpable init, bwrap mode) but cannot send as init. */
int ns_msg_recv_from(int fd, struct ns_msg *m, int *passfd, pid_t *from);

#endif
