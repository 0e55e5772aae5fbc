/* The client side of the control socket: connect to a session by id or
 * name and run one request to its reply. */
#ifndef SS_CLIENT_H
#define SS_CLIENT_H

#include "src/session/proto.h"
#include "src/session/rundir.h"

/* Connects to the session named key; fills in (may be NULL). fd or -1 with err. */
int ss_connect(const char *key, struct ss_info *in, cl_error *err);
/* The two halves of ss_call: sending the request in b with fds (0, or
 * -1 with err), and waiting for its reply (blocking). */
int ss_request(int sock, const struct ss_buf *b, const int *fds, size_t n_fds, cl_error *err);
int ss_reply_read(int sock, struct ss_reply *rep, cl_error *err);
/* Sends the request in b with fds and waits for the reply. 0, or -1 with
 * err (the session ended or answered garbage). */
int ss_call(int sock, const struct ss_buf *b, const int *fds, size_t n_fds,
            struct ss_reply *rep, cl_error *err);

#endif
