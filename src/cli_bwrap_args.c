/* bwrap front-end odds and ends: --args FD reading (no size limit beyond
 * memory), the usage text, and cloister's extension options. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/cli_bwrap.h"
#include "src/fdio.h"
#include "src/parse.h"

int cl_bwrap_read_args(int fd, char ***out, cl_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = cl_read_all(fd, (size_t)1 << 30, &buf, &len);

	if (rc == -EFBIG || rc == -ENOMEM)
		return cl_fail(err, ENOMEM, "--args data is too large");
	if (rc < 0)
		return cl_fail(err, -rc, "Can't read --args data");
	/* Arguments are NUL-terminated; a last one without NUL counts too. */
	for (size_t i = 0; rc == 0 && i < len;) {
		size_t k = strnlen(buf + i, len - i);
		char *a = strndup(buf + i, k);
		if (!a || !cl_strv_push(out, a))
			rc = cl_fail(err, ENOMEM, "reading --args data");
		free(a);
		i += k + 1;
	}
	free(buf);
	return rc;
}

void cl_bwrap_usage(FILE *f, const char *prog)
{
	fprintf(f, "usage: %s [OPTIONS...] [--] COMMAND [ARGS...]\n\n", prog);
	fputs(
	      "  (cloister's implementation of the bubblewrap 0.11 command line)\n"
	      "    --help                       Show this text\n"
	      "    --version                    Show the version\n"
	      "    --args FD                    Read more options from FD, NUL-separated\n"
	      "    --argv0 VALUE                argv[0] seen by COMMAND\n"
	      "    --level-prefix               Prefix diagnostics with <N> severity levels\n"
	      "    --unshare-all                New user(try)/ipc/pid/net/uts/cgroup(try) namespaces\n"
	      "    --share-net                  Keep the network namespace (after --unshare-all)\n"
	      "    --unshare-user[-try]         New user namespace (implied when unprivileged)\n"
	      "    --unshare-ipc|-pid|-net|-uts New ipc / pid / network / uts namespace\n"
	      "    --unshare-cgroup[-try]       New cgroup namespace\n"
	      "    --userns FD  --userns2 FD  --pidns FD   Join existing namespaces\n"
	      "    --disable-userns  --assert-userns-disabled\n"
	      "    --uid UID  --gid GID         Ids inside (with --unshare-user)\n"
	      "    --hostname NAME              Host name inside (with --unshare-uts)\n"
	      "    --chdir DIR                  Working directory inside\n"
	      "    --clearenv  --setenv VAR VALUE  --unsetenv VAR\n"
	      "    --lock-file DEST             Hold a lock on DEST while running\n"
	      "    --sync-fd FD                 Keep FD open while running\n"
	      "    --bind[-try] SRC DEST        Bind SRC on DEST read-write\n"
	      "    --dev-bind[-try] SRC DEST    Same, device nodes usable\n"
	      "    --ro-bind[-try] SRC DEST     Bind SRC on DEST read-only\n"
	      "    --bind-fd FD DEST  --ro-bind-fd FD DEST   Bind an open directory\n"
	      "    --remount-ro DEST            Make DEST read-only\n"
	      "    --overlay-src SRC            Lower layer for the next overlay\n"
	      "    --overlay RWSRC WORKDIR DEST --tmp-overlay DEST  --ro-overlay DEST\n"
	      "    --exec-label LABEL  --file-label LABEL   SELinux labels\n"
	      "    --proc DEST  --dev DEST  --tmpfs DEST  --mqueue DEST  --dir DEST\n"
	      "    --file FD DEST               Copy FD's data into a new file DEST\n"
	      "    --bind-data FD DEST  --ro-bind-data FD DEST   Bind FD's data on DEST\n"
	      "    --symlink SRC DEST           Symlink DEST -> SRC\n"
	      "    --chmod OCTAL PATH           chmod an existing PATH\n"
	      "    --perms OCTAL  --size BYTES  Modes/size of the next operation\n"
	      "    --seccomp FD  --add-seccomp-fd FD   Raw seccomp BPF programs\n"
	      "    --block-fd FD  --userns-block-fd FD   Wait for data on FD first\n"
	      "    --info-fd FD  --json-status-fd FD   Report pid, namespaces, exit code\n"
	      "    --new-session  --die-with-parent  --as-pid-1\n"
	      "    --cap-add CAP  --cap-drop CAP\n"
	      "  cloister extensions:\n"
	      "    --memory SIZE  --memory-swap SIZE  --cpus N  --pids N\n"
	      "    --seccomp-profile FILE.json|default  --timeout SECONDS\n"
	      "    --json-status FILE  --publish SPEC  --forward-out SPEC\n", f);
}

static bool level_prefix;

void cl_bwrap_warn(const char *msg)
{
	fprintf(stderr, "%sbwrap: %s\n", level_prefix ? "<4>" : "", msg);
}

static int ext_limit(struct cl_policy *p, const char *n, const char *v, cl_error *err)
{
	uint64_t x;

	if (strcmp(n, "--memory") == 0) {
		if (cl_parse_size(v, &p->limits.memory) < 0)
			return cl_fail(err, 0, "--memory '%s': expected a size like 512m", v);
	} else if (strcmp(n, "--memory-swap") == 0) {
		if (strcmp(v, "0") == 0)
			p->limits.memory_swap = 0;
		else if (cl_parse_size(v, &x) == 0 && x <= INT64_MAX)
			p->limits.memory_swap = (int64_t)x;
		else
			return cl_fail(err, 0, "--memory-swap '%s': expected a size like 1g, or 0", v);
	} else if (strcmp(n, "--cpus") == 0) {
		if (cl_parse_cpus(v, &p->limits.cpu_quota_us, &p->limits.cpu_period_us) < 0)
			return cl_fail(err, 0, "--cpus '%s': expected a number like 1.5", v);
	} else if (cl_parse_u64(v, 1, 4194304, &p->limits.pids) < 0) {
		return cl_fail(err, 0, "--pids '%s': expected a number from 1 to 4194304", v);
	}
	return 0;
}

/* Port relays, as `cloister run --publish/--forward-out` (they need the
 * sandbox's own network: --unshare-net, checked once the line is known). */
static int ext_publish(struct cl_policy *p, const char *v, cl_error *err)
{
	return cl_policy_add_publish(p, v, err);
}

static int ext_forward(struct cl_policy *p, const char *v, cl_error *err)
{
	return cl_policy_add_forward(p, v, err);
}

static int set_path(char **slot, const char *v, const char *opt, cl_error *err)
{
	if (!*v)
		return cl_fail(err, 0, "%s: empty file name", opt);
	free(*slot);
	*slot = strdup(v);
	return *slot ? 0 : cl_fail(err, ENOMEM, "%s", opt);
}

int cl_bwrap_ext_option(struct cl_bwrap *b, const struct cl_bwrap_opt *o, char **a,
                        cl_error *err)
{
	struct cl_policy *p = b->p;
	const char *n = o->name;

	if (strcmp(n, "--level-prefix") == 0) {
		cl_error_prog = "<3>bwrap";
		level_prefix = true;
		return 0;
	}
	if (strcmp(n, "--seccomp-profile") == 0) {
		if (strcmp(a[0], "default") == 0) {
			p->seccomp = CL_SC_DEFAULT;
			return 0;
		}
		p->seccomp = CL_SC_PROFILE;
		return set_path(&p->seccomp_path, a[0], n, err);
	}
	if (strcmp(n, "--timeout") == 0) {
		if (cl_parse_seconds(a[0], &p->timeout_ms) < 0)
			return cl_fail(err, 0, "--timeout '%s': expected seconds > 0, like 30 or 0.5", a[0]);
		/* Only a pid namespace lets the timeout kill every process of
		 * the sandbox at once (its init's death takes all with it). */
		b->unshare_pid = true;
		return 0;
	}
	if (strcmp(n, "--json-status") == 0)
		return set_path(&p->json_status_path, a[0], n, err);
	if (strcmp(n, "--publish") == 0)
		return ext_publish(p, a[0], err);
	if (strcmp(n, "--forward-out") == 0)
		return ext_forward(p, a[0], err);
	return ext_limit(p, n, a[0], err);
}
