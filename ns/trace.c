/* CLOISTER_TRACE stamps: one line per launch step on stderr, formatted by
 * hand so they are safe in the cloned child and the pre-exec command. */
#include "ns/trace.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

bool ns_trace_enabled(void)
{
	const char *v = getenv("CLOISTER_TRACE");

	return v && *v && strcmp(v, "0") != 0;
}

static size_t put_str(char *buf, size_t at, size_t cap, const char *s)
{
	while (*s && at < cap)
		buf[at++] = *s++;
	return at;
}

static size_t put_u64(char *buf, size_t at, size_t cap, unsigned long long v)
{
	char digits[20];
	size_t n = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < sizeof(digits));
	while (n > 0 && at < cap)
		buf[at++] = digits[--n];
	return at;
}

void ns_trace_stamp(const char *who, const char *step)
{
	char buf[192];
	struct timespec ts;
	size_t at = 0, cap = sizeof(buf) - 1;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	at = put_str(buf, at, cap, "cloister-trace: ");
	at = put_u64(buf, at, cap, (unsigned long long)ts.tv_sec * 1000000000ULL +
	                           (unsigned long long)ts.tv_nsec);
	at = put_str(buf, at, cap, " ");
	at = put_str(buf, at, cap, who);
	at = put_str(buf, at, cap, " ");
	at = put_str(buf, at, cap, step);
	buf[at++] = '\n';
	/* One write() per line so concurrent stamps from the parent, init and
	 * the command do not interleave mid-line. Best effort by design. */
	if (write(STDERR_FILENO, buf, at) < 0)
		return;
}
