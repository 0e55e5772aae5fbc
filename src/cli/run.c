/* `cloister run`: options (names are the contract in docs/cloister.1) into
 * the deny-by-default policy. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#if CL_NATIVE
#include "src/policy/caps.h"
#else
#include "src/executors/docker_body.h"
#endif
#include "src/cli/cli.h"
#include "src/policy/parse.h"
#include "src/policy/runtime.h"
#include "src/workspace/snapshot.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

enum {
	O_RO = 256, O_RW, O_TMPFS, O_ROOTFS, O_HERE, O_ENV, O_INHERIT_ENV, O_NETWORK, O_UID,
	O_GID, O_HOSTNAME, O_CAP_ADD, O_CAP_DROP, O_TIMEOUT, O_JSON_STATUS, O_DRY_RUN, O_JSON,
	O_MEMORY, O_MEMORY_SWAP, O_CPUS, O_PIDS, O_CGROUP_PARENT, O_SECCOMP, O_SECCOMP_BPF,
	O_ALLOW_NESTED, O_PUBLISH, O_FORWARD_OUT, O_OUTPUT_LIMIT, O_WORKSPACE, O_DIFF_OUT,
	O_RUNTIME, O_IMAGE, O_HOST_ROOT, O_SNAPSHOT, O_PUBLISH_WAIT,
	O_WORKSPACE_IGNORE,
};

static const struct option run_options[] = {
	{"ro", required_argument, NULL, O_RO},
	{"rw", required_argument, NULL, O_RW},
	{"tmpfs", required_argument, NULL, O_TMPFS},
	{"rootfs", required_argument, NULL, O_ROOTFS},
	{"workdir", required_argument, NULL, 'w'},
	{"here", no_argument, NULL, O_HERE},
	{"env", required_argument, NULL, O_ENV},
	{"inherit-env", no_argument, NULL, O_INHERIT_ENV},
	{"network", required_argument, NULL, O_NETWORK},
	{"uid", required_argument, NULL, O_UID},
	{"gid", required_argument, NULL, O_GID},
	{"hostname", required_argument, NULL, O_HOSTNAME},
	{"cap-add", required_argument, NULL, O_CAP_ADD},
	{"cap-drop", required_argument, NULL, O_CAP_DROP},
	{"timeout", required_argument, NULL, O_TIMEOUT},
	{"json-status", required_argument, NULL, O_JSON_STATUS},
	{"dry-run", no_argument, NULL, O_DRY_RUN},
	{"json", no_argument, NULL, O_JSON},
	{"memory", required_argument, NULL, O_MEMORY},
	{"memory-swap", required_argument, NULL, O_MEMORY_SWAP},
	{"cpus", required_argument, NULL, O_CPUS},
	{"pids", required_argument, NULL, O_PIDS},
	{"cgroup-parent", required_argument, NULL, O_CGROUP_PARENT},
	{"seccomp", required_argument, NULL, O_SECCOMP},
	{"seccomp-bpf", required_argument, NULL, O_SECCOMP_BPF},
	{"allow-nested", no_argument, NULL, O_ALLOW_NESTED},
	{"publish", required_argument, NULL, O_PUBLISH},
	{"publish-wait", required_argument, NULL, O_PUBLISH_WAIT},
	{"forward-out", required_argument, NULL, O_FORWARD_OUT},
	{"output-limit", required_argument, NULL, O_OUTPUT_LIMIT},
	{"workspace", required_argument, NULL, O_WORKSPACE},
	{"diff-out", required_argument, NULL, O_DIFF_OUT},
	{"snapshot", required_argument, NULL, O_SNAPSHOT},
	{"workspace-ignore", required_argument, NULL, O_WORKSPACE_IGNORE},
	{"runtime", required_argument, NULL, O_RUNTIME},
	{"image", required_argument, NULL, O_IMAGE},
	{"host-root", no_argument, NULL, O_HOST_ROOT},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

void cl_cli_run_usage(FILE *f)
{
	fputs("usage: cloister run [OPTIONS] [--] COMMAND [ARG...]\n"
	      "  --ro SRC[:DEST]  --rw SRC[:DEST]  --tmpfs DEST[:size=N]  --rootfs DIR\n"
	      "  -w, --workdir DIR  --here  --env K=V  --inherit-env  --hostname NAME\n"
	      "  --network none|host  --uid N  --gid N  --cap-add CAP  --cap-drop CAP\n"
	      "  --memory SIZE  --memory-swap SIZE  --cpus N  --pids N  --cgroup-parent PATH\n"
	      "  --seccomp default|unconfined|FILE.json  --seccomp-bpf FILE  --allow-nested\n"
	      "  --publish [IP:]HPORT:SPORT[/udp]  --publish-wait MS  --forward-out SPORT:HOST:HPORT\n"
	      "  --timeout SECONDS  --output-limit BYTES  --json-status FILE|fd:N\n"
	      "  --runtime auto|native|docker|codeplane  --image IMAGE (docker)\n"
	      "  --workspace DIR  --snapshot ID  --diff-out FILE  --workspace-ignore git|none\n"
	      "  --dry-run --json  --host-root\n"
	      "See cloister(1).\n", f);
}

static char *xstrdup_set(char **slot, const char *v)
{
	free(*slot);
	*slot = strdup(v);
	return *slot;
}

/* SRC[:DEST] with DEST defaulting to SRC. */
static int add_bind(struct cl_policy *p, const char *arg, unsigned flags, cl_error *err)
{
	char *copy = strdup(arg);
	char *colon = copy ? strchr(copy, ':') : NULL;
	const char *dest;
	int rc = 0;

	if (!copy)
		return cl_fail(err, ENOMEM, "parsing %s", arg);
	if (colon)
		*colon = '\0';
	dest = colon ? colon + 1 : copy;
	if (copy[0] != '/' || dest[0] != '/')
		rc = cl_fail(err, 0, "bind '%s': source and destination must be absolute paths", arg);
	else if (!cl_policy_add_mount(p, CL_MNT_BIND, copy, dest, flags))
		rc = cl_fail(err, ENOMEM, "adding bind %s", arg);
	free(copy);
	return rc;
}

static int add_tmpfs(struct cl_policy *p, const char *arg, cl_error *err)
{
	char *copy = strdup(arg);
	char *opt = copy ? strchr(copy, ':') : NULL;
	struct cl_mount *m;
	/* Without size=, the same cap as the default /tmp (a tmpfs with no
	 * size may take half of RAM); size= raises or lowers it. */
	uint64_t size = cl_policy_default_tmpfs_size();
	int rc = 0;

	if (!copy)
		return cl_fail(err, ENOMEM, "parsing --tmpfs %s", arg);
	if (opt) {
		*opt++ = '\0';
		if (strncmp(opt, "size=", 5) != 0 || cl_parse_size(opt + 5, &size) < 0)
			rc = cl_fail(err, 0, "--tmpfs '%s': expected DEST[:size=N] with N like 64m", arg);
	}
	if (rc == 0 && copy[0] != '/')
		rc = cl_fail(err, 0, "--tmpfs '%s': destination must be an absolute path", arg);
	if (rc == 0) {
		m = cl_policy_add_mount(p, CL_MNT_TMPFS, NULL, copy, 0);
		if (!m)
			rc = cl_fail(err, ENOMEM, "adding --tmpfs %s", arg);
		else
			m->size = size;
	}
	free(copy);
	return rc;
}

static int set_env(struct cl_policy *p, const char *kv, cl_error *err)
{
	const char *eq = strchr(kv, '=');
	char key[256];
	size_t klen = eq ? (size_t)(eq - kv) : strlen(kv);
	const char *val;

	if (klen == 0 || klen >= sizeof(key))
		return cl_fail(err, 0, "--env '%s': expected K=V", kv);
	memcpy(key, kv, klen);
	key[klen] = '\0';
	/* "--env K" copies K from the caller's environment, as docker does. */
	val = eq ? eq + 1 : getenv(key);
	if (!val)
		return 0;
	return cl_policy_setenv(p, key, val) < 0 ? cl_fail(err, ENOMEM, "setting %s", key) : 0;
}

static int base_env(struct cl_policy *p, bool inherit, cl_error *err)
{
	static const char *const kept[] = {"TERM", "LANG"};
	extern char **environ;

	if (inherit) {
		for (char **e = environ; *e; e++)
			if (strchr(*e, '=') && set_env(p, *e, err) < 0)
				return cl_error_code(err);
		return 0;
	}
	if (cl_policy_setenv(p, "PATH", getenv("PATH") ? getenv("PATH") : DEFAULT_PATH) < 0)
		return cl_fail(err, ENOMEM, "setting PATH");
	for (size_t i = 0; i < sizeof(kept) / sizeof(*kept); i++)
		if (getenv(kept[i]) && cl_policy_setenv(p, kept[i], getenv(kept[i])) < 0)
			return cl_fail(err, ENOMEM, "setting %s", kept[i]);
	return 0;
}

static int parse_id(const char *opt, const char *v, unsigned *out, cl_error *err)
{
	uint64_t n;

	if (cl_parse_u64(v, 0, 4294967294ULL, &n) < 0)
		return cl_fail(err, 0, "%s '%s': expected a number from 0 to 4294967294", opt, v);
	*out = (unsigned)n;
	return 0;
}

static int parse_json_status(struct cl_policy *p, const char *v, cl_error *err)
{
	uint64_t fd;

	if (strncmp(v, "fd:", 3) == 0) {
		if (cl_parse_u64(v + 3, 0, 1 << 20, &fd) < 0)
			return cl_fail(err, 0, "--json-status '%s': expected FILE or fd:N", v);
		p->json_status_fd = (int)fd;
		return 0;
	}
	if (!*v)
		return cl_fail(err, 0, "--json-status: empty file name");
	return xstrdup_set(&p->json_status_path, v) ? 0 : cl_fail(err, ENOMEM, "--json-status");
}

/* Deferred: env vars and binds that need the whole command line first. */
struct run_state {
	char **envs;
	bool inherit_env;
	bool here;
	bool workdir_set;
	bool host_root;
};

static int parse_limit(int c, const char *v, struct cl_policy *p, cl_error *err)
{
	uint64_t n;

	switch (c) {
	case O_MEMORY:
		if (cl_parse_size(v, &p->limits.memory) < 0)
			return cl_fail(err, 0, "--memory '%s': expected a size like 512m (b, k, m, g)", v);
		return 0;
	case O_MEMORY_SWAP:
		if (strcmp(v, "0") == 0)
			p->limits.memory_swap = 0;
		else if (cl_parse_size(v, &n) == 0 && n <= INT64_MAX)
			p->limits.memory_swap = (int64_t)n;
		else
			return cl_fail(err, 0, "--memory-swap '%s': expected a size like 1g, or 0", v);
		return 0;
	case O_CPUS:
		if (cl_parse_cpus(v, &p->limits.cpu_quota_us, &p->limits.cpu_period_us) < 0)
			return cl_fail(err, 0, "--cpus '%s': expected a positive number like 1.5 (at least 0.01)", v);
		return 0;
	case O_PIDS:
		if (cl_parse_u64(v, 1, 4194304, &p->limits.pids) < 0)
			return cl_fail(err, 0, "--pids '%s': expected a number from 1 to 4194304", v);
		return 0;
	default:
		if (v[0] != '/')
			return cl_fail(err, 0, "--cgroup-parent '%s': expected an absolute cgroup path", v);
		return xstrdup_set(&p->limits.cgroup_parent, v) ? 0 : cl_fail(err, ENOMEM, "--cgroup-parent");
	}
}

#if CL_NATIVE
static int caps_parse(const char *name, uint64_t *mask)
{
	return cl_caps_parse(name, mask);
}
#else
/* Without libcap (NATIVE=0): the names docker knows, CAP_ optional. */
static int caps_parse(const char *name, uint64_t *mask)
{
	const char *n;

	*mask = 0;
	for (unsigned c = 0; (n = cl_docker_cap_name(c)); c++) {
		if (strcasecmp(name, "ALL") == 0)
			*mask |= 1ULL << c;
		else if (strcasecmp(name, n) == 0 || strcasecmp(name, n + 4) == 0)
			*mask = 1ULL << c;
	}
	return *mask ? 0 : -EINVAL;
}
#endif

static int parse_caps(int c, const char *v, struct cl_policy *p, cl_error *err)
{
	uint64_t mask;

	if (caps_parse(v, &mask) < 0)
		return cl_fail(err, 0, "%s '%s': unknown capability", c == O_CAP_ADD ? "--cap-add" : "--cap-drop", v);
	if (c == O_CAP_ADD)
		p->caps_keep |= mask;
	else
		p->caps_keep &= ~mask;
	return 0;
}

static int parse_one(int c, const char *v, struct cl_policy *p, struct cl_run_opts *o,
                     struct run_state *rs, cl_error *err)
{
	uint64_t n;

	switch (c) {
	case O_RO: return add_bind(p, v, CL_MF_RO, err);
	case O_RW: return add_bind(p, v, 0, err);
	case O_TMPFS: return add_tmpfs(p, v, err);
	case O_ROOTFS:
		if (v[0] != '/')
			return cl_fail(err, 0, "--rootfs '%s' must be an absolute path", v);
		return xstrdup_set(&p->rootfs, v) ? 0 : cl_fail(err, ENOMEM, "--rootfs");
	case 'w':
		rs->workdir_set = true;
		return xstrdup_set(&p->workdir, v) ? 0 : cl_fail(err, ENOMEM, "--workdir");
	case O_HERE: rs->here = true; return 0;
	case O_ENV: return cl_strv_push(&rs->envs, v) ? 0 : cl_fail(err, ENOMEM, "--env");
	case O_INHERIT_ENV: rs->inherit_env = true; return 0;
	case O_NETWORK:
		if (strcmp(v, "none") == 0)
			p->network = CL_NET_NONE;
		else if (strcmp(v, "host") == 0)
			p->network = CL_NET_HOST;
		else
			return cl_fail(err, 0, "--network '%s': expected none or host", v);
		return 0;
	case O_UID: return parse_id("--uid", v, &p->uid, err);
	case O_GID: return parse_id("--gid", v, &p->gid, err);
	case O_HOSTNAME: return xstrdup_set(&p->hostname, v) ? 0 : cl_fail(err, ENOMEM, "--hostname");
	case O_CAP_ADD: case O_CAP_DROP: return parse_caps(c, v, p, err);
	case O_TIMEOUT:
		if (cl_parse_seconds(v, &p->timeout_ms) < 0)
			return cl_fail(err, 0, "--timeout '%s': expected seconds > 0, like 30 or 0.5", v);
		return 0;
	case O_JSON_STATUS: return parse_json_status(p, v, err);
	case O_DRY_RUN: o->dry_run = true; return 0;
	case O_JSON: o->json = true; return 0;
	case O_MEMORY: case O_MEMORY_SWAP: case O_CPUS: case O_PIDS: case O_CGROUP_PARENT:
		return parse_limit(c, v, p, err);
	case O_SECCOMP:
		if (strcmp(v, "default") == 0)
			p->seccomp = CL_SC_DEFAULT;
		else if (strcmp(v, "unconfined") == 0)
			p->seccomp = CL_SC_UNCONFINED;
		else if (v[0])
			p->seccomp = CL_SC_PROFILE;
		else
			return cl_fail(err, 0, "--seccomp: expected default, unconfined or FILE.json");
		return p->seccomp != CL_SC_PROFILE || xstrdup_set(&p->seccomp_path, v) ? 0
		       : cl_fail(err, ENOMEM, "--seccomp");
	case O_SECCOMP_BPF:
		p->seccomp = CL_SC_BPF;
		return xstrdup_set(&p->seccomp_path, v) ? 0 : cl_fail(err, ENOMEM, "--seccomp-bpf");
	case O_ALLOW_NESTED: p->allow_nested = true; return 0;
	case O_OUTPUT_LIMIT:
		if (cl_parse_size(v, &n) < 0 || n == 0)
			return cl_fail(err, 0, "--output-limit '%s': expected a byte count > 0 (b, k, m, g)", v);
		p->output_limit = n;
		return 0;
	case O_PUBLISH: return cl_policy_add_publish(p, v, err);
	case O_PUBLISH_WAIT:
		if (cl_parse_u64(v, 0, CL_MAX_PUBLISH_WAIT_MS, &n) < 0)
			return cl_fail(err, 0, "--publish-wait '%s': expected milliseconds from 0 to %u",
			               v, CL_MAX_PUBLISH_WAIT_MS);
		p->publish_wait_ms = (uint32_t)n;
		return 0;
	case O_FORWARD_OUT: return cl_policy_add_forward(p, v, err);
	case O_WORKSPACE:
		if (!v[0])
			return cl_fail(err, 0, "--workspace: expected a directory");
		return xstrdup_set(&p->workspace, v) ? 0 : cl_fail(err, ENOMEM, "--workspace");
	case O_DIFF_OUT:
		if (!v[0])
			return cl_fail(err, 0, "--diff-out: expected a file name");
		return xstrdup_set(&p->diff_out, v) ? 0 : cl_fail(err, ENOMEM, "--diff-out");
	case O_SNAPSHOT:
		if (!ws_snap_id_ok(v))
			return cl_fail(err, 0, "--snapshot '%s': expected a snapshot id (1 to 64 letters, "
			               "digits, '.', '_', '-', the first a letter or digit)", v);
		return xstrdup_set(&p->ws_snapshot, v) ? 0 : cl_fail(err, ENOMEM, "--snapshot");
	case O_WORKSPACE_IGNORE:
		if (cl_ws_ignore_parse(v) < 0)
			return cl_fail(err, 0, "--workspace-ignore '%s': expected git (leave out what git's "
			               "ignore rules ignore) or none (capture everything)", v);
		p->ws_ignore_none = cl_ws_ignore_parse(v) == 1;
		p->ws_ignore_set = true;
		return 0;
	case O_RUNTIME:
		if (cl_runtime_parse(v) < 0)
			return cl_fail(err, 0, "--runtime '%s': expected auto, native, docker or codeplane", v);
		p->runtime = (enum cl_runtime)cl_runtime_parse(v);
		return 0;
	case O_IMAGE:
		if (!v[0])
			return cl_fail(err, 0, "--image: expected an image name like debian:bookworm-slim");
		return xstrdup_set(&p->image, v) ? 0 : cl_fail(err, ENOMEM, "--image");
	case O_HOST_ROOT: rs->host_root = true; return 0;
	case 'h': o->help = true; return 0;
	default:
		return cl_fail(err, 0, "unknown option (see cloister run --help)");
	}
}

/* After all options: defaults and deferred pieces in a fixed order (default
 * mounts first, so user binds land on top of them). */
static int finish(struct cl_policy *p, struct run_state *rs, cl_error *err)
{
	char cwd[4096];

	if (p->network == CL_NET_HOST)
		p->ns_flags &= ~CLONE_NEWNET;
	/* Tasks are bounded even without a cgroup; --pids sets both (the
	 * cgroup's pids.max keeps the asked value, the rlimit stays under the
	 * caller's hard limit). */
	p->rlimit_nproc = cl_policy_nproc_bound(p->limits.pids ? p->limits.pids : CL_DEFAULT_NPROC);
	/* The copied host name would leak which machine this is. */
	if (!p->hostname && !(p->hostname = strdup("cloister")))
		return cl_fail(err, ENOMEM, "setting the hostname");
	if (base_env(p, rs->inherit_env, err) < 0)
		return cl_error_code(err);
	for (size_t i = 0; rs->envs && rs->envs[i]; i++)
		if (set_env(p, rs->envs[i], err) < 0)
			return cl_error_code(err);
	if (rs->here) {
		if (!getcwd(cwd, sizeof(cwd)))
			return cl_fail_errno(err, "--here: reading the current directory");
		if (!cl_policy_add_mount(p, CL_MNT_BIND, cwd, cwd, 0))
			return cl_fail(err, ENOMEM, "--here");
		if (!rs->workdir_set && !xstrdup_set(&p->workdir, cwd))
			return cl_fail(err, ENOMEM, "--here");
	}
	return 0;
}

int cl_cli_run_parse(int argc, char **argv, struct cl_policy *p, struct cl_run_opts *o,
                     cl_error *err)
{
	struct run_state rs = {0};
	struct cl_mount *user_mounts;
	size_t n_user, n_default;
	int c, rc = 0;

	cl_policy_init(p);
	memset(o, 0, sizeof(*o));
	opterr = 0;
	/* 0, not 1: glibc then drops all of a previous call's state, including
	 * its place inside a bundle of short options ("-wX"), which otherwise
	 * points into that call's argv (a use after free when it is gone). */
	optind = 0;
	/* "+": stop at the first non-option, the command's own flags follow. */
	while (rc == 0 && (c = getopt_long(argc, argv, "+w:h", run_options, NULL)) != -1) {
		if (c == '?' || c == ':') {
			const char *bad = argv[optind - 1];
			rc = cl_fail(err, 0, c == ':' || (optopt && strchr("w", optopt))
			             ? "option '%s' needs a value (see cloister run --help)"
			             : "unknown option '%s' (see cloister run --help)", bad);
			break;
		}
		rc = parse_one(c, optarg, p, o, &rs, err);
	}
	/* User mounts were collected in order; default mounts go underneath. */
	user_mounts = p->mounts;
	n_user = p->n_mounts;
	p->mounts = NULL;
	p->n_mounts = 0;
	if (rc == 0)
		rc = cl_policy_add_default_mounts(p, err);
	n_default = p->n_mounts;
	for (size_t i = 0; i < n_user; i++) {
		if (rc == 0) {
			struct cl_mount *m = cl_policy_add_mount(p, user_mounts[i].kind, NULL, NULL, 0);
			if (!m) {
				rc = cl_fail(err, ENOMEM, "adding mounts");
			} else {
				*m = user_mounts[i];
				continue;
			}
		}
		free(user_mounts[i].src);
		free(user_mounts[i].dest);
	}
	free(user_mounts);
	if (rc == 0)
		rc = finish(p, &rs, err);
	if (rc == 0 && !rs.host_root)
		cl_policy_root_identity(p, n_default);
	if (rc == 0 && p->diff_out && !p->workspace)
		rc = cl_fail(err, 0, "--diff-out needs --workspace DIR (the directory whose changes it records)");
	if (rc == 0 && p->ws_ignore_set && !p->workspace)
		rc = cl_fail(err, 0, "--workspace-ignore needs --workspace DIR (the directory whose changes it filters)");
	if (rc == 0 && p->ws_snapshot && !p->workspace)
		rc = cl_fail(err, 0, "--snapshot needs --workspace DIR (where the snapshot's tree is seen)");
	cl_strv_free(rs.envs);
	if (rc < 0 || o->help)
		return rc;
	for (int i = optind; i < argc; i++)
		if (!cl_strv_push(&p->argv, argv[i]))
			return cl_fail(err, ENOMEM, "copying the command line");
	return cl_policy_validate(p, err);
}
