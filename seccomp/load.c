/* Child side of seccomp: install a prepared cBPF program. No libseccomp here,
 * no allocation: this runs between fork and exec. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp/seccomp.h"

int sc_load(const struct sc_program *prog)
{
	struct sock_fprog fp;

	if (!prog)
		return 0;
	/* The guard first: it allows seccomp(2), which the profile may not. */
	if (prog->guard && prog->guard_len) {
		fp.len = prog->guard_len;
		fp.filter = prog->guard;
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) < 0)
			return -errno;
	}
	if (!prog->filter || prog->len == 0)
		return 0;
	fp.len = prog->len;
	fp.filter = prog->filter;
	/* TSYNC is unnecessary: the command is single-threaded here. */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, prog->flags, &fp) < 0)
		return -errno;
	return 0;
}

void sc_program_free(struct sc_program *prog)
{
	if (!prog->builtin)
		free(prog->filter);
	free(prog->guard);
	prog->guard = NULL;
	prog->guard_len = 0;
	prog->filter = NULL;
	prog->builtin = false;
	prog->len = 0;
	prog->flags = 0;
}
