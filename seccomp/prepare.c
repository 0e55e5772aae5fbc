/* Parent side of seccomp (placeholder until the profile compiler lands):
 * unconfined only. */
#include <errno.h>

#include "seccomp/seccomp.h"

int sc_prepare(const struct cl_policy *p, struct sc_program *out, cl_error *err)
{
	out->filter = NULL;
	out->len = 0;
	if (p->seccomp == CL_SC_UNCONFINED)
		return 0;
	return cl_fail(err, 0, "seccomp profiles are not built yet; pass --seccomp unconfined");
}
