/* HTTP/1.1 over AF_UNIX for the Engine API. Connection: close on every
 * request, so a response ends at EOF; chunked bodies are decoded. The
 * daemon is trusted to run containers, not to be well-formed: every
 * length is bounded. */
#define _GNU_SOURCE
#include "src/executors/uhttp.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "src/util/fdio.h"

#define UH_MAX_RESPONSE (16u << 20)
#define UH_MAX_HEADERS 16384

int uh_connect(const char *sock, cl_error *err)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(sock) >= sizeof(a.sun_path))
		return cl_fail(err, ENAMETOOLONG, "docker socket path %s", sock);
	memcpy(a.sun_path, sock, strlen(sock) + 1);   /* length checked above */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return cl_fail_errno(err, "creating a socket for %s", sock);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		close(fd);
		return cl_fail(err, e, "connecting to the docker daemon at %s", sock);
	}
	return fd;
}

static void set_timeout(int fd, int ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};

	if (ms <= 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int send_request(int fd, const char *method, const char *path, const char *json,
                        const char *extra, cl_error *err)
{
	size_t blen = json ? strlen(json) : 0;
	char *head = NULL;
	int n = asprintf(&head, "%s %s HTTP/1.1\r\nHost: docker\r\nUser-Agent: cloister\r\n"
	                 "%s%s%sContent-Length: %zu\r\n\r\n", method, path, extra,
	                 json ? "Content-Type: application/json" : "", json ? "\r\n" : "", blen);
	int rc;

	if (n < 0)
		return cl_fail(err, ENOMEM, "formatting a docker request");
	rc = cl_write_all(fd, head, (size_t)n);
	free(head);
	if (rc == 0 && blen)
		rc = cl_write_all(fd, json, blen);
	return rc < 0 ? cl_fail(err, -rc, "sending %s %s to the docker daemon", method, path) : 0;
}

static int read_all(int fd, char **out, size_t *len, cl_error *err)
{
	size_t cap = 8192, n = 0;
	char *buf = malloc(cap + 1);
	ssize_t r;

	if (!buf)
		return cl_fail(err, ENOMEM, "reading the docker response");
	while ((r = read(fd, buf + n, cap - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno == EAGAIN ? ETIMEDOUT : errno;
			free(buf);
			return cl_fail(err, e, "reading the docker response");
		}
		n += (size_t)r;
		if (n == cap) {
			char *nb = cap >= UH_MAX_RESPONSE ? NULL : realloc(buf, cap * 2 + 1);
			if (!nb) {
				free(buf);
				return cl_fail(err, EMSGSIZE, "reading the docker response");
			}
			buf = nb;
			cap *= 2;
		}
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* Decodes a chunked body in place; -1 if malformed. */
static ssize_t dechunk(char *b, size_t len)
{
	size_t in = 0, out = 0;

	while (in < len) {
		char *end;
		unsigned long sz = strtoul(b + in, &end, 16);
		char *eol = memmem(b + in, len - in, "\r\n", 2);

		if (!eol || end == b + in)
			return -1;
		in = (size_t)(eol - b) + 2;
		if (sz == 0)
			break;
		if (sz > len - in)
			return -1;
		memmove(b + out, b + in, sz);
		out += sz;
		in += sz + 2;
	}
	b[out] = '\0';
	return (ssize_t)out;
}

static bool has_header(const char *head, size_t hlen, const char *name, const char *value)
{
	size_t nl = strlen(name);

	for (const char *l = head; l && l < head + hlen; l = strstr(l, "\r\n") ? strstr(l, "\r\n") + 2 : NULL) {
		if (strncasecmp(l, name, nl) == 0 && l[nl] == ':') {
			const char *v = l + nl + 1;
			while (*v == ' ')
				v++;
			return strncasecmp(v, value, strlen(value)) == 0;
		}
	}
	return false;
}

/* The status code of an HTTP/1.x status line, or -1. */
static int status_of(const char *line)
{
	char *end;
	long v;

	if (strncmp(line, "HTTP/1.", 7) || line[7] < '0' || line[7] > '9' || line[8] != ' ')
		return -1;
	errno = 0;
	v = strtol(line + 9, &end, 10);
	return !errno && end == line + 12 && v >= 100 && v <= 599 ? (int)v : -1;
}

static int parse_response(char *buf, size_t n, struct uh_resp *r, cl_error *err)
{
	char *sep = memmem(buf, n, "\r\n\r\n", 4);
	size_t hlen, blen;

	if (!sep || (r->status = status_of(buf)) < 0)
		return cl_fail(err, EPROTO, "reading the docker response: not HTTP");
	hlen = (size_t)(sep - buf);
	blen = n - hlen - 4;
	memmove(buf, sep + 4, blen);
	buf[blen] = '\0';
	r->body = buf;
	r->len = blen;
	return (int)hlen;
}

int uh_request(const char *sock, const char *method, const char *path, const char *json,
               int timeout_ms, struct uh_resp *r, cl_error *err)
{
	char *buf = NULL;
	size_t n = 0;
	int fd, rc;
	bool chunked;

	memset(r, 0, sizeof(*r));
	fd = uh_connect(sock, err);
	if (fd < 0)
		return fd;
	set_timeout(fd, timeout_ms);
	rc = send_request(fd, method, path, json, "Connection: close\r\n", err);
	if (rc == 0)
		rc = read_all(fd, &buf, &n, err);
	close(fd);
	if (rc < 0)
		return rc;
	{
		char *sep = memmem(buf, n, "\r\n\r\n", 4);
		chunked = sep && has_header(buf, (size_t)(sep - buf), "Transfer-Encoding", "chunked");
	}
	rc = parse_response(buf, n, r, err);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	if (chunked) {
		ssize_t d = dechunk(r->body, r->len);
		if (d >= 0) {
			r->len = (size_t)d;
			return 0;
		}
		free(buf);
		memset(r, 0, sizeof(*r));
		return cl_fail(err, EPROTO, "reading the docker response: bad chunked body");
	}
	return 0;
}

/* Headers are read a byte at a time: the stream that follows them must
 * stay in the socket for the caller. */
int uh_hijack(const char *sock, const char *path, cl_error *err)
{
	char head[UH_MAX_HEADERS];
	size_t n = 0;
	int fd = uh_connect(sock, err), status = 0;

	if (fd < 0)
		return fd;
	if (send_request(fd, "POST", path, NULL, "Connection: Upgrade\r\nUpgrade: tcp\r\n", err) < 0) {
		close(fd);
		return cl_error_code(err);
	}
	while (n < sizeof(head) - 1) {
		ssize_t r = read(fd, head + n, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n++;
		if (n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	head[n] = '\0';
	status = status_of(head);
	if (status != 101 && status != 200) {
		close(fd);
		return cl_fail(err, EPROTO, "attaching to the container: the daemon answered %.80s",
		               status > 0 ? strchr(head, ' ') + 1 : n ? head : "nothing");
	}
	return fd;
}

void uh_resp_free(struct uh_resp *r)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
}
