/* libFuzzer target: the bwrap front-end's command line (cl_bwrap_parse),
 * including what an --args FD supplies. Input: NUL-separated words after
 * "bwrap"; a 0xff byte ends them and the rest is the content of fd
 * FZ_ARGS_FD, which the words can name ("--args", "10").
 *
 * The parser closes the fds that options name (when the policy is freed
 * and on a repeated --seccomp) and reads --args fds: fds 3..FZ_FDS-1 are
 * kept open on /dev/null, reopened before each input, so an input can
 * only close or read fds the harness owns. stdin is /dev/null (no read
 * waits on a terminal); 0-2 are saved at FZ_SAVED..FZ_SAVED+2 and put
 * back after each input, which an input naming those numbers could undo:
 * such inputs are skipped. libFuzzer holds no fd of its own while an
 * input runs as long as it does not symbolize (tests/fuzz/run.sh passes
 * -print_funcs=0: otherwise it keeps pipes to llvm-symbolizer open, on
 * fds an input could name). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/cli_bwrap.h"
#include "src/error.h"
#include "src/policy.h"
#include "src/policy_json.h"
#include "tests/fuzz/fuzz.h"

#define FZ_FDS 16
#define FZ_ARGS_FD 10
#define FZ_SAVED 1021     /* below the usual RLIMIT_NOFILE soft limit, 1024 */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (null < 0 || dup2(null, 0) < 0)
		abort();
	close(null);
	for (int fd = 0; fd < 3; fd++)
		if (dup2(fd, FZ_SAVED + fd) < 0)
			abort();
	clearenv();
	setenv("PATH", "/usr/bin:/bin", 1);
	setenv("HOME", "/root", 1);
	return 0;
}

/* Fds 3..FZ_FDS-1 on /dev/null again (an input may have closed them),
 * FZ_ARGS_FD on a memfd holding the --args content. */
static void reset_fds(const uint8_t *args, size_t len)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int m = memfd_create("fuzz-args", MFD_CLOEXEC);

	if (null < 0 || m < 0)
		abort();
	for (int fd = 3; fd < FZ_FDS; fd++)
		if (fd != null && fd != m && fcntl(fd, F_GETFD) < 0)
			dup2(null, fd);
	if (len && write(m, args, len) != (ssize_t)len)
		abort();
	lseek(m, 0, SEEK_SET);
	dup2(m, FZ_ARGS_FD);
	if (null >= FZ_FDS)
		close(null);
	if (m >= FZ_FDS)
		close(m);
}

/* Puts back 0-2 if the input closed them. */
static void restore_stdio(void)
{
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0)
			dup2(FZ_SAVED + fd, fd);
}

/* Does the input name one of the saved fds (as a whole word)? */
static bool names_saved_fd(const uint8_t *data, size_t len)
{
	char w[8];

	for (int fd = FZ_SAVED; fd < FZ_SAVED + 3; fd++) {
		int n = snprintf(w, sizeof(w), "%d", fd);
		for (const uint8_t *p = data; p && (p = memmem(p, len - (size_t)(p - data), w, (size_t)n));
		     p++)
			if ((p == data || p[-1] == 0 || p[-1] == 0xff) &&
			    (p + n == data + len || p[n] == 0 || p[n] == 0xff))
				return true;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const uint8_t *sep = memchr(data, 0xff, len);
	size_t words = sep ? (size_t)(sep - data) : len;
	struct cl_policy p;
	struct cl_bwrap b = {.p = &p};
	cl_error err = {0};
	int argc;
	char **argv;

	if (names_saved_fd(data, len))
		return 0;
	reset_fds(sep ? sep + 1 : data, sep ? len - words - 1 : 0);
	argv = fz_argv("bwrap", data, words, &argc);
	if (!argv)
		return 0;
	if (cl_bwrap_parse(&b, argc, argv, &err) == 0 && p.argv &&
	    cl_policy_validate(&p, &err) == 0)
		free(cl_policy_to_json(&p));
	cl_strv_free(b.ovl_src);
	cl_policy_free(&p);
	restore_stdio();
	fz_argv_free(argv);
	return 0;
}
