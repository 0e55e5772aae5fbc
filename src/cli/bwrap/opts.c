/* bwrap's option table: each option with its argument count and handler,
 * applied strictly in argv order as bubblewrap does, into the policy. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/policy/caps.h"
#include "src/util/cleanup.h"
#include "src/cli/bwrap/bwrap.h"
#include "src/policy/parse.h"


int cl_bwrap_parse_fd(const char *s, int *fd, cl_error *err)
{
	uint64_t v;

	if (cl_parse_u64(s, 0, INT_MAX, &v) < 0)
		return cl_fail(err, 0, "Invalid fd: %s", s);
	*fd = (int)v;
	return 0;
}

/* bwrap reads --perms and --chmod with strtoul(s, 8): leading blanks and a
 * sign are taken ("+700", "-0"), a negative value wraps past 07777. */
static int parse_octal(const char *s, const char *opt, mode_t *out, cl_error *err)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 8);
	if (!*s || *end || errno || v > 07777)
		return cl_fail(err, 0, "%s takes an octal argument <= 07777", opt);
	*out = (mode_t)v;
	return 0;
}

/* bwrap resolves a relative source against its cwd and puts every
 * destination under the new root. */
static char *abs_path(const char *s, bool host)
{
	char cwd[PATH_MAX], *r;

	if (s[0] == '/')
		return strdup(s);
	if (!host)
		return asprintf(&r, "/%s", s) < 0 ? NULL : r;
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	return asprintf(&r, "%s/%s", strcmp(cwd, "/") ? cwd : "", s) < 0 ? NULL : r;
}

static struct cl_mount *add(struct cl_bwrap *b, enum cl_mount_kind k, const char *src,
                            bool src_host, const char *dest, unsigned flags, cl_error *err)
{
	char *s = src && src_host ? abs_path(src, true) : NULL;
	char *d = abs_path(dest, false);
	struct cl_mount *m = NULL;

	if ((!src_host || !src || s) && d)
		m = cl_policy_add_mount(b->p, k, src_host ? s : src, d, flags);
	free(s);
	free(d);
	if (!m)
		cl_fail(err, ENOMEM, "adding %s", dest);
	return m;
}

static int o_bind(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{

	return add(b, CL_MNT_BIND, a[0], true, a[1], o->flags, err) ? 0 : -ENOMEM;
}

static int o_bind_fd(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{
	struct cl_mount *m;
	int fd = -1;

	if (cl_bwrap_parse_fd(a[0], &fd, err) < 0)
		return -EINVAL;
	m = add(b, CL_MNT_BIND, NULL, false, a[1], o->flags, err);
	if (!m)
		return -ENOMEM;
	m->src_fd = fd;
	return 0;
}

/* One destination-only operation: --remount-ro --proc --dev --tmpfs
 * --mqueue --dir. Only --tmpfs and --dir take --perms, only --tmpfs
 * --size (bwrap 0.12: a tmpfs or --dir without --perms is 0755). */
static int o_dest(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{
	enum cl_mount_kind k = (enum cl_mount_kind)o->flags;
	struct cl_mount *m = add(b, k, NULL, false, a[0], 0, err);

	if (!m)
		return -ENOMEM;
	if (o->uses_perms && b->perms_set)
		m->mode = b->next_perms;
	if (k == CL_MNT_TMPFS && b->size_set)
		m->size = b->next_size;
	return 0;
}

/* --file/--bind-data/--ro-bind-data FD DEST: data from an fd. */
static int o_data(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{
	bool file = strcmp(o->name, "--file") == 0;
	struct cl_mount *m;
	int fd = -1;

	if (cl_bwrap_parse_fd(a[0], &fd, err) < 0)
		return -EINVAL;
	m = add(b, file ? CL_MNT_FILE : CL_MNT_BIND_DATA, NULL, false, a[1], o->flags, err);
	if (!m)
		return -ENOMEM;
	m->src_fd = fd;
	/* bwrap's defaults: a plain file 0666, a private data file 0600. */
	m->mode = b->perms_set ? b->next_perms : file ? 0666 : 0600;
	return 0;
}

static int o_symlink(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{
	return add(b, CL_MNT_SYMLINK, a[0], false, a[1], 0, err) ? 0 : -ENOMEM;
}

static int o_chmod(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{
	struct cl_mount *m;
	mode_t mode = 0;

	if (parse_octal(a[0], "--chmod", &mode, err) < 0)
		return -EINVAL;
	m = add(b, CL_MNT_CHMOD, NULL, false, a[1], 0, err);
	if (!m)
		return -ENOMEM;
	m->mode = mode;
	return 0;
}

static int o_overlay_src(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{
	char *s = abs_path(a[0], true);
	int rc = s && cl_strv_push(&b->ovl_src, s) ? 0 : cl_fail(err, ENOMEM, "--overlay-src");

	free(s);
	return rc;
}

/* --overlay RWSRC WORKDIR DEST, --tmp-overlay DEST, --ro-overlay DEST. */
static int o_overlay(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{
	bool rw = o->nargs == 3;
	struct cl_mount *m;

	if (!b->ovl_src)
		return cl_fail(err, 0, "%s requires at least one --overlay-src", o->name);
	if (strcmp(o->name, "--ro-overlay") == 0 && cl_strv_len(b->ovl_src) < 2)
		return cl_fail(err, 0, "--ro-overlay requires at least two --overlay-src");
	m = add(b, CL_MNT_OVERLAY, rw ? a[0] : NULL, true, a[rw ? 2 : 0], o->flags, err);
	if (!m)
		return -ENOMEM;
	m->ovl_lower = cl_steal_ptr(&b->ovl_src);
	if (rw && !(m->ovl_work = abs_path(a[1], true)))
		return cl_fail(err, ENOMEM, "--overlay");
	return 0;
}

static int o_unshare(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{
	const char *n = o->name + 2;

	if (strcmp(n, "unshare-all") == 0) {
		b->unshare_user_try = b->unshare_ipc = b->unshare_pid = true;
		b->unshare_net = b->unshare_uts = b->unshare_cgroup_try = true;
	} else if (strcmp(n, "share-net") == 0) {
		b->unshare_net = false;
	} else if (strcmp(n, "unshare-user") == 0) {
		b->unshare_user = true;
	} else if (strcmp(n, "unshare-user-try") == 0) {
		b->unshare_user_try = true;
	} else if (strcmp(n, "unshare-ipc") == 0) {
		b->unshare_ipc = true;
	} else if (strcmp(n, "unshare-pid") == 0) {
		b->unshare_pid = true;
	} else if (strcmp(n, "unshare-net") == 0) {
		b->unshare_net = true;
	} else if (strcmp(n, "unshare-uts") == 0) {
		b->unshare_uts = true;
	} else if (strcmp(n, "unshare-cgroup") == 0) {
		b->unshare_cgroup = true;
	} else {
		b->unshare_cgroup_try = true;
	}
	return 0;
}

static int o_id(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{
	bool uid = strcmp(o->name, "--uid") == 0;
	uint64_t v;

	if (cl_parse_u64(a[0], 0, 4294967294ULL, &v) < 0)
		return cl_fail(err, 0, "Invalid %s: %s", uid ? "uid" : "gid", a[0]);
	if (uid) {
		b->p->uid = (uid_t)v;
		b->uid_set = true;
	} else {
		b->p->gid = (gid_t)v;
		b->gid_set = true;
	}
	return 0;
}

static int set_str(char **slot, const char *v, cl_error *err)
{
	free(*slot);
	*slot = strdup(v);
	return *slot ? 0 : cl_fail(err, ENOMEM, "copying %s", v);
}

static int o_str(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{
	const char *n = o->name;

	if (strcmp(n, "--hostname") == 0)
		return set_str(&b->p->hostname, a[0], err);
	if (strcmp(n, "--argv0") == 0) {
		if (b->p->argv0)
			return cl_fail(err, 0, "--argv0 used multiple times");
		return set_str(&b->p->argv0, a[0], err);
	}
	if (strcmp(n, "--lock-file") == 0) {
		char *d = abs_path(a[0], false);
		int rc = d ? set_str(&b->p->hooks.lock_file, d, err) : cl_fail(err, ENOMEM, "--lock-file");
		free(d);
		return rc;
	}
	/* --chdir: the last one wins, with bwrap's warning. */
	if (b->chdir_seen)
		cl_bwrap_warn("Only the last --chdir option will take effect");
	b->chdir_seen = true;
	return set_str(&b->p->workdir, a[0], err);
}

static int o_env(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{
	const char *n = o->name;

	if (strcmp(n, "--clearenv") == 0) {
		cl_strv_free(b->p->env);
		b->p->env = calloc(1, sizeof(char *));
		return b->p->env ? 0 : cl_fail(err, ENOMEM, "--clearenv");
	}
	if (strcmp(n, "--unsetenv") == 0) {
		cl_policy_unsetenv(b->p, a[0]);
		return 0;
	}
	if (strchr(a[0], '=') || !a[0][0])
		return cl_fail(err, 0, "--setenv: invalid variable name '%s'", a[0]);
	return cl_policy_setenv(b->p, a[0], a[1]) < 0 ? cl_fail(err, ENOMEM, "--setenv") : 0;
}

static int push_fd(int **v, size_t *n, int fd, cl_error *err)
{
	int *nv = realloc(*v, (*n + 1) * sizeof(int));

	if (!nv)
		return cl_fail(err, ENOMEM, "adding a seccomp program");
	*v = nv;
	nv[(*n)++] = fd;
	return 0;
}

static int o_fd(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{
	const char *n = o->name;
	struct cl_hooks *h = &b->p->hooks;
	int fd = -1;

	if (cl_bwrap_parse_fd(a[0], &fd, err) < 0)
		return -EINVAL;
	/* --seccomp (one program, the last one given) and --add-seccomp-fd
	 * (a stack) exclude each other, as in bwrap. */
	if (strcmp(n, "--seccomp") == 0 && h->n_seccomp_fds && !b->seccomp_seen)
		return cl_fail(err, 0, "--seccomp cannot be combined with --add-seccomp-fd");
	if (strcmp(n, "--add-seccomp-fd") == 0 && b->seccomp_seen)
		return cl_fail(err, 0, "--add-seccomp-fd cannot be combined with --seccomp");
	if (strcmp(n, "--seccomp") == 0) {
		/* Not repeatable: a later --seccomp replaces the earlier one. */
		if (b->seccomp_seen) {
			cl_bwrap_warn("Only the last --seccomp option will take effect");
			close(h->seccomp_fds[0]);
			h->seccomp_fds[0] = fd;
			return 0;
		}
		b->seccomp_seen = true;
		return push_fd(&h->seccomp_fds, &h->n_seccomp_fds, fd, err);
	}
	if (strcmp(n, "--add-seccomp-fd") == 0)
		return push_fd(&h->seccomp_fds, &h->n_seccomp_fds, fd, err);
	if (strcmp(n, "--info-fd") == 0)
		h->info_fd = fd;
	else if (strcmp(n, "--json-status-fd") == 0)
		h->status_fd = fd;
	else if (strcmp(n, "--block-fd") == 0)
		h->block_fd = fd;
	else if (strcmp(n, "--userns-block-fd") == 0)
		h->userns_block_fd = fd;
	else if (strcmp(n, "--userns") == 0)
		h->userns_fd = fd;
	else if (strcmp(n, "--userns2") == 0)
		h->userns2_fd = fd;
	else if (strcmp(n, "--pidns") == 0)
		h->pidns_fd = fd;
	/* --sync-fd: nothing to do but leave it open, which keep_fds does. */
	return 0;
}

static int o_flag(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{
	const char *n = o->name;

	if (strcmp(n, "--new-session") == 0)
		b->p->new_session = true;
	else if (strcmp(n, "--die-with-parent") == 0)
		b->p->die_with_parent = b->p->hooks.supervisor_pdeathsig = true;
	else if (strcmp(n, "--as-pid-1") == 0)
		b->p->hooks.as_pid_1 = true;
	/* bwrap 0.12: the caller allows a failed flag remount of a bind's
	 * submounts to be a warning. cloister sets a bind's flags on its whole
	 * tree in one mount_setattr(AT_RECURSIVE) and keeps failing closed
	 * (docs/bwrap.md, "Differences that remain"); the option is accepted
	 * so that callers passing it still run. */
	else if (strcmp(n, "--not-a-security-boundary") == 0)
		b->not_a_security_boundary = true;
	else if (strcmp(n, "--help") == 0)
		b->help = true;
	else if (strcmp(n, "--version") == 0)
		b->version = true;
	else if (strcmp(n, "--disable-userns") == 0)
		b->p->hooks.disable_userns = true;
	else
		b->p->hooks.assert_userns_disabled = true;
	return 0;
}

static int o_cap(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{
	bool addc = strcmp(o->name, "--cap-add") == 0;
	uint64_t mask;

	if (cl_caps_parse(a[0], &mask) < 0)
		return cl_fail(err, 0, "unknown cap: %s", a[0]);
	b->caps_touched = true;
	if (addc)
		b->cap_add |= mask, b->cap_drop &= ~mask;
	else
		b->cap_drop |= mask, b->cap_add &= ~mask;
	return 0;
}

static int o_label(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{
	/* SELinux is not enabled here: bwrap refuses labels in that case. */
	return cl_fail(err, 0, "labeling not supported on this system");
}

/* bwrap's --size: bytes as a C integer literal (decimal, 0x hex or 0
 * octal; no k/m/g suffix), not zero, at most half the address space
 * (SIZE_MAX >> 1, bwrap's limit: 2^63-1 on 64-bit hosts). */
static int parse_size(const char *s, uint64_t *v, cl_error *err)
{
	const uint64_t max = SIZE_MAX >> 1;
	unsigned long long n;
	char *end = NULL;

	errno = 0;
	n = strtoull(s, &end, 0);
	if (errno || !isdigit((unsigned char)s[0]) || !end || *end || n == 0)
		return cl_fail(err, 0, "--size takes a non-zero number of bytes");
	if (n > max)
		return cl_fail(err, 0, "--size (for tmpfs) is limited to %zu", (size_t)max);
	*v = n;
	return 0;
}

static int o_modifier(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a, cl_error *err)
{
	bool perms = strcmp(o->name, "--perms") == 0;
	uint64_t v = 0;

	if (perms) {
		if (b->perms_set)
			return cl_fail(err, 0, "--perms given twice for the same action");
		b->perms_set = true;
		return parse_octal(a[0], "--perms", &b->next_perms, err);
	}
	if (b->size_set)
		return cl_fail(err, 0, "--size given twice for the same action");
	if (parse_size(a[0], &v, err) < 0)
		return -EINVAL;
	b->size_set = true;
	b->next_size = v;
	return 0;
}

#define K(kind) ((unsigned)(kind))
static const struct cl_bwrap_opt bw_opts[] = {
	{"--help", 0, o_flag, 0, false}, {"--version", 0, o_flag, 0, false},
	{"--argv0", 1, o_str, 0, false}, {"--level-prefix", 0, cl_bwrap_ext_option, 0, false},
	{"--unshare-all", 0, o_unshare, 0, false}, {"--share-net", 0, o_unshare, 0, false},
	{"--unshare-user", 0, o_unshare, 0, false}, {"--unshare-user-try", 0, o_unshare, 0, false},
	{"--unshare-ipc", 0, o_unshare, 0, false}, {"--unshare-pid", 0, o_unshare, 0, false},
	{"--unshare-net", 0, o_unshare, 0, false}, {"--unshare-uts", 0, o_unshare, 0, false},
	{"--unshare-cgroup", 0, o_unshare, 0, false},
	{"--unshare-cgroup-try", 0, o_unshare, 0, false},
	{"--userns", 1, o_fd, 0, false}, {"--userns2", 1, o_fd, 0, false},
	{"--pidns", 1, o_fd, 0, false},
	{"--disable-userns", 0, o_flag, 0, false}, {"--assert-userns-disabled", 0, o_flag, 0, false},
	{"--uid", 1, o_id, 0, false}, {"--gid", 1, o_id, 0, false},
	{"--hostname", 1, o_str, 0, false}, {"--chdir", 1, o_str, 0, false},
	{"--clearenv", 0, o_env, 0, false}, {"--setenv", 2, o_env, 0, false},
	{"--unsetenv", 1, o_env, 0, false}, {"--lock-file", 1, o_str, 0, false},
	{"--sync-fd", 1, o_fd, 0, false},
	{"--bind", 2, o_bind, 0, false}, {"--bind-try", 2, o_bind, CL_MF_TRY, false},
	{"--dev-bind", 2, o_bind, CL_MF_DEV, false},
	{"--dev-bind-try", 2, o_bind, CL_MF_DEV | CL_MF_TRY, false},
	{"--ro-bind", 2, o_bind, CL_MF_RO, false}, {"--ro-bind-try", 2, o_bind, CL_MF_RO | CL_MF_TRY, false},
	{"--bind-fd", 2, o_bind_fd, 0, false}, {"--ro-bind-fd", 2, o_bind_fd, CL_MF_RO, false},
	{"--remount-ro", 1, o_dest, K(CL_MNT_REMOUNT_RO), false},
	{"--overlay-src", 1, o_overlay_src, 0, false},
	{"--overlay", 3, o_overlay, 0, false}, {"--tmp-overlay", 1, o_overlay, 0, false},
	{"--ro-overlay", 1, o_overlay, CL_MF_RO, false},
	{"--exec-label", 1, o_label, 0, false}, {"--file-label", 1, o_label, 0, false},
	{"--proc", 1, o_dest, K(CL_MNT_PROC), false}, {"--dev", 1, o_dest, K(CL_MNT_DEV), false},
	{"--tmpfs", 1, o_dest, K(CL_MNT_TMPFS), true}, {"--mqueue", 1, o_dest, K(CL_MNT_MQUEUE), false},
	{"--dir", 1, o_dest, K(CL_MNT_DIR), true},
	{"--file", 2, o_data, 0, true}, {"--bind-data", 2, o_data, 0, true},
	{"--ro-bind-data", 2, o_data, CL_MF_RO, true},
	{"--symlink", 2, o_symlink, 0, false}, {"--chmod", 2, o_chmod, 0, false},
	{"--seccomp", 1, o_fd, 0, false}, {"--add-seccomp-fd", 1, o_fd, 0, false},
	{"--block-fd", 1, o_fd, 0, false}, {"--userns-block-fd", 1, o_fd, 0, false},
	{"--info-fd", 1, o_fd, 0, false}, {"--json-status-fd", 1, o_fd, 0, false},
	{"--new-session", 0, o_flag, 0, false}, {"--die-with-parent", 0, o_flag, 0, false},
	{"--as-pid-1", 0, o_flag, 0, false}, {"--not-a-security-boundary", 0, o_flag, 0, false},
	{"--cap-add", 1, o_cap, 0, false}, {"--cap-drop", 1, o_cap, 0, false},
	{"--perms", 1, o_modifier, 0, false}, {"--size", 1, o_modifier, 0, false},
	/* cloister extensions (never change the meaning of a bwrap argv). */
	{"--memory", 1, cl_bwrap_ext_option, 0, false}, {"--memory-swap", 1, cl_bwrap_ext_option, 0, false},
	{"--cpus", 1, cl_bwrap_ext_option, 0, false}, {"--pids", 1, cl_bwrap_ext_option, 0, false},
	{"--seccomp-profile", 1, cl_bwrap_ext_option, 0, false},
	{"--timeout", 1, cl_bwrap_ext_option, 0, false}, {"--json-status", 1, cl_bwrap_ext_option, 0, false},
	{"--publish", 1, cl_bwrap_ext_option, 0, false}, {"--forward-out", 1, cl_bwrap_ext_option, 0, false},
	{"--workspace", 1, cl_bwrap_ext_option, 0, false}, {"--diff-out", 1, cl_bwrap_ext_option, 0, false},
	{"--runtime", 1, cl_bwrap_ext_option, 0, false},
};

static const char *nargs_text(const struct cl_bwrap_opt *o)
{
	if (o->nargs == 1)
		return strcmp(o->name, "--chdir") == 0 || strcmp(o->name, "--remount-ro") == 0
		       ? "one argument" : "an argument";
	return o->nargs == 2 ? "two arguments" : "three arguments";
}

int cl_bwrap_check_pending(const struct cl_bwrap *b, const char *name, cl_error *err)
{
	bool modifier = strcmp(name, "--perms") == 0 || strcmp(name, "--size") == 0;

	if (!modifier && b->perms_set)
		return cl_fail(err, 0, "--perms must be followed by an option that creates a file");
	if (!modifier && b->size_set)
		return cl_fail(err, 0, "--size must be followed by --tmpfs");
	if (strcmp(name, "--overlay-src") != 0 && b->ovl_src)
		return cl_fail(err, 0, "--overlay-src must be followed by another --overlay-src "
		               "or one of --overlay, --tmp-overlay, or --ro-overlay");
	return 0;
}

/* Applies one option at argv[*i]; advances *i past its arguments. */
int cl_bwrap_apply(struct cl_bwrap *b, int argc, char **argv, int *i, bool *known, cl_error *err)
{
	const char *name = argv[*i];
	const struct cl_bwrap_opt *o = NULL;
	int rc;

	for (size_t k = 0; k < sizeof(bw_opts) / sizeof(*bw_opts); k++)
		if (strcmp(bw_opts[k].name, name) == 0)
			o = &bw_opts[k];
	*known = o != NULL;
	if (!o)
		return 0;
	if (argc - *i - 1 < o->nargs)
		return cl_fail(err, 0, "%s takes %s", o->name, nargs_text(o));
	/* Order as in bwrap: the option itself first (its own errors win),
	 * then what it consumed of --perms/--size, then whatever is still
	 * pending is an error (they describe the next operation only). */
	rc = o->fn(b, o, argv + *i + 1, err);
	*i += o->nargs;
	if (rc < 0)
		return rc;
	if (o->uses_perms)
		b->perms_set = false;
	if (strcmp(o->name, "--tmpfs") == 0)
		b->size_set = false;
	return cl_bwrap_check_pending(b, o->name, err);
}
