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
 * back after each input, which an input naming those numbers could undo.
 * An input naming any open fd at or above FZ_FDS (those, or one the
 * fuzzer was started with) is skipped. libFuzzer holds no fd of its own
 * while an input runs as long as it does not symbolize (run.sh passes
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

#include "src/cli/bwrap/bwrap.h"
#include "src/util/error.h"
#include "src/policy/policy.h"
#include "src/policy/policy_json.h"
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

/* Does the input name (as a whole word, in its argv or its --args
 * content) an open fd the harness does not reset before each input: the
 * saved 0-2, or anything the fuzzer's parent left open (a pipe there
 * blocks a --args read forever: libFuzzer's -jobs workers inherit one)? */
static bool names_foreign_fd(const uint8_t *data, size_t len)
{
	char w[16];
	size_t i = 0;

	while (i < len) {
		size_t k = 0;
		while (i + k < len && data[i + k] != 0 && data[i + k] != 0xff)
			k++;
		if (k < sizeof(w)) {
			cl_error err = {0};
			int fd;
			memcpy(w, data + i, k);
			w[k] = '\0';
			if (cl_bwrap_parse_fd(w, &fd, &err) == 0 && fd >= FZ_FDS && fcntl(fd, F_GETFD) >= 0)
				return true;
		}
		i += k + 1;
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

	if (names_foreign_fd(data, len))
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
