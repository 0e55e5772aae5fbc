/* Capabilities: the drop as raw prctl/capset calls on a plan prepared before
 * clone (names to bits: src/policy/caps.c). */
#define _GNU_SOURCE
#include "ns/caps.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "src/policy/caps.h"

void ns_caps_plan(struct ns_caps_plan *pl, uint64_t keep)
{
	pl->last = cl_caps_last();
	if (pl->last > 63)
		pl->last = 63;
	pl->keep = keep;
	pl->keep_bounding = pl->keep_current = false;
}

static bool kept(const struct ns_caps_plan *pl, unsigned v)
{
	return v < 64 && (pl->keep & (1ULL << v));
}

/* capset(2) with 64-bit sets: the kernel's v3 layout, two 32-bit words. */
static int set_pei(uint64_t caps)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct d[2];

	for (int i = 0; i < 2; i++) {
		uint32_t w = (uint32_t)(caps >> (32 * i));
		d[i].effective = d[i].permitted = d[i].inheritable = w;
	}
	return (int)syscall(SYS_capset, &hdr, d);
}

int ns_caps_limit(const struct ns_caps_plan *pl, cl_error *err)
{
	/* Bounding set first: shrinking it needs CAP_SETPCAP, which the
	 * capset below takes away. EINVAL: a cap this kernel lacks. */
	for (unsigned v = 0; !pl->keep_bounding && v <= pl->last; v++) {
		if (kept(pl, v))
			continue;
		if (prctl(PR_CAPBSET_DROP, v, 0, 0, 0) < 0 && errno != EINVAL)
			return cl_fail_errno(err, "dropping capability %u from the bounding set", v);
	}
	if (pl->keep_current)
		return 0;
	/* EINVAL: a kernel without ambient capabilities (before 4.3). */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return cl_fail_errno(err, "clearing ambient capabilities");
	if (set_pei(pl->keep) < 0)
		return cl_fail_errno(err, "dropping capabilities");
	return 0;
}

int ns_caps_raise_ambient(const struct ns_caps_plan *pl, cl_error *err)
{
	for (unsigned v = 0; pl->keep && !pl->keep_current && v <= pl->last; v++)
		if (kept(pl, v) && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, v, 0, 0) < 0)
			return cl_fail_errno(err, "raising ambient capability %u", v);
	return 0;
}

int ns_caps_clear(cl_error *err)
{
	if (set_pei(0) < 0)
		return cl_fail_errno(err, "dropping capabilities");
	return 0;
}
