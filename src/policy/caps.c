/* Capability names to bits with libcap, for the front-ends and the seccomp
 * profile's conditions (parent side; native builds only: libcap). */
#define _GNU_SOURCE
#include "src/policy/caps.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>

unsigned cl_caps_last(void)
{
	int n = cap_max_bits();

	return n > 0 ? (unsigned)n - 1 : CAP_LAST_CAP;
}

int cl_caps_parse(const char *name, uint64_t *mask)
{
	char buf[64];
	cap_value_t v;
	size_t n = strlen(name);

	if (strcasecmp(name, "ALL") == 0) {
		unsigned last = cl_caps_last();
		*mask = last >= 63 ? UINT64_MAX : ((1ULL << (last + 1)) - 1);
		return 0;
	}
	if (n + 5 >= sizeof(buf))
		return -EINVAL;
	/* libcap names are lower case without the "cap_" prefix optional. */
	if (strncasecmp(name, "cap_", 4) == 0)
		name += 4;
	snprintf(buf, sizeof(buf), "cap_%s", name);
	for (char *c = buf; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	if (cap_from_name(buf, &v) < 0 || v < 0 || v > 63 || (unsigned)v > cl_caps_last())
		return -EINVAL;
	*mask = 1ULL << v;
	return 0;
}
