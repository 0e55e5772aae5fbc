/* The session control protocol: one SOCK_SEQPACKET message per request
 * (NUL-separated tokens, fds by SCM_RIGHTS) and one fixed-size reply. The
 * peer is only ever the session's own user, but requests are still parsed
 * as hostile input: bounded, NUL-terminated, a fixed set of operations. */
#ifndef SS_PROTO_H
#define SS_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/util/error.h"

#define SS_REQ_MAX (256 * 1024)   /* bytes of one request */
#define SS_MAX_FDS 3
#define SS_MAX_ITEMS 4096         /* args or env entries of one exec */

enum ss_op { SS_OP_EXEC = 1, SS_OP_PUT, SS_OP_GET, SS_OP_STOP, SS_OP_PING, SS_OP_SNAP };

/* A parsed request. Strings point into the request buffer. */
struct ss_req {
	enum ss_op op;
	uint64_t timeout_ms;      /* exec: 0 = none */
	const char *workdir;      /* exec: NULL = the session's */
	unsigned pty_mask;        /* exec: bit n: fd n becomes a pty of the session's own */
	unsigned short rows, cols;  /* exec: that pty's window size (0 0: unset) */
	const char *path;         /* put/get: absolute path inside */
	const char *name;         /* put: file name used when path is a directory */
	unsigned mode;            /* put: permission bits of a new file */
	bool mkdirs;              /* put: create missing parent directories (0755) */
	bool tree;                /* put/get: a directory tree, as a src/session/tree.h stream */
	const char *snap_id;      /* snap: the snapshot id asked for, NULL = a new one */
	const char *env[SS_MAX_ITEMS + 1];
	size_t n_env;
	const char *argv[SS_MAX_ITEMS + 1];
	size_t n_argv;
	int fds[SS_MAX_FDS];
	size_t n_fds;
};

/* One reply per request. code: the command's exit code (exec), 0 for
 * success, 125 (or 126/127 for exec) with msg saying why. */
struct ss_reply {
	uint32_t magic;
	int32_t code;
	uint32_t flags;
	char msg[480];
	uint32_t pad;
	int64_t memory_peak;      /* exec: bytes (cg_window_end), -1 unknown */
};
#define SS_REPLY_MAGIC 0x436c5331u   /* "ClS1" */
#define SS_RF_TIMED_OUT 1u
/* Not the reply but a message before it: the master of the command's pty
 * (one fd), for an exec that asked for one. */
#define SS_RF_PTY 2u
/* exec: the session's OOM killer killed something while it ran. */
#define SS_RF_OOM 4u
/* snap: the session had no cgroup that could be frozen: it ran on while
 * its workspace was copied. */
#define SS_RF_UNPAUSED 8u
/* flags >> 8: the signal that killed the command, 0 if none */

/* Parses buf (len bytes as received) with n_fds fds; fills r (r->fds are
 * copied, still owned by the caller). 0, or negative with err naming the
 * fault. */
int ss_req_parse(char *buf, size_t len, const int *fds, size_t n_fds, struct ss_req *r,
                 cl_error *err);

/* Request building on the client side: a growing token buffer. */
struct ss_buf {
	char *data;
	size_t len, cap;
	bool oom;
};
/* Appends tag+value as one token; tag 0: the untagged operation name. */
void ss_buf_add(struct ss_buf *b, char tag, const char *value);
void ss_buf_free(struct ss_buf *b);

/* Sends a whole message with fds attached. 0 or -errno. */
int ss_send(int sock, const void *buf, size_t len, const int *fds, size_t n_fds);
/* Receives one message into buf (cap bytes) and up to SS_MAX_FDS fds
 * (close-on-exec). A truncated message or fd list closes what came and
 * fails with -EMSGSIZE. Returns the length, 0 on EOF, or -errno. */
ssize_t ss_recv(int sock, char *buf, size_t cap, int *fds, size_t *n_fds);
void ss_reply_send(int sock, int code, unsigned flags, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The same with an exec's memory peak (bytes, -1 unknown). */
void ss_reply_send_peak(int sock, int code, unsigned flags, int64_t peak, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#endif
