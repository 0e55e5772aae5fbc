/* bwrap front-end odds and ends: --args FD reading (no size limit beyond
 * memory), the usage text, and cloister's extension options. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/cli/bwrap/bwrap.h"
#include "src/util/fdio.h"
#include "src/policy/parse.h"
#include "src/policy/runtime.h"

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
	      "    --help                       Show this text and exit\n"
	      "    --version                    Show the bubblewrap version implemented\n"
	      "    --args FD                    Read further NUL-separated options from FD\n"
	      "    --argv0 VALUE                argv[0] the command sees\n"
	      "    --level-prefix               Prefix diagnostics with <N> syslog levels\n"
	      "    --unshare-all                New namespaces: user?, ipc, pid, net, uts, cgroup?\n"
	      "    --share-net                  Keep the network namespace (only after --unshare-all)\n"
	      "    --unshare-user               New user namespace (always made when not root)\n"
	      "    --unshare-user-try           New user namespace when the host allows one\n"
	      "    --unshare-ipc                New ipc namespace\n"
	      "    --unshare-pid                New pid namespace\n"
	      "    --unshare-net                New network namespace (loopback only)\n"
	      "    --unshare-uts                New uts namespace\n"
	      "    --unshare-cgroup             New cgroup namespace\n"
	      "    --unshare-cgroup-try         New cgroup namespace when the kernel has them\n"
	      "    --userns FD                  Join this user namespace (not with --unshare-user)\n"
	      "    --userns2 FD                 Enter this user namespace after setup (with --userns)\n"
	      "    --disable-userns             No further user namespaces inside the sandbox\n"
	      "    --assert-userns-disabled     Fail unless user namespaces are already disabled inside\n"
	      "    --pidns FD                   Join this pid namespace\n"
	      "    --uid UID                    uid inside (needs --unshare-user or --userns)\n"
	      "    --gid GID                    gid inside (needs --unshare-user or --userns)\n"
	      "    --hostname NAME              Host name inside (needs --unshare-uts)\n"
	      "    --chdir DIR                  Working directory inside\n"
	      "    --clearenv                   Start with an empty environment\n"
	      "    --setenv VAR VALUE           Set VAR in the environment\n"
	      "    --unsetenv VAR               Remove VAR from the environment\n"
	      "    --lock-file DEST             Hold a lock on DEST for as long as the sandbox runs\n"
	      "    --sync-fd FD                 Keep FD open for as long as the sandbox runs\n"
	      "    --bind SRC DEST              Bind the host's SRC on DEST, writable\n"
	      "    --bind-try SRC DEST          --bind, skipped when SRC does not exist\n"
	      "    --dev-bind SRC DEST          --bind, device nodes usable\n"
	      "    --dev-bind-try SRC DEST      --dev-bind, skipped when SRC does not exist\n"
	      "    --ro-bind SRC DEST           Bind the host's SRC on DEST, read-only\n"
	      "    --ro-bind-try SRC DEST       --ro-bind, skipped when SRC does not exist\n"
	      "    --bind-fd FD DEST            Bind the directory or O_PATH fd FD on DEST\n"
	      "    --ro-bind-fd FD DEST         --bind-fd, read-only\n"
	      "    --remount-ro DEST            Make the mount at DEST read-only (not recursive)\n"
	      "    --overlay-src SRC            A lower layer for the next overlay\n"
	      "    --overlay RWSRC WORKDIR DEST Overlay with writes kept in RWSRC\n"
	      "    --tmp-overlay DEST           Overlay with writes kept in an invisible tmpfs\n"
	      "    --ro-overlay DEST            Read-only overlay\n"
	      "    --exec-label LABEL           SELinux exec label (unsupported here)\n"
	      "    --file-label LABEL           SELinux file label (unsupported here)\n"
	      "    --proc DEST                  A new procfs on DEST\n"
	      "    --dev DEST                   A new minimal /dev on DEST\n"
	      "    --tmpfs DEST                 A new tmpfs on DEST\n"
	      "    --mqueue DEST                A new mqueue filesystem on DEST\n"
	      "    --dir DEST                   Create the directory DEST\n"
	      "    --file FD DEST               Copy FD's data into the new file DEST\n"
	      "    --bind-data FD DEST          Copy FD's data into a file bound on DEST\n"
	      "    --ro-bind-data FD DEST       --bind-data, read-only\n"
	      "    --symlink SRC DEST           Create DEST as a symlink to SRC\n"
	      "    --seccomp FD                 Install the raw seccomp program read from FD (once)\n"
	      "    --add-seccomp-fd FD          Install another raw seccomp program (repeatable)\n"
	      "    --block-fd FD                Wait for data on FD before running the command\n"
	      "    --userns-block-fd FD         Wait for data on FD once the user namespace exists\n"
	      "    --info-fd FD                 Write the sandbox's pid and namespaces to FD\n"
	      "    --json-status-fd FD          Write JSON status documents (pid, exit code) to FD\n"
	      "    --new-session                Run the command in a new session (setsid)\n"
	      "    --die-with-parent            SIGKILL the sandbox when its starting process dies\n"
	      "    --as-pid-1                   The command is pid 1 itself, no reaper\n"
	      "    --not-a-security-boundary    Accepted (0.12); cloister still fails closed\n"
	      "    --cap-add CAP                Keep or add capability CAP (ALL for all)\n"
	      "    --cap-drop CAP               Drop capability CAP (ALL for all)\n"
	      "    --perms OCTAL                Mode of the next file-creating option\n"
	      "    --size BYTES                 Size limit of the next --tmpfs\n"
	      "    --chmod OCTAL PATH           chmod the existing PATH\n"
	      "  cloister extensions:\n"
	      "    --memory SIZE                Memory limit (cgroup)\n"
	      "    --memory-swap SIZE           Memory+swap limit (cgroup)\n"
	      "    --cpus N                     CPU limit (cgroup)\n"
	      "    --pids N                     Process count limit (cgroup)\n"
	      "    --seccomp-profile FILE.json|default A cloister/OCI seccomp profile\n"
	      "    --timeout SECONDS            Kill the sandbox after SECONDS (exit 124)\n"
	      "    --json-status FILE           cloister's status JSON\n"
	      "    --publish SPEC               [IP:]HPORT:SPORT[/udp] (needs --unshare-net)\n"
	      "    --forward-out SPEC           SPORT:HOST:HPORT (needs --unshare-net)\n"
	      "    --workspace DIR              DIR writable as an overlay, DIR itself untouched\n"
	      "    --diff-out FILE              The workspace's changes as a diff bundle\n"
	      "    --runtime native|auto        The executor (native only; docker and codeplane\n"
	      "                                 cannot represent a bwrap command line)\n"
	      "  Environment:\n"
	      "    CLOISTER_BWRAP_POLICY=FILE   Hardening policy for every run (else\n"
	      "                                 /etc/cloister/bwrap.json if present)\n", f);
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

/* --runtime: bwrap mode runs on the native executor only. docker and
 * codeplane build the root from an image and take cloister run's mount
 * list; a bwrap argv's empty root built from ordered binds, symlinks,
 * files from fds, --dev/--proc and inherited fds has no faithful mapping
 * there, so they are refused rather than approximated. auto is native
 * (the one runtime that can run the argv), with no fallback. */
static int ext_runtime(struct cl_bwrap *b, const char *v, cl_error *err)
{
	int rt = cl_runtime_parse(v);

	if (rt < 0)
		return cl_fail(err, 0, "--runtime '%s': expected auto, native, docker or codeplane", v);
	if (rt == CL_RT_DOCKER || rt == CL_RT_CODEPLANE)
		return cl_fail(err, 0, "--runtime %s: not available in bwrap mode (the %s executor "
		               "cannot represent a bwrap command line: an empty root built from "
		               "ordered binds, symlinks, --dev and --proc); use --runtime native or "
		               "cloister run --runtime %s", v, v, v);
	b->p->runtime = (enum cl_runtime)rt;
	return 0;
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
	if (strcmp(n, "--workspace") == 0)
		return set_path(&p->workspace, a[0], n, err);
	if (strcmp(n, "--diff-out") == 0)
		return set_path(&p->diff_out, a[0], n, err);
	if (strcmp(n, "--runtime") == 0)
		return ext_runtime(b, a[0], err);
	if (strcmp(n, "--publish") == 0)
		return ext_publish(p, a[0], err);
	if (strcmp(n, "--forward-out") == 0)
		return ext_forward(p, a[0], err);
	return ext_limit(p, n, a[0], err);
}
