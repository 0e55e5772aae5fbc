/* Messages on the sync socket between cloister (parent) and the sandbox's
 * init and command: setup failures as (step, errno, message), exec failures,
 * the command's wait status, and the parent's "go". */
#ifndef NS_SYNC_H
#define NS_SYNC_H

#include <stdint.h>

#include "src/error.h"

enum ns_msg_type {
	NS_MSG_SETUP_ERROR = 1,  /* init could not build the sandbox */
	NS_MSG_EXEC_ERROR,       /* command could not be executed */
	NS_MSG_EXIT,             /* command's wait status (init is about to exit) */
	NS_MSG_GO,               /* parent -> child: cgroup placement done */
	NS_MSG_READY,            /* child -> parent: setup done, about to exec */
};

struct ns_msg {
	uint32_t type;
	int32_t errnum;
	int32_t status;
	char step[48];
	char text[CL_ERROR_MSG_MAX];
};

/* Both are async-signal-safe (used between fork and exec). */
int ns_msg_send(int fd, uint32_t type, int errnum, int status, const char *step,
                const char *text);
/* Receives one message; the child side is less trusted, so every field is
 * bounds-checked and NUL-terminated. Returns 1, 0 on EOF, or -errno. */
int ns_msg_recv(int fd, struct ns_msg *m);

#endif
