/* Shared between the cgroup backends: the handle, the backend table, the
 * small file helpers and the pure converters (unit-tested). */
#ifndef CG_INTERNAL_H
#define CG_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroups/cgroup.h"
#include "src/util/error.h"
#include "src/policy/policy.h"

#define CG_ROOT "/sys/fs/cgroup"
#define CG_BASE "cloister"          /* automatic parent of sandbox cgroups */
#define CG_V1_MAX 5                  /* memory, cpu, cpuacct, pids, freezer */

enum cg_mode { CG_MODE_NONE, CG_MODE_V1, CG_MODE_HYBRID, CG_MODE_V2 };

/* One sandbox cgroup directory: open fds so reads and writes need no paths. */
struct cg_dir {
	const char *ctrl;       /* v1 controller ("memory"...), "" for v2 */
	int parent_fd;          /* directory holding the sandbox cgroup */
	int fd;                 /* the sandbox cgroup itself */
	char path[PATH_MAX + 128];  /* for messages */
};

struct cg_handle;

struct cg_backend {
	const char *name;
	int (*create)(struct cg_handle *h, const struct cl_limits *l, cl_error *err);
	int (*attach)(struct cg_handle *h, pid_t pid, cl_error *err);
	int (*collect)(struct cg_handle *h, struct cg_stats *st);
	/* Kill what is left, remove the directories, close the fds. */
	void (*destroy)(struct cg_handle *h);
};

struct cg_handle {
	const struct cg_backend *be;
	char name[64];          /* leaf directory name, encodes our pid */
	int clone_fd;           /* v2: sandbox dir for CLONE_INTO_CGROUP, else -1 */
	size_t n;
	struct cg_dir dirs[CG_V1_MAX];
	int mem, cpuacct;       /* index into dirs of those hierarchies, -1 */
	bool explicit_parent;   /* --cgroup-parent given: leaf names differ */
	bool want_freezer;      /* a session: v1 adds a freezer dir where it may */
	bool freezer_only;      /* a session without limits: that dir alone */
};

extern const struct cg_backend cg_backend_v1, cg_backend_v2;

/* ---- files (fsio.c) ---- */
int cg_write(int dirfd, const char *file, const char *val);
int cg_write_u64(int dirfd, const char *file, uint64_t v);
/* Reads a small file into buf (NUL-terminated); returns length or -errno. */
ssize_t cg_read(int dirfd, const char *file, char *buf, size_t len);
int cg_read_key(int dirfd, const char *file, const char *key, int64_t *out);
int cg_read_i64(int dirfd, const char *file, int64_t *out);
/* true if cgroup.procs of dirfd lists no process. */
bool cg_is_empty(int dirfd);
/* SIGKILLs everything listed in cgroup.procs until it is empty (bounded). */
int cg_kill_loop(int dirfd);
/* Removes parent_fd/name, waiting briefly while the kernel lets go. */
int cg_rmdir(int parent_fd, const char *name);
/* Opens (creating if needed, mode 0755) path as a directory. */
int cg_open_dir(const char *path, bool create, int *fd);
/* Removes stale sandbox cgroups (ours by name, owner dead, no process)
 * under dirfd; calls report(path) for each one removed. */
int cg_sweep(int dirfd, const char *dirpath, bool explicit_parent,
             void (*report)(const char *path));
/* Sweeps the stale sandbox cgroups beside d (a crashed run's). Called from
 * destroy, after the command: never on the way to starting it. */
void cg_sweep_beside(const struct cg_dir *d, bool explicit_parent);
enum cg_mode cg_detect_mode(void);
const char *cg_mode_name(enum cg_mode m);

/* ---- pure converters (convert.c) ---- */
/* "QUOTA PERIOD" for cpu.max ("max PERIOD" when quota is 0). */
int cg_fmt_cpu_max(char *buf, size_t len, uint64_t quota_us, uint64_t period_us);
/* memory.swap.max from --memory/--memory-swap: -1 = leave unset. */
int64_t cg_swap_max(uint64_t memory, int64_t memory_swap);
/* memory.memsw.limit_in_bytes (memory+swap) for v1: -1 = leave unset. */
int64_t cg_memsw_limit(uint64_t memory, int64_t memory_swap);
/* Value of "KEY N" in a keyed file (memory.events, cpu.stat...). */
int cg_parse_key(const char *text, const char *key, int64_t *out);
/* The cgroup path of ctrl in /proc/self/cgroup text (ctrl "" = v2 "0::"). */
int cg_parse_proc_cgroup(const char *text, const char *ctrl, char *out, size_t len);
/* Leaf names: "<pid>-<hex>" under the automatic parent, "cloister-<pid>-<hex>"
 * under --cgroup-parent. */
int cg_fmt_leaf(char *buf, size_t len, pid_t pid, uint32_t rnd, bool explicit_parent);
/* Owner pid of a leaf name, or -1 if the name is not one of ours. */
pid_t cg_parse_leaf(const char *name, bool explicit_parent);
/* "user N\nsystem N" clock ticks (cpuacct.stat) to ms. */
double cg_ticks_to_ms(int64_t ticks, long hz);
/* Which flags asked for limits, for messages ("--memory 256m, --pids 64"). */
void cg_describe_limits(const struct cl_limits *l, char *buf, size_t len);

#endif
