/* `cloister gc`: removes what runs that died left behind: run records,
 * workspaces, sessions, docker containers, then cgroups; prints each. */
#define _GNU_SOURCE
#include "src/cli/gc.h"

#include <stdio.h>
#include <string.h>

#if CL_NATIVE
#include "cgroups/cgroup.h"
#include "src/cli/session.h"
#endif
#include "src/executors/docker_gc.h"
#include "src/state/store.h"
#include "src/util/error.h"
#include "src/workspace/state.h"

#define EXIT_SETUP 125

/* gc's docker part: containers of cloister runs that were killed. */
static int gc_containers(void)
{
	cl_error err = {0};
	int n;

	if (cl_docker_gc(&n, &err) < 0) {
		cl_error_print(&err);
		return -1;
	}
	if (n >= 0)
		printf("cloister gc: removed %d stale container%s\n", n, n == 1 ? "" : "s");
	return 0;
}

#if CL_NATIVE
static int gc_cgroups(int argc, char **argv)
{
	const char *parent = NULL;
	int removed;

	if (argc == 3 && strcmp(argv[1], "--cgroup-parent") == 0 && argv[2][0] == '/')
		parent = argv[2];
	else if (argc != 1) {
		fputs("cloister: usage: cloister gc [--cgroup-parent /PATH]\n", stderr);
		return EXIT_SETUP;
	}
	removed = cg_gc_sweep(parent);
	printf("cloister gc: removed %d stale cgroup%s\n", removed, removed == 1 ? "" : "s");
	return 0;
}
#else
/* No cgroups of its own to sweep. */
static int gc_cgroups(int argc, char **argv)
{
	return 0;
}
#endif

int cl_gc_main(int argc, char **argv)
{
	st_gc_reconcile_cwd();
	ws_gc();
#if CL_NATIVE
	ss_gc_sweep();
#endif
	/* Containers first: a NATIVE=0 build has no cgroups of its own. */
	return gc_containers() < 0 ? EXIT_SETUP : gc_cgroups(argc, argv);
}
