/* libFuzzer target: `cloister run`'s command line (cl_cli_run_parse) and
 * the policy's JSON rendering (--dry-run --json). Input: NUL-separated
 * words after "run", parsed twice in a row. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "src/cli/cli.h"
#include "src/policy/policy_json.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* The parser reads the environment (--env KEY, PATH): a fixed one
	 * makes a crash input replay the same way anywhere. */
	clearenv();
	setenv("PATH", "/usr/bin:/bin", 1);
	setenv("HOME", "/root", 1);
	setenv("FUZZ_VAR", "value", 1);
	return 0;
}

static void parse(const uint8_t *data, size_t len)
{
	struct cl_policy p;
	struct cl_run_opts o;
	cl_error err = {0};
	int argc;
	char **argv = fz_argv("run", data, len, &argc);

	if (!argv)
		return;
	if (cl_cli_run_parse(argc, argv, &p, &o, &err) == 0 && !o.help)
		free(cl_policy_to_json(&p));
	cl_policy_free(&p);
	fz_argv_free(argv);
}

/* Twice: state a parse leaves behind in globals (getopt's) must not reach
 * into the next one, and a single input then shows it. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	parse(data, len);
	parse(data, len);
	return 0;
}
