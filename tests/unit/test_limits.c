/* Unit tests for the limit notes: which errno, for which call, names
 * which sysctl or rlimit (with the value read from this host), and the
 * note's place in a formatted error. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "src/util/error.h"
#include "src/util/limits.h"
#include "unit.h"

static const struct { const char *name; int errnum, ns_flags; bool forking; const char *want; } rows[] = {
	{"EMFILE names RLIMIT_NOFILE", EMFILE, 0, false, "ulimit -n = "},
	{"ENFILE names fs.file-max", ENFILE, 0, false, "fs.file-max = "},
	{"EAGAIN of a fork names the process limits", EAGAIN, 0, true, "ulimit -u = "},
	{"EAGAIN of a fork names kernel.pid_max", EAGAIN, 0, true, "kernel.pid_max = "},
	{"EAGAIN of I/O names nothing", EAGAIN, 0, false, ""},
	{"ENOSPC of a user ns clone", ENOSPC, CLONE_NEWUSER, true, "user.max_user_namespaces = "},
	{"ENOSPC of a write names nothing", ENOSPC, 0, false, ""},
	{"EUSERS of a user ns clone", EUSERS, CLONE_NEWUSER, true, "nested deeper than 32"},
	{"EPERM names nothing", EPERM, CLONE_NEWUSER, true, ""},
};

int main(void)
{
	char buf[CL_ERROR_NOTE_MAX], want[64], line[CL_ERROR_MSG_MAX + CL_ERROR_NOTE_MAX + 64];
	struct rlimit rl;
	cl_error err = {0};
	FILE *f;

	for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
		cl_limit_note(rows[i].errnum, rows[i].ns_flags, rows[i].forking, buf, sizeof(buf));
		CHECK(rows[i].name, rows[i].want[0] ? strstr(buf, rows[i].want) != NULL : buf[0] == '\0');
	}
	/* The value is this host's. */
	getrlimit(RLIMIT_NOFILE, &rl);
	snprintf(want, sizeof(want), "ulimit -n = %llu", (unsigned long long)rl.rlim_cur);
	cl_limit_note(EMFILE, 0, false, buf, sizeof(buf));
	CHECK("EMFILE's value is getrlimit's", strstr(buf, want) != NULL);
	f = fopen("/proc/sys/user/max_user_namespaces", "r");
	unsigned long long v = 0;
	if (f && fscanf(f, "%llu", &v) == 1) {
		snprintf(want, sizeof(want), "user.max_user_namespaces = %llu", v);
		cl_limit_note(ENOSPC, CLONE_NEWUSER, true, buf, sizeof(buf));
		CHECK("the namespace limit's value is the sysctl's", strstr(buf, want) != NULL);
	}
	if (f)
		fclose(f);
	/* Types with one value share an entry. */
	cl_limit_note(ENOSPC, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID, true, buf, sizeof(buf));
	CHECK("same values grouped", strstr(buf, "user.max_{") != NULL || strstr(buf, "user.max_mnt") != NULL);
	/* cl_fail_errno notes EMFILE; the note follows the errno text. */
	errno = EMFILE;
	cl_fail_errno(&err, "opening x");
	cl_error_format(&err, line, sizeof(line));
	CHECK("format: message, errno text, note", strncmp(line, "opening x: Too many open files (the open-file limit", 51) == 0);
	errno = ENOENT;
	cl_fail_errno(&err, "opening y");
	cl_error_format(&err, line, sizeof(line));
	CHECK("a later failure drops the old note", strcmp(line, "opening y: No such file or directory") == 0);
	UNIT_MAIN_END;
}
