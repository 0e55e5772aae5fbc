/* cloister's built-in default seccomp profile: an allowlist in the spirit of
 * Docker's, hardened for hostile code. Each group carries its reason. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>

#include "seccomp/bpf_sim.h"
#include "seccomp/profile.h"

/* Anything not listed: ENOSYS. A syscall newer than this table (or than
 * libseccomp) then looks unimplemented, and libc falls back to an older
 * call, as glibc does for clone3, faccessat2 or statx. */
#define DEFAULT_ACTION SCMP_ACT_ERRNO(ENOSYS)
#define DENY SCMP_ACT_ERRNO(EPERM)

struct group {
	const char *names;   /* space-separated */
	uint32_t action;
	const char *reason;
};

static const struct group allowed[] = {
	{"read write readv writev pread64 pwrite64 preadv pwritev preadv2 pwritev2 "
	 "lseek _llseek sendfile sendfile64 splice tee vmsplice copy_file_range readahead",
	 SCMP_ACT_ALLOW, "reading and writing open files"},
	{"open openat openat2 creat close close_range dup dup2 dup3 fcntl fcntl64 flock",
	 SCMP_ACT_ALLOW, "opening and managing file descriptors"},
	{"fsync fdatasync sync syncfs sync_file_range truncate truncate64 ftruncate "
	 "ftruncate64 fallocate fadvise64 fadvise64_64",
	 SCMP_ACT_ALLOW, "file data management"},
	{"stat stat64 fstat fstat64 lstat lstat64 newfstatat fstatat64 statx statfs statfs64 "
	 "fstatfs fstatfs64 access faccessat faccessat2 readlink readlinkat getdents getdents64 "
	 "getcwd chdir fchdir umask",
	 SCMP_ACT_ALLOW, "looking at the file tree"},
	{"chmod fchmod fchmodat fchmodat2 chown chown32 fchown fchown32 lchown lchown32 fchownat "
	 "utime utimes utimensat utimensat_time64 futimesat mkdir mkdirat rmdir unlink unlinkat "
	 "rename renameat renameat2 link linkat symlink symlinkat mknod mknodat",
	 SCMP_ACT_ALLOW, "changing the file tree (device nodes still need CAP_MKNOD)"},
	{"getxattr lgetxattr fgetxattr setxattr lsetxattr fsetxattr listxattr llistxattr "
	 "flistxattr removexattr lremovexattr fremovexattr",
	 SCMP_ACT_ALLOW, "extended attributes (the kernel checks namespaces)"},
	{"inotify_init inotify_init1 inotify_add_watch inotify_rm_watch",
	 SCMP_ACT_ALLOW, "file change notification for build tools and editors"},
	{"brk mmap mmap2 munmap mremap mprotect madvise mlock mlock2 munlock mlockall munlockall "
	 "mincore msync remap_file_pages membarrier memfd_create pkey_alloc pkey_free pkey_mprotect",
	 SCMP_ACT_ALLOW, "memory management of the process itself"},
	{"fork vfork execve execveat exit exit_group wait4 waitpid waitid kill tkill tgkill "
	 "rt_sigqueueinfo rt_tgsigqueueinfo pidfd_open pidfd_send_signal pidfd_getfd "
	 "process_vm_readv process_vm_writev kcmp ptrace",
	 SCMP_ACT_ALLOW, "processes and debuggers; the pid namespace confines them to the sandbox"},
	{"getpid getppid gettid getpgid setpgid getpgrp getsid setsid getuid getuid32 geteuid "
	 "geteuid32 getgid getgid32 getegid getegid32 getresuid getresuid32 getresgid getresgid32 "
	 "getgroups getgroups32 setuid setuid32 setgid setgid32 setreuid setreuid32 setregid "
	 "setregid32 setresuid setresuid32 setresgid setresgid32 setgroups setgroups32 setfsuid "
	 "setfsuid32 setfsgid setfsgid32 capget capset",
	 SCMP_ACT_ALLOW, "identity; changes are limited by the user namespace's maps and caps"},
	{"prctl arch_prctl set_tid_address set_robust_list get_robust_list futex futex_time64 "
	 "futex_waitv rseq set_thread_area get_thread_area",
	 SCMP_ACT_ALLOW, "threads and libc startup"},
	{"sched_yield sched_getaffinity sched_setaffinity sched_getparam sched_setparam "
	 "sched_getscheduler sched_setscheduler sched_get_priority_max sched_get_priority_min "
	 "sched_rr_get_interval sched_rr_get_interval_time64 sched_getattr sched_setattr "
	 "getpriority setpriority ioprio_get ioprio_set getcpu",
	 SCMP_ACT_ALLOW, "scheduling of the sandbox's own tasks"},
	{"getrlimit ugetrlimit setrlimit prlimit64 getrusage times uname sysinfo sethostname "
	 "setdomainname",
	 SCMP_ACT_ALLOW, "limits and system info (uts namespace is private)"},
	{"rt_sigaction rt_sigprocmask rt_sigreturn rt_sigpending rt_sigsuspend rt_sigtimedwait "
	 "rt_sigtimedwait_time64 sigaction sigprocmask sigreturn sigaltstack signalfd signalfd4 "
	 "pause alarm",
	 SCMP_ACT_ALLOW, "signals"},
	{"nanosleep clock_nanosleep clock_nanosleep_time64 clock_gettime clock_gettime64 "
	 "clock_getres clock_getres_time64 gettimeofday time timer_create timer_settime "
	 "timer_settime64 timer_gettime timer_gettime64 timer_getoverrun timer_delete "
	 "timerfd_create timerfd_settime timerfd_settime64 timerfd_gettime timerfd_gettime64 "
	 "getitimer setitimer restart_syscall adjtimex clock_adjtime clock_adjtime64",
	 SCMP_ACT_ALLOW, "clocks and timers (setting the clock needs CAP_SYS_TIME on the host)"},
	{"select _newselect pselect6 pselect6_time64 poll ppoll ppoll_time64 epoll_create "
	 "epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2 eventfd eventfd2",
	 SCMP_ACT_ALLOW, "event loops"},
	{"pipe pipe2 socketpair shmget shmat shmdt shmctl semget semop semtimedop "
	 "semtimedop_time64 semctl msgget msgsnd msgrcv msgctl mq_open mq_unlink mq_timedsend "
	 "mq_timedsend_time64 mq_timedreceive mq_timedreceive_time64 mq_notify mq_getsetattr",
	 SCMP_ACT_ALLOW, "IPC (the ipc namespace is private)"},
	{"bind connect listen accept accept4 getsockname getpeername sendto send recvfrom recv "
	 "sendmsg recvmsg sendmmsg recvmmsg recvmmsg_time64 shutdown setsockopt getsockopt",
	 SCMP_ACT_ALLOW, "sockets (the network namespace decides what they reach)"},
	{"getrandom io_setup io_destroy io_submit io_cancel io_getevents io_pgetevents "
	 "io_pgetevents_time64 landlock_create_ruleset landlock_add_rule landlock_restrict_self "
	 "seccomp",
	 SCMP_ACT_ALLOW, "randomness, AIO, and self-sandboxing (filters only stack, never loosen)"},
};

static const struct group denied[] = {
	{"io_uring_setup io_uring_enter io_uring_register", DENY,
	 "io_uring: large kernel attack surface, and its operations bypass seccomp"},
	{"bpf", DENY, "eBPF verifier and maps are a frequent kernel exploit path"},
	{"perf_event_open", DENY, "perf: kernel attack surface and side channels"},
	{"userfaultfd", DENY, "lets exploits pause the kernel mid-copy to win races"},
	{"keyctl add_key request_key", DENY, "the kernel keyring is not namespaced"},
	{"kexec_load kexec_file_load", DENY, "replaces the running kernel"},
	{"init_module finit_module delete_module", DENY, "kernel modules"},
	{"swapon swapoff", DENY, "host swap"},
	{"reboot", DENY, "host reboot (in a pid namespace it would kill the sandbox's init)"},
	{"acct", DENY, "process accounting is host-wide"},
	{"open_by_handle_at name_to_handle_at", DENY,
	 "file handles can open files outside the mount tree (the shocker escape)"},
	{"lookup_dcookie quotactl quotactl_fd nfsservctl", DENY, "host-wide administration"},
	{"syslog", DENY, "kernel log leaks kernel addresses"},
	{"settimeofday stime clock_settime clock_settime64", DENY, "the host clock is shared"},
	{"iopl ioperm vhangup uselib modify_ldt", DENY,
	 "raw I/O ports, terminal hangup, a.out loading, LDT: legacy kernel surface"},
	{"mbind set_mempolicy set_mempolicy_home_node get_mempolicy migrate_pages move_pages",
	 DENY, "NUMA placement can degrade other workloads on the host"},
	{"fanotify_init", DENY, "filesystem-wide event monitoring"},
};

/* With --allow-nested this group is allowed instead: nested sandboxes mount
 * in namespaces they own. */
static const struct group mounts = {
	"mount umount umount2 fsopen fsconfig fsmount fspick move_mount open_tree "
	"mount_setattr pivot_root chroot", DENY,
	"the mount tree is cloister's; remounting could undo read-only binds and masks"};

/* The namespace flags clone() may not carry. CLONE_NEWTIME (0x80) is left
 * out: clone() cannot create a time namespace, its low byte is the exit
 * signal (0x80 there is harmless); unshare and clone3 are denied whole. */
#define CLONE_NEW_MASK (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | \
                        CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)
/* The ioctl request is an unsigned int; the kernel ignores the high 32 bits,
 * so compare only the low ones (CVE-2019-10063 set high bits to pass). */
#define LOW32 0xffffffffULL

static int add_names(struct sc_profile *p, const struct group *g, bool nested)
{
	uint32_t action = nested ? SCMP_ACT_ALLOW : g->action;
	char buf[1024], *save = NULL;
	int rc;

	strncpy(buf, g->names, sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = 0;
	for (char *n = strtok_r(buf, " ", &save); n; n = strtok_r(NULL, " ", &save)) {
		/* The profile is native-only: names of other architectures, or
		 * of kernels newer than this libseccomp, get the default action. */
		if (seccomp_syscall_resolve_name(n) < 0)
			continue;
		rc = sc_profile_add(p, n, action, NULL, 0, g->reason);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* A catch-all condition (always true) for "otherwise" rules. libseccomp
 * sorts masked compares before it, so it only applies when none of the
 * specific MASKED_EQ rules of the same syscall matched; the self-check
 * below and the tests verify that. */
#define ANY SCMP_CMP_GE, 0, 0
#define NONE -1, 0, 0, 0
enum when { ALWAYS, NOT_NESTED };

/* Rules with argument conditions, in the order libseccomp gets them. */
static const struct crule {
	const char *name;
	uint32_t action;
	int arg;              /* -1: no condition */
	int op;
	uint64_t v, v2;
	enum when when;
	const char *reason;
} conditional[] = {
	{"ioctl", DENY, 1, SCMP_CMP_MASKED_EQ, LOW32, TIOCSTI, ALWAYS,
	 "TIOCSTI pushes input into a terminal outside (CVE-2017-5226)"},
	{"ioctl", DENY, 1, SCMP_CMP_MASKED_EQ, LOW32, TIOCLINUX, ALWAYS,
	 "TIOCLINUX can paste console selection as input (CVE-2023-28100)"},
	{"ioctl", SCMP_ACT_ALLOW, 1, ANY, ALWAYS, "other ioctls: device drivers check them"},
	{"personality", SCMP_ACT_ALLOW, 0, SCMP_CMP_MASKED_EQ, LOW32, 0x0, ALWAYS,
	 "PER_LINUX: the normal personality"},
	{"personality", SCMP_ACT_ALLOW, 0, SCMP_CMP_MASKED_EQ, LOW32, 0x8, ALWAYS,
	 "PER_LINUX32: only changes uname's machine"},
	{"personality", SCMP_ACT_ALLOW, 0, SCMP_CMP_MASKED_EQ, LOW32, 0x20000, ALWAYS,
	 "UNAME26: only changes uname's release"},
	{"personality", SCMP_ACT_ALLOW, 0, SCMP_CMP_MASKED_EQ, LOW32, 0x20008, ALWAYS,
	 "PER_LINUX32 | UNAME26"},
	{"personality", SCMP_ACT_ALLOW, 0, SCMP_CMP_MASKED_EQ, LOW32, 0xffffffff, ALWAYS,
	 "query the current personality"},
	{"personality", DENY, 0, ANY, ALWAYS,
	 "other personalities weaken ASLR or make data executable (READ_IMPLIES_EXEC)"},
	{"socket", SCMP_ACT_ERRNO(EAFNOSUPPORT), 0, SCMP_CMP_MASKED_EQ, LOW32, 40, ALWAYS,
	 "AF_VSOCK reaches the hypervisor whatever the network namespace"},
	{"socket", SCMP_ACT_ALLOW, 0, ANY, ALWAYS, "other socket families"},
	{"unshare", DENY, NONE, NOT_NESTED,
	 "new namespaces expose more kernel surface to unprivileged code (CVE-2021-41133)"},
	{"setns", DENY, NONE, NOT_NESTED, "joining namespaces, same reason as unshare"},
	{"clone", SCMP_ACT_ALLOW, 0, SCMP_CMP_MASKED_EQ, CLONE_NEW_MASK, 0, NOT_NESTED,
	 "threads and processes without new namespaces"},
	{"clone", DENY, 0, ANY, NOT_NESTED, "clone with a CLONE_NEW* flag: same reason as unshare"},
	{"clone3", SCMP_ACT_ERRNO(ENOSYS), NONE, NOT_NESTED,
	 "its flags are in memory where seccomp cannot look; ENOSYS makes libc use clone"},
};

/* --allow-nested replaces the NOT_NESTED rules with this group. */
static const struct group nested_group = {"unshare setns clone clone3", SCMP_ACT_ALLOW,
	"--allow-nested: namespaces inside the sandbox"};

static int add_conditional(struct sc_profile *p, const struct sc_context *ctx)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < sizeof(conditional) / sizeof(*conditional); i++) {
		const struct crule *r = &conditional[i];
		struct sc_cond c = {.arg = (unsigned)r->arg, .op = r->op, .v = r->v, .v2 = r->v2};
		if (r->when == NOT_NESTED && ctx->allow_nested)
			continue;
		rc = sc_profile_add(p, r->name, r->action, &c, r->arg < 0 ? 0 : 1, r->reason);
	}
	if (rc == 0 && ctx->allow_nested)
		rc = add_names(p, &nested_group, false);
	return rc;
}

static int build(const struct sc_context *ctx, struct sc_profile *out, cl_error *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	out->default_action = DEFAULT_ACTION;
	/* x32 and i386 (int 0x80) syscalls use other numbers than the table
	 * was written for; legitimate sandboxed code never needs them and
	 * they are a classic filter bypass, so the process is killed. */
	out->badarch_action = SCMP_ACT_KILL_PROCESS;
	rc = add_conditional(out, ctx);
	if (rc == 0)
		rc = add_names(out, &mounts, ctx->allow_nested);
	for (size_t i = 0; rc == 0 && i < sizeof(allowed) / sizeof(*allowed); i++)
		rc = add_names(out, &allowed[i], false);
	for (size_t i = 0; rc == 0 && i < sizeof(denied) / sizeof(*denied); i++)
		rc = add_names(out, &denied[i], false);
	if (rc < 0) {
		sc_profile_free(out);
		return cl_fail(err, -rc, "building the default seccomp profile");
	}
	return 0;
}

int sc_profile_default(const struct sc_context *ctx, struct sc_profile *out, cl_error *err)
{
	return build(ctx, out, err);
}

/* ---- self-check of the compiled program ----
 * The "otherwise" rules rely on how libseccomp orders tests, and the whole
 * point of the hardening is the high-bit cases; so every freshly compiled
 * default program is run through the interpreter on these calls first. */
struct expect {
	const char *what;
	long nr;
	uint64_t a0, a1;
	uint32_t want, nested_want;
};

#define HI32 (1ULL << 32)

int sc_profile_default_check(const struct sock_filter *f, size_t len,
                             const struct sc_context *ctx, cl_error *err)
{
	const uint32_t allow = SECCOMP_RET_ALLOW, eperm = SECCOMP_RET_ERRNO | EPERM;
	const uint32_t enosys = SECCOMP_RET_ERRNO | ENOSYS;
	const struct expect cases[] = {
		{"getppid", __NR_getppid, 0, 0, allow, allow},
		{"ioctl(TCGETS)", __NR_ioctl, 0, TCGETS, allow, allow},
		{"ioctl(TIOCSTI)", __NR_ioctl, 0, TIOCSTI, eperm, eperm},
		{"ioctl(TIOCSTI|1<<32)", __NR_ioctl, 0, HI32 | TIOCSTI, eperm, eperm},
		{"ioctl(TIOCLINUX|1<<32)", __NR_ioctl, 0, HI32 | TIOCLINUX, eperm, eperm},
		{"personality(query)", __NR_personality, 0xffffffff, 0, allow, allow},
		{"personality(ADDR_NO_RANDOMIZE)", __NR_personality, 0x0040000, 0, eperm, eperm},
		{"socket(AF_UNIX)", __NR_socket, 1, 0, allow, allow},
		{"socket(AF_VSOCK|1<<32)", __NR_socket, HI32 | 40, 0, SECCOMP_RET_ERRNO | EAFNOSUPPORT,
		 SECCOMP_RET_ERRNO | EAFNOSUPPORT},
		{"clone(SIGCHLD)", __NR_clone, 17, 0, allow, allow},
		{"clone(CLONE_NEWUSER)", __NR_clone, CLONE_NEWUSER | 17, 0, eperm, allow},
		{"clone(CLONE_NEWNET|1<<32)", __NR_clone, HI32 | CLONE_NEWNET, 0, eperm, allow},
		{"clone3", __NR_clone3, 0, 0, enosys, allow},
		{"unshare", __NR_unshare, 0, 0, eperm, allow},
		{"mount", __NR_mount, 0, 0, eperm, allow},
		{"bpf", __NR_bpf, 0, 0, eperm, eperm},
		{"unlisted syscall 1000", 1000, 0, 0, enosys, enosys},
#if defined(__x86_64__)
		{"x32 getpid", 0x40000000 | 39, 0, 0, SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_PROCESS},
#endif
	};
	struct seccomp_data d;
	uint32_t got;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		const struct expect *c = &cases[i];
		uint32_t want = ctx->allow_nested ? c->nested_want : c->want;
		memset(&d, 0, sizeof(d));
		d.nr = (int)c->nr;
		d.arch = seccomp_arch_native();
		d.args[0] = c->a0;
		d.args[1] = c->a1;
		if (sc_bpf_run(f, len, &d, &got) < 0 || got != want)
			return cl_fail(err, 0, "the compiled default seccomp profile decides %s wrongly "
			               "(0x%08x, expected 0x%08x); refusing to use it", c->what, got,
			               want);
	}
#if defined(__x86_64__)
	memset(&d, 0, sizeof(d));
	d.nr = 20;
	d.arch = SCMP_ARCH_X86;
	if (sc_bpf_run(f, len, &d, &got) < 0 || got != SECCOMP_RET_KILL_PROCESS)
		return cl_fail(err, 0, "the compiled default seccomp profile does not kill i386 calls");
#endif
	return 0;
}
