/* Command-line front-ends: each parses argv into a cl_policy and nothing
 * more; they never touch the kernel. */
#ifndef CL_CLI_H
#define CL_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "src/util/error.h"
#include "src/policy/policy.h"

struct cl_run_opts {
	bool dry_run;
	bool json;
	bool help;
};

/* `cloister run [OPTIONS] [--] COMMAND [ARG...]` (argv[0] is "run"). */
int cl_cli_run_parse(int argc, char **argv, struct cl_policy *p, struct cl_run_opts *o,
                     cl_error *err);
void cl_cli_run_usage(FILE *f);

#endif
