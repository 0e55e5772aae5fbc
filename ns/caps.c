/* Dropping capabilities with libcap. Order matters: the bounding set can only
 * shrink while CAP_SETPCAP is still effective, so it goes first. */
#define _GNU_SOURCE
#include "ns/caps.h"

#include <ctype.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>
#include <sys/prctl.h>

unsigned ns_caps_last(void)
{
	int n = cap_max_bits();

	return n > 0 ? (unsigned)n - 1 : CAP_LAST_CAP;
}

int ns_caps_parse(const char *name, uint64_t *mask)
{
	char buf[64];
	cap_value_t v;
	size_t n = strlen(name);

	if (strcasecmp(name, "ALL") == 0) {
		unsigned last = ns_caps_last();
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
	if (cap_from_name(buf, &v) < 0 || v < 0 || v > 63 || (unsigned)v > ns_caps_last())
		return -EINVAL;
	*mask = 1ULL << v;
	return 0;
}

static int set_flags(cap_t caps, uint64_t keep, cl_error *err)
{
	for (cap_value_t v = 0; (unsigned)v <= ns_caps_last() && v < 64; v++) {
		if (!(keep & (1ULL << v)))
			continue;
		if (cap_set_flag(caps, CAP_PERMITTED, 1, &v, CAP_SET) < 0 ||
		    cap_set_flag(caps, CAP_EFFECTIVE, 1, &v, CAP_SET) < 0 ||
		    cap_set_flag(caps, CAP_INHERITABLE, 1, &v, CAP_SET) < 0)
			return cl_fail_errno(err, "keeping capability %d", (int)v);
	}
	return 0;
}

int ns_caps_drop(uint64_t keep, cl_error *err)
{
	int rc = ns_caps_drop_bounding(keep, err);

	return rc < 0 ? rc : ns_caps_set_current(keep, err);
}

int ns_caps_drop_bounding(uint64_t keep, cl_error *err)
{
	for (cap_value_t v = 0; (unsigned)v <= ns_caps_last(); v++) {
		if (v < 64 && (keep & (1ULL << v)))
			continue;
		if (cap_drop_bound(v) < 0 && errno != EINVAL)
			return cl_fail_errno(err, "dropping capability %d from the bounding set", (int)v);
	}
	return 0;
}

int ns_caps_set_current(uint64_t keep, cl_error *err)
{
	cap_t caps;
	int rc;

	if (cap_reset_ambient() < 0 && errno != EINVAL)
		return cl_fail_errno(err, "clearing ambient capabilities");
	caps = cap_init();
	if (!caps)
		return cl_fail_errno(err, "allocating capability state");
	rc = set_flags(caps, keep, err);
	if (rc == 0 && cap_set_proc(caps) < 0)
		rc = cl_fail_errno(err, "dropping capabilities");
	cap_free(caps);
	if (rc < 0)
		return rc;
	/* Ambient last: a cap can only be ambient once permitted+inheritable. */
	for (cap_value_t v = 0; keep && (unsigned)v <= ns_caps_last() && v < 64; v++)
		if ((keep & (1ULL << v)) && cap_set_ambient(v, CAP_SET) < 0)
			return cl_fail_errno(err, "raising ambient capability %d", (int)v);
	return 0;
}
