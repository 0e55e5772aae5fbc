/* Session control messages: building and sending requests, receiving and
 * strictly parsing them, fixed-size replies. */
#define _GNU_SOURCE
#include "src/session/proto.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "src/policy/parse.h"
#include "src/workspace/snapshot.h"

void ss_buf_add(struct ss_buf *b, char tag, const char *value)
{
	size_t n = strlen(value) + (tag ? 2 : 1);   /* [tag] value NUL */

	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = (b->cap ? b->cap : 256);
		char *d;
		while (cap < b->len + n)
			cap *= 2;
		d = realloc(b->data, cap);
		if (!d) {
			b->oom = true;
			return;
		}
		b->data = d;
		b->cap = cap;
	}
	if (tag)
		b->data[b->len++] = tag;
	memcpy(b->data + b->len, value, strlen(value) + 1);
	b->len += strlen(value) + 1;
}

void ss_buf_free(struct ss_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

int ss_send(int sock, const void *buf, size_t len, const int *fds, size_t n_fds)
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int) * SS_MAX_FDS)];
	} ctl;
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (n_fds > SS_MAX_FDS)
		return -EINVAL;
	if (n_fds) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.space;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		ctl.h.cmsg_level = SOL_SOCKET;
		ctl.h.cmsg_type = SCM_RIGHTS;
		ctl.h.cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(&ctl.h), fds, sizeof(int) * n_fds);
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* Takes the fds of every SCM_RIGHTS block; any beyond the first
 * SS_MAX_FDS, and any other control message, mark the message bad. */
static bool take_fds(struct msghdr *msg, int *fds, size_t *n_fds)
{
	bool ok = !(msg->msg_flags & (MSG_CTRUNC | MSG_TRUNC));

	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		size_t n;
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0)) {
			ok = false;
			continue;
		}
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*n_fds < SS_MAX_FDS)
				fds[(*n_fds)++] = fd;
			else {
				close(fd);
				ok = false;
			}
		}
	}
	return ok;
}

ssize_t ss_recv(int sock, char *buf, size_t cap, int *fds, size_t *n_fds)
{
	union {
		struct cmsghdr h;
		/* room for more than we accept, so an excess is seen and closed */
		char space[CMSG_SPACE(sizeof(int) * 16)];
	} ctl;
	struct iovec iov = {.iov_base = buf, .iov_len = cap};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.space,
	                     .msg_controllen = sizeof(ctl.space)};
	ssize_t n;

	*n_fds = 0;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (!take_fds(&msg, fds, n_fds)) {
		for (size_t i = 0; i < *n_fds; i++)
			close(fds[i]);
		*n_fds = 0;
		return -EMSGSIZE;
	}
	return n;
}

static void reply_v(int sock, int code, unsigned flags, int64_t peak, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

static void reply_v(int sock, int code, unsigned flags, int64_t peak, const char *fmt, va_list ap)
{
	struct ss_reply r = {.magic = SS_REPLY_MAGIC, .code = code, .flags = flags,
	                     .memory_peak = peak};

	vsnprintf(r.msg, sizeof(r.msg), fmt, ap);
	ss_send(sock, &r, sizeof(r), NULL, 0);
}

void ss_reply_send(int sock, int code, unsigned flags, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	reply_v(sock, code, flags, -1, fmt, ap);
	va_end(ap);
}

void ss_reply_send_peak(int sock, int code, unsigned flags, int64_t peak, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	reply_v(sock, code, flags, peak, fmt, ap);
	va_end(ap);
}

static int op_of(const char *s, enum ss_op *op)
{
	static const struct { const char *name; enum ss_op op; } ops[] = {
		{"exec", SS_OP_EXEC}, {"put", SS_OP_PUT}, {"get", SS_OP_GET},
		{"stop", SS_OP_STOP}, {"ping", SS_OP_PING}, {"snap", SS_OP_SNAP},
	};

	for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++)
		if (strcmp(s, ops[i].name) == 0) {
			*op = ops[i].op;
			return 0;
		}
	return -1;
}

/* The fds each operation takes: exec stdin/stdout/stderr, put the source,
 * get the destination. */
static size_t fds_wanted(enum ss_op op)
{
	return op == SS_OP_EXEC ? 3 : op == SS_OP_PUT || op == SS_OP_GET ? 1 : 0;
}

/* "ROWSxCOLS", each 0..65535 in plain decimal. */
static int parse_size(const char *v, unsigned short *rows, unsigned short *cols)
{
	char num[8];
	size_t n = strcspn(v, "x");
	uint64_t r, c;

	if (v[n] != 'x' || n == 0 || n >= sizeof(num))
		return -1;
	memcpy(num, v, n);
	num[n] = '\0';
	if (cl_parse_u64(num, 0, 65535, &r) < 0 || cl_parse_u64(v + n + 1, 0, 65535, &c) < 0)
		return -1;
	*rows = (unsigned short)r;
	*cols = (unsigned short)c;
	return 0;
}

static int token(struct ss_req *r, char tag, const char *v, cl_error *err)
{
	uint64_t n;

	switch (tag) {
	case 'T':
		if (r->op != SS_OP_EXEC || cl_parse_u64(v, 1, 1000ULL * 86400 * 365, &n) < 0)
			return cl_fail(err, 0, "bad timeout in request");
		r->timeout_ms = n;
		return 0;
	case 'W':
		if (r->op != SS_OP_EXEC || v[0] != '/')
			return cl_fail(err, 0, "bad working directory in request (absolute path expected)");
		r->workdir = v;
		return 0;
	case 'C':   /* which stdio fds get a pty: one digit, bit n for fd n */
		if (r->op != SS_OP_EXEC || strlen(v) != 1 || v[0] < '1' || v[0] > '7')
			return cl_fail(err, 0, "bad terminal mask in request");
		r->pty_mask = (unsigned)(v[0] - '0');
		return 0;
	case 'Z':   /* ROWSxCOLS */
		if (r->op != SS_OP_EXEC || parse_size(v, &r->rows, &r->cols) < 0)
			return cl_fail(err, 0, "bad window size in request");
		return 0;
	case 'E':
		if (r->op != SS_OP_EXEC || r->n_env >= SS_MAX_ITEMS || !strchr(v, '=') || v[0] == '=')
			return cl_fail(err, 0, "bad environment entry in request (K=V expected)");
		r->env[r->n_env++] = v;
		return 0;
	case 'A':
		if (r->op != SS_OP_EXEC || r->n_argv >= SS_MAX_ITEMS)
			return cl_fail(err, 0, "bad or too many arguments in request");
		r->argv[r->n_argv++] = v;
		return 0;
	case 'P':
		if ((r->op != SS_OP_PUT && r->op != SS_OP_GET) || v[0] != '/' || r->path)
			return cl_fail(err, 0, "bad path in request (one absolute path expected)");
		r->path = v;
		return 0;
	case 'N':
		if (r->op != SS_OP_PUT || !v[0] || strchr(v, '/') || !strcmp(v, ".") || !strcmp(v, ".."))
			return cl_fail(err, 0, "bad file name in request");
		r->name = v;
		return 0;
	case 'D':
		if (r->op != SS_OP_PUT || strcmp(v, "1") != 0)
			return cl_fail(err, 0, "bad mkdir flag in request");
		r->mkdirs = true;
		return 0;
	case 'R':
		if ((r->op != SS_OP_PUT && r->op != SS_OP_GET) || strcmp(v, "1") != 0)
			return cl_fail(err, 0, "bad tree flag in request");
		r->tree = true;
		return 0;
	case 'M':   /* octal, at most 4 digits */
		if (r->op != SS_OP_PUT || !v[0] || strlen(v) > 4 || strspn(v, "01234567") != strlen(v))
			return cl_fail(err, 0, "bad file mode in request");
		r->mode = (unsigned)strtoul(v, NULL, 8);
		return 0;
	case 'I':   /* snap: the id, by the snapshot store's own rule */
		if (r->op != SS_OP_SNAP || r->snap_id || !ws_snap_id_ok(v))
			return cl_fail(err, 0, "bad snapshot id in request");
		r->snap_id = v;
		return 0;
	default:
		return cl_fail(err, 0, "unknown field in request");
	}
}

int ss_req_parse(char *buf, size_t len, const int *fds, size_t n_fds, struct ss_req *r,
                 cl_error *err)
{
	size_t off;

	memset(r, 0, sizeof(*r));
	r->mode = 0644;
	if (len == 0 || len > SS_REQ_MAX || buf[len - 1] != '\0')
		return cl_fail(err, 0, "malformed request (empty, too long or not NUL-terminated)");
	if (op_of(buf, &r->op) < 0)
		return cl_fail(err, 0, "unknown request");
	for (off = strlen(buf) + 1; off < len; off += strlen(buf + off) + 1)
		if (token(r, buf[off], buf + off + 1, err) < 0)
			return -1;
	if (n_fds != fds_wanted(r->op))
		return cl_fail(err, 0, "request carries %zu fds, expected %zu", n_fds, fds_wanted(r->op));
	if (r->op == SS_OP_EXEC && r->n_argv == 0)
		return cl_fail(err, 0, "exec request without a command");
	if ((r->op == SS_OP_PUT || r->op == SS_OP_GET) && !r->path)
		return cl_fail(err, 0, "copy request without a path");
	memcpy(r->fds, fds, n_fds * sizeof(int));
	r->n_fds = n_fds;
	return 0;
}
