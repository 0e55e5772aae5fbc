/* `cloister check [--json]`: what this host allows, and why not. */
#ifndef CL_CHECK_H
#define CL_CHECK_H

#include <stdbool.h>

struct probe_result {
	bool ok;
	char detail[256];
	char hint[256];
};

int cl_check_main(int argc, char **argv);

/* Whether overlayfs mounts in a new user namespace here (a forked probe);
 * false with *err = the errno why not. */
bool cl_check_overlay(int *err);

#endif
