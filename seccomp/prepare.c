/* Parent side of seccomp: turn --seccomp/--seccomp-bpf into a raw cBPF
 * program: the built-in one compiled at build time, or a profile compiled now. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seccomp/default_bpf.h"
#include "seccomp/guard.h"
#include "seccomp/profile.h"
#include "seccomp/seccomp.h"
#include "src/util/fdio.h"
#include "src/policy/trust.h"

#define MAX_PROFILE (4U << 20)
#define MAX_INSNS 4096U

static bool debug(void)
{
	const char *d = getenv("CLOISTER_DEBUG");
	return d && strstr(d, "seccomp");
}

/* Reads fd (taken) to EOF, at most max bytes. */
static int read_fd(int fd, const char *path, const char *what, char **data, size_t *len,
                   size_t max, cl_error *err)
{
	struct stat st;
	int rc;

	if (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode) ||
	    (S_ISREG(st.st_mode) && (size_t)st.st_size > max)) {
		close(fd);
		return cl_fail(err, 0, "%s %s: not a file of at most %zu bytes", what, path, max);
	}
	rc = cl_read_all(fd, max, data, len);
	close(fd);
	if (rc == -EFBIG)
		return cl_fail(err, 0, "%s %s: not a file of at most %zu bytes", what, path, max);
	if (rc < 0)
		return cl_fail(err, -rc, "reading %s %s", what, path);
	return 0;
}

/* Reads a whole file of at most max bytes. Pipes work too (--seccomp-bpf
 * /dev/fd/N, as bwrap users pass programs), so read until EOF. */
static int read_file(const char *path, const char *what, char **data, size_t *len,
                     size_t max, cl_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return cl_fail_errno(err, "opening %s %s", what, path);
	return read_fd(fd, path, what, data, len, max, err);
}

int sc_bpf_read(const char *path, struct sc_program *out, cl_error *err)
{
	char *data;
	size_t len;
	int rc = read_file(path, "seccomp BPF file", &data, &len, MAX_INSNS * 8, err);

	if (rc < 0)
		return rc;
	if (len == 0 || len % sizeof(struct sock_filter)) {
		free(data);
		return cl_fail(err, 0, "seccomp BPF file %s: %zu bytes is not a whole number of "
		               "8-byte instructions (expected raw cBPF, as bwrap --seccomp takes)",
		               path, len);
	}
	out->filter = (struct sock_filter *)data;
	out->len = (unsigned short)(len / sizeof(struct sock_filter));
	out->flags = 0;
	return 0;
}

int sc_profile_load(const char *spec, const struct sc_context *ctx, struct sc_profile *out,
                    cl_error *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (strcmp(spec, "default") == 0)
		return sc_profile_default(ctx, out, err);
	if (ctx->checked_for) {
		int fd = -1;
		rc = cl_trust_open(spec, "seccomp profile", ctx->checked_for, &fd, err);
		if (rc < 0 && err->msg[0] == '\0')
			rc = cl_fail(err, -rc, "opening seccomp profile %s", spec);
		if (rc == 0)
			rc = read_fd(fd, spec, "seccomp profile", &text, &len, MAX_PROFILE, err);
	} else {
		rc = read_file(spec, "seccomp profile", &text, &len, MAX_PROFILE, err);
	}
	if (rc < 0)
		return rc;
	rc = sc_profile_from_json(text, len, spec, ctx, out, err);
	free(text);
	return rc;
}

static unsigned kernel_flags(unsigned f)
{
	return (f & SC_FLAG_LOG ? SECCOMP_FILTER_FLAG_LOG : 0) |
	       (f & SC_FLAG_SPEC_ALLOW ? SECCOMP_FILTER_FLAG_SPEC_ALLOW : 0) |
	       (f & SC_FLAG_TSYNC ? SECCOMP_FILTER_FLAG_TSYNC : 0);
}

static void warn_unknown(const char *spec, const char *names)
{
	const struct scmp_version *v = seccomp_version();

	if (names && *names)
		fprintf(stderr, "cloister: warning: %s: skipping syscalls unknown to libseccomp "
		        "%u.%u.%u: %s\n", spec, v->major, v->minor, v->micro, names);
}

/* The built-in profile was compiled and self-checked at build time; the
 * launch uses it in place (read-only data: the kernel only reads it). */
static int builtin_program(const struct sc_context *ctx, struct sc_program *out)
{
	const struct sc_builtin *b = ctx->allow_nested ? &sc_default_bpf_nested : &sc_default_bpf;

	out->filter = (struct sock_filter *)b->filter;
	out->len = b->len;
	out->flags = 0;
	out->builtin = true;
	return 0;
}

/* A user profile is compiled on every launch. There is deliberately no
 * on-disk cache: any file the caller can write, a sandbox given --rw or
 * --here over it can write too, and a replaced program would silently
 * unfilter every later sandbox (issue #14). `seccomp compile` + --seccomp-bpf
 * is the way to skip the compile with a file the caller protects. */
static int compile_profile(const char *spec, const struct sc_context *ctx,
                           struct sc_program *out, cl_error *err)
{
	struct sc_profile prof = {0};
	struct sock_filter *filter = NULL;
	size_t n = 0;
	int rc = sc_profile_load(spec, ctx, &prof, err);

	if (rc < 0)
		return rc;
	/* sc_compile refuses programs the kernel would not take (> 4096). */
	rc = sc_compile(&prof, &filter, &n, err);
	if (rc == 0) {
		warn_unknown(spec, prof.unknown);
		out->filter = filter;
		out->len = (unsigned short)n;
		out->flags = kernel_flags(prof.flags);
	}
	sc_profile_free(&prof);
	return rc < 0 ? cl_wrap(err, "compiling seccomp profile %s", spec) : 0;
}

int sc_build(const char *spec, const struct sc_context *ctx, struct sc_program *out,
             cl_error *err)
{
	int rc = strcmp(spec, "default") == 0 ? builtin_program(ctx, out)
	                                      : compile_profile(spec, ctx, out, err);

	if (rc == 0 && debug())
		fprintf(stderr, "cloister: debug: seccomp %s: %s program, %u instructions\n", spec,
		        strcmp(spec, "default") == 0 ? "built-in" : "compiled", out->len);
	return rc;
}

static int prepare_profile(const struct cl_policy *p, struct sc_program *out, cl_error *err)
{
	struct sc_context ctx = {.caps = p->caps_keep, .allow_nested = p->allow_nested,
	                         .checked_for = p->seccomp_checked ? p : NULL};

	switch (p->seccomp) {
	case CL_SC_UNCONFINED:
		return 0;
	case CL_SC_BPF:
		return sc_bpf_read(p->seccomp_path, out, err);
	case CL_SC_DEFAULT:
		return sc_build("default", &ctx, out, err);
	case CL_SC_PROFILE:
		return sc_build(p->seccomp_path, &ctx, out, err);
	}
	return cl_fail(err, 0, "unknown seccomp mode");
}

int sc_prepare(const struct cl_policy *p, struct sc_program *out, cl_error *err)
{
	struct sc_program guard = {0};
	int rc;

	*out = (struct sc_program){0};
	/* Before the profile: a profile's failure frees nothing of the guard's. */
	rc = sc_guard_build(p, &guard, err);
	if (rc < 0)
		return rc;
	rc = prepare_profile(p, out, err);
	out->guard = guard.guard;
	out->guard_len = guard.guard_len;
	return rc;
}
