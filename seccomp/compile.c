/* Compiles a resolved profile into raw cBPF with libseccomp (binary-tree
 * optimisation), in the parent. libseccomp 2.5 only exports to an fd. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seccomp/profile.h"

#define BPF_MAXINSNS_KERNEL 4096

static void ctx_release(scmp_filter_ctx *c)
{
	if (*c)
		seccomp_release(*c);
}

static void fd_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

/* Is the name a real syscall on the native arch or one of the profile's?
 * libseccomp would otherwise emit dead tests for pseudo numbers. */
static bool on_some_arch(const struct sc_profile *p, const char *name)
{
	if (seccomp_syscall_resolve_name(name) >= 0)
		return true;
	for (size_t i = 0; i < p->n_arches; i++)
		if (seccomp_syscall_resolve_name_arch(p->arches[i], name) >= 0)
			return true;
	return false;
}

static int add_rule(scmp_filter_ctx ctx, const struct sc_profile *p, const struct sc_rule *r,
                    cl_error *err)
{
	struct scmp_arg_cmp cmp[SC_MAX_ARGS];
	int nr = seccomp_syscall_resolve_name(r->name), rc;

	/* Unknown names were reported by the loader. */
	if (nr == __NR_SCMP_ERROR || !on_some_arch(p, r->name))
		return 0;
	for (unsigned i = 0; i < r->n_conds; i++) {
		cmp[i].arg = r->conds[i].arg;
		cmp[i].op = (enum scmp_compare)r->conds[i].op;
		cmp[i].datum_a = r->conds[i].v;
		cmp[i].datum_b = r->conds[i].v2;
	}
	rc = seccomp_rule_add_array(ctx, r->action, nr, r->n_conds, cmp);
	if (rc < 0)
		return cl_fail(err, -rc, "seccomp rule for %s", r->name);
	return 0;
}

int sc_export(void *ctx, struct sock_filter **filter, size_t *len, cl_error *err)
{
	__attribute__((cleanup(fd_close))) int fd = -1;
	struct stat st;
	void *buf;
	int rc;

	fd = memfd_create("cloister-bpf", MFD_CLOEXEC);
	if (fd < 0)
		return cl_fail_errno(err, "creating a buffer for the seccomp program");
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0)
		return cl_fail(err, -rc, "exporting the seccomp program");
	if (fstat(fd, &st) < 0)
		return cl_fail_errno(err, "sizing the seccomp program");
	if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) ||
	    st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS_KERNEL)
		return cl_fail(err, E2BIG, "seccomp program has %lld bytes (at most %d instructions fit)",
		               (long long)st.st_size, BPF_MAXINSNS_KERNEL);
	buf = malloc((size_t)st.st_size);
	if (!buf)
		return cl_fail(err, ENOMEM, "seccomp program");
	if (pread(fd, buf, (size_t)st.st_size, 0) != st.st_size) {
		free(buf);
		return cl_fail(err, EIO, "reading back the seccomp program");
	}
	*filter = buf;
	*len = (size_t)st.st_size / sizeof(struct sock_filter);
	return 0;
}

int sc_compile(const struct sc_profile *p, struct sock_filter **filter, size_t *len,
               cl_error *err)
{
	__attribute__((cleanup(ctx_release))) scmp_filter_ctx ctx = NULL;
	int rc;

	ctx = seccomp_init(p->default_action);
	if (!ctx)
		return cl_fail(err, EINVAL, "setting up libseccomp");
	/* The child sets no_new_privs itself; the filter must not require it
	 * (bwrap and other loaders set it too). */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, p->badarch_action);
	if (rc < 0)
		return cl_fail(err, -rc, "configuring libseccomp");
	for (size_t i = 0; i < p->n_arches; i++) {
		if (p->arches[i] == seccomp_arch_native())
			continue;
		rc = seccomp_arch_add(ctx, p->arches[i]);
		if (rc < 0 && rc != -EEXIST)
			return cl_fail(err, -rc, "adding architecture %s", sc_arch_name(p->arches[i]));
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		/* A rule equal to the default action is redundant and libseccomp
		 * refuses it. */
		if (p->rules[i].action == p->default_action)
			continue;
		if (add_rule(ctx, p, &p->rules[i], err) < 0)
			return cl_error_code(err);
	}
	return sc_export(ctx, filter, len, err);
}
