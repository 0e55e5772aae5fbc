/* struct cl_policy: the one plain-data description of a sandbox. Front-ends
 * fill it, cl_policy_validate() checks it once, executors only read it. */
#ifndef CL_POLICY_H
#define CL_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/util/error.h"

/* The host uid and gid a root caller's sandbox runs as by default: no
 * account or subordinate range uses it unless configured to (useradd hands
 * out subordinate ids below 600100000). docs/security.md, "Root callers". */
#define CL_UNPRIVILEGED_HOST_ID 1879048192u

/* Mount operations run in order, as bwrap runs its argv. */
enum cl_mount_kind {
	CL_MNT_BIND,        /* src -> dest, flags say ro/dev/optional */
	CL_MNT_TMPFS,       /* tmpfs at dest, size/mode */
	CL_MNT_PROC,        /* fresh proc at dest (with masks) */
	CL_MNT_DEV,         /* minimal /dev at dest */
	CL_MNT_MQUEUE,      /* mqueue at dest */
	CL_MNT_DIR,         /* mkdir dest */
	CL_MNT_FILE,        /* copy data (from fd) into new file dest */
	CL_MNT_BIND_DATA,   /* data (from fd) bound at dest */
	CL_MNT_SYMLINK,     /* symlink src -> dest */
	CL_MNT_REMOUNT_RO,  /* make dest read-only */
	CL_MNT_CHMOD,       /* chmod dest to mode */
	CL_MNT_OVERLAY,     /* overlay: lower dirs in ovl_lower, upper/work */
};

enum {
	CL_MF_RO = 1 << 0,       /* read-only */
	CL_MF_DEV = 1 << 1,      /* keep device nodes usable (no nodev) */
	CL_MF_TRY = 1 << 2,      /* missing source is not an error */
	CL_MF_KEEP_SYMLINK = 1 << 3, /* a symlink source is recreated as a symlink */
	CL_MF_CALLER_OPEN = 1 << 4, /* source opened by the parent with the caller's rights */
	CL_MF_IDMAP = 1 << 5,    /* and idmapped: the caller's files appear as uid's */
	CL_MF_HOST_SYSTEM = 1 << 6, /* the host's system dirs: an executor with an image uses its own */
	CL_MF_VOLATILE = 1 << 7, /* overlay: no sync of the upper dir (a throwaway one) */
};

struct cl_mount {
	enum cl_mount_kind kind;
	char *src;            /* host path (binds, symlink target, overlay upper) */
	char *dest;           /* absolute path inside the sandbox */
	int src_fd;           /* -1, or an fd source (bind-fd, file/data fds) */
	unsigned flags;       /* CL_MF_* */
	mode_t mode;          /* perms for tmpfs/dir/file, or (mode_t)-1 */
	uint64_t size;        /* tmpfs size in bytes, 0 = kernel default */
	char **ovl_lower;     /* NULL-terminated overlay lower dirs */
	char *ovl_work;       /* overlay workdir (NULL = tmp overlay) */
};

enum cl_network { CL_NET_NONE, CL_NET_HOST };
enum cl_seccomp_mode { CL_SC_DEFAULT, CL_SC_UNCONFINED, CL_SC_PROFILE, CL_SC_BPF };
enum cl_runtime { CL_RT_AUTO, CL_RT_NATIVE, CL_RT_DOCKER, CL_RT_CODEPLANE };

struct cl_limits {
	uint64_t memory;        /* bytes, 0 = unset */
	int64_t memory_swap;    /* bytes incl. memory, -1 = unset, 0 = no swap */
	uint64_t cpu_quota_us;  /* per cpu_period_us, 0 = unset */
	uint64_t cpu_period_us;
	uint64_t pids;          /* 0 = unset */
	char *cgroup_parent;    /* NULL = automatic */
};

struct cl_port {
	char host_ip[64];
	uint16_t host_port;
	uint16_t sandbox_port;
	bool udp;
};

struct cl_forward {
	uint16_t sandbox_port;
	char host[256];
	uint16_t host_port;
};

/* Launch hooks the bwrap front-end needs; cl_policy_init() turns all off. */
struct cl_hooks {
	int info_fd;              /* -1, or {"child-pid", namespace ids} after clone */
	int status_fd;            /* -1, or bwrap JSON documents: start, then exit-code */
	int block_fd;             /* -1, or the command waits for data on it before exec */
	int userns_block_fd;      /* -1, or wait for data instead of writing id maps */
	int *seccomp_fds;         /* raw cBPF programs stacked before exec, in order */
	size_t n_seccomp_fds;
	char *lock_file;          /* path inside, read-locked by init while running */
	bool as_pid_1;            /* no init: the command itself is pid 1 */
	bool keep_fds;            /* inherited fds stay open for the command */
	bool keep_ignored_signals;  /* signals the caller ignores stay ignored (bwrap) */
	bool cwd_fallback;        /* workdir missing: try $HOME, then /; set PWD */
	int exec_fail_code;       /* exit code when exec fails; 0 = 126/127 */
	int userns_fd;            /* -1, or join this user namespace instead of a new one */
	int userns2_fd;           /* -1, or switch to this user namespace after setup */
	int pidns_fd;             /* -1, or this pid namespace (parent of a new one) */
	bool disable_userns;      /* nested user namespace after setup, limit 1 */
	bool assert_userns_disabled;  /* fail unless new user namespaces fail */
	bool caps_keep_current;   /* no capset: the current sets stay as they are */
	bool caps_keep_bounding;  /* the bounding set stays as it is */
	bool init_dumpable;       /* init stays dumpable: its /proc/PID/ns is the caller's to open */
	bool supervisor_pdeathsig;  /* die_with_parent covers the supervisor too (bwrap) */
	bool bwrap_mounts;        /* --proc/--dev as bwrap mounts them: no /proc masks, /dev exec */
	bool proc_masks;          /* with bwrap_mounts: cloister run's /proc masks all the same */
	char console_tty[64];     /* "" or the caller's terminal, bound on DEV/console */
	bool bwrap_msgs;          /* setup errors in bwrap's exact words (clients grep them) */
};

struct cl_policy {
	/* What to run. */
	char **argv;              /* NULL-terminated, owned */
	char *argv0;              /* override of argv[0] (bwrap --argv0) */
	char **env;               /* NULL-terminated "K=V", owned */
	char *workdir;            /* absolute path inside */

	/* Namespaces: CLONE_NEW* bits to create. */
	int ns_flags;
	bool allow_nested;        /* permit user namespaces inside */

	/* Filesystem. */
	char *rootfs;             /* NULL = fresh tmpfs root */
	bool root_readonly;       /* make / read-only when setup is done */
	struct cl_mount *mounts;
	size_t n_mounts;

	/* Identity inside, and the host ids it is (the caller's, or for a root
	 * caller CL_UNPRIVILEGED_HOST_ID unless --host-root). */
	uid_t uid;
	gid_t gid;
	uid_t host_uid;
	gid_t host_gid;
	char *hostname;           /* NULL = leave the copied one */

	/* Privileges. */
	uint64_t caps_keep;       /* bitmask of capabilities kept (cap-add) */
	bool no_new_privs;
	bool new_session;         /* setsid() for the command */
	bool die_with_parent;
	bool pty;                 /* stdio terminals become a pty of the sandbox's own */
	bool session;             /* init runs no command: a session's execs join it */

	/* Network. */
	enum cl_network network;
	struct cl_port *ports;
	size_t n_ports;
	struct cl_forward *forwards;
	size_t n_forwards;
	/* A --publish TCP connection whose inward connect is refused (nothing
	 * listens inside yet) is retried for this long before the client is
	 * reset; 0 = reset at the first refusal (docs/network.md). */
	uint32_t publish_wait_ms;

	/* Limits and supervision. */
	struct cl_limits limits;
	uint64_t timeout_ms;      /* 0 = none */
	uint64_t output_limit;    /* bytes of stdout+stderr passed on, 0 = none */
	uint64_t rlimit_nproc;    /* RLIMIT_NPROC in the sandbox, 0 = the caller's */

	/* Seccomp. */
	enum cl_seccomp_mode seccomp;
	char *seccomp_path;       /* profile JSON or raw BPF file */
	bool seccomp_checked;     /* seccomp_path was named by a trusted config (the bwrap
	                           * policy): read with that config's checks, src/policy/trust.h */

	/* Reporting. */
	char *json_status_path;   /* NULL = none */
	int json_status_fd;       /* -1 = none */

	/* Workspace capture. */
	char *workspace;
	char *diff_out;
	char *ws_snapshot;        /* --snapshot ID: the workspace's tree is that snapshot's */
	bool ws_ignore_none;      /* --workspace-ignore none: git's ignore rules not applied */
	bool ws_ignore_set;       /* --workspace-ignore was given */

	/* Executor choice. */
	enum cl_runtime runtime;
	char *image;

	/* Remote executors (codeplane). spec_io: the binds of a sandbox spec's
	 * request (/workspace), result (/result) and result file are shipped
	 * to the remote machine and collected back, not bound. The rest names
	 * the remote workspace ("" / CL_REMOTE_DEFAULT: the executor's own
	 * configuration decides). */
	bool spec_io;
	char remote_name[64];
	char remote_snapshot[128];
	enum { CL_REMOTE_DEFAULT, CL_REMOTE_EPHEMERAL, CL_REMOTE_STICKY } remote_persistence;

	/* bwrap compatibility (see src/cli_bwrap*.c). */
	struct cl_hooks hooks;
};

/* A root caller's sandbox is not host root: its ids map to
 * CL_UNPRIVILEGED_HOST_ID, so host-only files (/etc/shadow, /root) are out
 * of reach. The caller's binds (mounts from first_user on) are opened with
 * the caller's rights; the writable ones are idmapped, so there the sandbox
 * owns what the caller owns and what it writes is the caller's. Every
 * front-end calls it after its mounts are in place, unless --host-root;
 * a no-op for anyone but host root. docs/security.md, "Root callers". */
void cl_policy_root_identity(struct cl_policy *p, size_t first_user);
/* Whether the sandbox is a root caller's without host root: what it writes
 * through an idmapped bind belongs to host root, so it must not be able to
 * make a file setuid, setgid or file-capable (seccomp/guard.c). */
bool cl_policy_root_guarded(const struct cl_policy *p);
/* --workspace-ignore / spec workspace.ignore: "git" 0, "none" 1, else -1. */
int cl_ws_ignore_parse(const char *name);

/* `cloister run`'s bounds when no option says otherwise (docs/limits.md).
 * RLIMIT_NPROC is counted per user namespace (Linux >= 5.14), so in the
 * sandbox's own namespace it bounds the sandbox's tasks, not the caller's. */
#define CL_DEFAULT_NPROC 2048
#define CL_DEFAULT_PUBLISH_WAIT_MS 2000
#define CL_MAX_PUBLISH_WAIT_MS 600000          /* --publish-wait's bound: 10 minutes */
#define CL_DEFAULT_DEV_SIZE (64ULL << 20)      /* /dev, so /dev/shm: Docker's shm size */
#define CL_DEFAULT_TMPFS_MAX (1ULL << 30)      /* /tmp and --tmpfs: 1 GiB ... */
#define CL_DEFAULT_TMPFS_RAM_DIV 4             /* ... or a quarter of RAM if less */
/* The default size of a writable tmpfs: CL_DEFAULT_TMPFS_MAX, or a quarter
 * of the machine's RAM when that is less. */
uint64_t cl_policy_default_tmpfs_size(void);
/* WANT as the sandbox's RLIMIT_NPROC: at most the caller's hard limit. */
uint64_t cl_policy_nproc_bound(uint64_t want);

/* Fills p with `cloister run`'s deny-by-default profile (no mounts yet). */
void cl_policy_init(struct cl_policy *p);
/* Adds the default mounts (system dirs ro, /proc, /dev, /tmp) in order. */
int cl_policy_add_default_mounts(struct cl_policy *p, cl_error *err);
/* Appends a mount; src and dest are copied. Returns the new entry or NULL. */
struct cl_mount *cl_policy_add_mount(struct cl_policy *p, enum cl_mount_kind kind,
                                     const char *src, const char *dest, unsigned flags);
/* Parses and appends a --publish / --forward-out spec; bad input gets the
 * one-line error naming the expected form. */
int cl_policy_add_publish(struct cl_policy *p, const char *spec, cl_error *err);
int cl_policy_add_forward(struct cl_policy *p, const char *spec, cl_error *err);
/* Sets or replaces "K=V" in p->env. */
int cl_policy_setenv(struct cl_policy *p, const char *key, const char *value);
void cl_policy_unsetenv(struct cl_policy *p, const char *key);
const char *cl_policy_getenv(const struct cl_policy *p, const char *key);
/* Checks every field once; the first problem becomes err (errnum 0). */
int cl_policy_validate(const struct cl_policy *p, cl_error *err);
void cl_policy_free(struct cl_policy *p);

/* Small string-vector helpers used by policy and front-ends. */
char **cl_strv_push(char ***v, const char *s);
size_t cl_strv_len(char *const *v);
void cl_strv_free(char **v);

#endif
