/* Value parsers for the command line and spec files. Every parser rejects
 * empty strings, signs, whitespace and trailing junk. */
#include "src/policy/parse.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "src/policy/policy.h"

static bool all_digits(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* Parses n digits into *out, failing on overflow. */
static int digits_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (!all_digits(s, n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int cl_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;
	int rc;

	if (!s)
		return -EINVAL;
	rc = digits_u64(s, strlen(s), &v);
	if (rc < 0)
		return rc;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int cl_parse_size(const char *s, uint64_t *out)
{
	size_t n = s ? strlen(s) : 0;
	unsigned shift = 0;
	uint64_t v;
	int rc;

	if (n == 0)
		return -EINVAL;
	switch (s[n - 1]) {
	case 'b': case 'B': shift = 0; n--; break;
	case 'k': case 'K': shift = 10; n--; break;
	case 'm': case 'M': shift = 20; n--; break;
	case 'g': case 'G': shift = 30; n--; break;
	default: break;
	}
	if (n == 0 || s[0] == '0')
		return -EINVAL;
	rc = digits_u64(s, n, &v);
	if (rc < 0)
		return rc;
	if (v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

/* Parses "I", "I.F" or ".F" into a value scaled by 10^6 (micro-units). */
static int parse_decimal_micro(const char *s, uint64_t *out)
{
	const char *dot = strchr(s, '.');
	size_t ilen = dot ? (size_t)(dot - s) : strlen(s);
	uint64_t ip = 0, fp = 0, scale = 100000;

	if (ilen > 0 && digits_u64(s, ilen, &ip) < 0)
		return -EINVAL;
	if (ilen > 1 && s[0] == '0')
		return -EINVAL;
	if (dot) {
		const char *f = dot + 1;
		size_t flen = strlen(f);
		if (!all_digits(f, flen))
			return -EINVAL;
		for (size_t i = 0; i < flen && scale > 0; i++, scale /= 10)
			fp += (uint64_t)(f[i] - '0') * scale;
	} else if (ilen == 0) {
		return -EINVAL;
	}
	if (ip > UINT64_MAX / 1000000 - 1)
		return -ERANGE;
	*out = ip * 1000000 + fp;
	return 0;
}

int cl_parse_cpus(const char *s, uint64_t *quota_us, uint64_t *period_us)
{
	const uint64_t period = 100000;
	uint64_t micro;

	if (!s || !*s)
		return -EINVAL;
	if (parse_decimal_micro(s, &micro) < 0)
		return -EINVAL;
	/* Whole cpus must not start with 0 ("01"); "0.5" and ".5" are fine. */
	if (s[0] == '0' && s[1] != '.')
		return -EINVAL;
	if (micro == 0)
		return -ERANGE;
	/* quota = cpus * period; the kernel's minimum quota is 1000 us. */
	*quota_us = micro * period / 1000000;
	if (*quota_us < 1000)
		return -ERANGE;
	*period_us = period;
	return 0;
}

int cl_parse_seconds(const char *s, uint64_t *ms)
{
	uint64_t micro;

	if (!s || !*s || parse_decimal_micro(s, &micro) < 0)
		return -EINVAL;
	if (micro / 1000 == 0)
		return -ERANGE;
	*ms = micro / 1000;
	return 0;
}

int cl_parse_port(const char *s, uint16_t *out)
{
	uint64_t v;
	int rc = cl_parse_u64(s, 1, 65535, &v);

	if (rc == 0)
		*out = (uint16_t)v;
	return rc;
}

int cl_format_idmap(char *buf, size_t len, unsigned inside, unsigned outside)
{
	int n = snprintf(buf, len, "%u %u 1\n", inside, outside);

	return (n < 0 || (size_t)n >= len) ? -1 : n;
}

int cl_exit_code_of_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 125;
}

int cl_exit_code_of_exec_errno(int errnum)
{
	return (errnum == ENOENT || errnum == ENOTDIR) ? 127 : 126;
}

/* Splits off the last ":"-separated field (the port); the rest is returned
 * in head with [v6] brackets removed. */
static int split_host_port(const char *s, char *head, size_t hlen, uint16_t *port)
{
	const char *colon = strrchr(s, ':');
	size_t n;

	if (!colon || cl_parse_port(colon + 1, port) < 0)
		return -EINVAL;
	n = (size_t)(colon - s);
	if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	if (n == 0 || n >= hlen || memchr(s, '[', n) || memchr(s, ']', n))
		return -EINVAL;
	memcpy(head, s, n);
	head[n] = '\0';
	return 0;
}

int cl_parse_publish(const char *s, struct cl_port *out)
{
	char buf[128], host[64];
	const char *slash;
	char *colon;
	size_t n;

	memset(out, 0, sizeof(*out));
	slash = strrchr(s, '/');
	n = slash ? (size_t)(slash - s) : strlen(s);
	if (slash && strcmp(slash, "/udp") == 0)
		out->udp = true;
	else if (slash && strcmp(slash, "/tcp") != 0)
		return -EINVAL;
	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	colon = strrchr(buf, ':');
	if (!colon || cl_parse_port(colon + 1, &out->sandbox_port) < 0)
		return -EINVAL;
	*colon = '\0';
	if (!strchr(buf, ':') || (buf[0] == '[' && buf[strlen(buf) - 1] == ']' && !strstr(buf, "]:"))) {
		/* "HOST_PORT" alone: default host address. */
		if (cl_parse_port(buf, &out->host_port) < 0)
			return -EINVAL;
		snprintf(out->host_ip, sizeof(out->host_ip), "127.0.0.1");
		return 0;
	}
	if (split_host_port(buf, host, sizeof(host), &out->host_port) < 0)
		return -EINVAL;
	snprintf(out->host_ip, sizeof(out->host_ip), "%s", host);
	return 0;
}

int cl_parse_forward(const char *s, struct cl_forward *out)
{
	const char *colon = strchr(s, ':');
	char port[8];
	size_t n;

	memset(out, 0, sizeof(*out));
	n = colon ? (size_t)(colon - s) : 0;
	if (n == 0 || n >= sizeof(port))
		return -EINVAL;
	memcpy(port, s, n);
	port[n] = '\0';
	if (cl_parse_port(port, &out->sandbox_port) < 0)
		return -EINVAL;
	return split_host_port(colon + 1, out->host, sizeof(out->host), &out->host_port);
}
