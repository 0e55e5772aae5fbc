/* A host probe's answer as plain data (ok, why, what to do), and the forked
 * child the namespace probes run in. Shared by `cloister check` and the
 * layers below it that own a probe (cgroups, the workspace overlay). */
#ifndef CL_PROBE_H
#define CL_PROBE_H

#include <stdbool.h>

struct probe_result {
	bool ok;
	char detail[256];
	char hint[256];
};

/* Runs fn in a forked child; true if it exited 0. *child_errno: the errno
 * fn left (EIO if the child reported nothing). */
bool cl_probe_in_child(int (*fn)(void), int *child_errno);

#endif
