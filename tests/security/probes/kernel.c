/* Kernel attack surface: namespaces, mounts, io_uring, bpf, perf,
 * userfaultfd, keys, kexec, modules, reboot, swap, acct, syslog, foreign
 * ABIs, personality, vsock. Calls that would change the host are made so
 * that the permission check decides and nothing else happens. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/mount.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>
#include <linux/vm_sockets.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "probe.h"

/* Runs fn in a child (namespace changes and kills stay there); returns the
 * child's exit, or 128+signal. */
static int in_child(int (*fn)(void))
{
	pid_t p = fork();
	int st;
	if (p < 0) return -1;
	if (p == 0) _exit(fn());
	if (waitpid(p, &st, 0) < 0) return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int unshare_user(const struct ctx *c)
{
	pid_t p = fork();
	int st;
	if (p == 0) _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : errno);
	waitpid(p, &st, 0);
	int e = WEXITSTATUS(st);
	return e == 0 ? escaped("unshare(CLONE_NEWUSER) worked") : blocked("unshare(CLONE_NEWUSER): %s", ename(e));
}

static int clone_user(const struct ctx *c)
{
	long p = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (p == 0) _exit(0);
	if (p > 0) { waitpid((pid_t)p, NULL, 0); return escaped("clone(CLONE_NEWUSER) made a child"); }
	return blocked("clone(CLONE_NEWUSER): %s", ename(errno));
}

static int clone3_user(const struct ctx *c)
{
	struct clone_args a = {.flags = CLONE_NEWUSER | CLONE_NEWNS, .exit_signal = SIGCHLD};
	long p = syscall(SYS_clone3, &a, sizeof(a));
	if (p == 0) _exit(0);
	if (p > 0) { waitpid((pid_t)p, NULL, 0); return escaped("clone3(CLONE_NEWUSER|CLONE_NEWNS) made a child"); }
	return blocked("clone3: %s", ename(errno));
}

/* Without a new user namespace: needs CAP_SYS_ADMIN over the current one. */
static int unshare_mnt(const struct ctx *c)
{
	pid_t p = fork();
	int st;
	if (p == 0) _exit(unshare(CLONE_NEWNS | CLONE_NEWNET) == 0 ? 0 : errno);
	waitpid(p, &st, 0);
	int e = WEXITSTATUS(st);
	return e == 0 ? escaped("unshare(CLONE_NEWNS|CLONE_NEWNET) worked") : blocked("unshare: %s", ename(e));
}

/* Mounts happen in a child's own mount namespace when it can make one, so
 * a host control changes nothing on the host. */
static int do_mount(void)
{
	unshare(CLONE_NEWNS);
	mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	return mount("escprobe", "/tmp", "tmpfs", 0, NULL) == 0 ? 0 : errno;
}
static int mount_tmpfs(const struct ctx *c)
{
	int e = in_child(do_mount);
	return e == 0 ? escaped("mount(tmpfs) worked") : blocked("mount: %s", ename(e));
}

static int do_remount(void)
{
	unshare(CLONE_NEWNS);
	mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	return mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL) == 0 ? 0 : errno;
}
static int remount_root(const struct ctx *c)
{
	int e = in_child(do_remount);
	return e == 0 ? escaped("remount of / read-write worked") : blocked("remount /: %s", ename(e));
}

static int do_umount_mask(void)
{
	unshare(CLONE_NEWNS);
	mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	return umount2("/proc/kcore", MNT_DETACH) == 0 ? 0 : errno;
}
static int umount_mask(const struct ctx *c)
{
	int e = in_child(do_umount_mask);
	return e == 0 ? escaped("unmounted the mask over /proc/kcore") : blocked("umount /proc/kcore: %s", ename(e));
}

static int fsopen_tmpfs(const struct ctx *c)
{
	long fd = syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fd < 0) return blocked("fsopen: %s", ename(errno));
	long r = syscall(SYS_fsconfig, fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
	long m = r < 0 ? -1 : syscall(SYS_fsmount, fd, FSMOUNT_CLOEXEC, 0);
	if (m >= 0) return escaped("fsopen+fsconfig+fsmount made a detached tmpfs");
	return blocked("fsopen worked, fsconfig/fsmount: %s", ename(errno));
}

static int open_tree_clone(const struct ctx *c)
{
	long fd = syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	return fd >= 0 ? escaped("open_tree(OPEN_TREE_CLONE) cloned the tree") : blocked("open_tree: %s", ename(errno));
}

static int do_move_mount(void)
{
	unshare(CLONE_NEWNS);
	mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	long fd = syscall(SYS_open_tree, AT_FDCWD, "/tmp", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (fd < 0) return errno;
	return syscall(SYS_move_mount, fd, "", AT_FDCWD, "/mnt", MOVE_MOUNT_F_EMPTY_PATH) == 0 ? 0 : errno;
}
static int move_mount_p(const struct ctx *c)
{
	int e = in_child(do_move_mount);
	return e == 0 ? escaped("move_mount attached a cloned tree") : blocked("open_tree/move_mount: %s", ename(e));
}

static int mount_setattr_rw(const struct ctx *c)
{
	struct mount_attr a = {.attr_clr = MOUNT_ATTR_RDONLY};
	long r = syscall(SYS_mount_setattr, AT_FDCWD, "/", 0, &a, sizeof(a));
	return gate("mount_setattr(/, clear RDONLY)", r, errno, "EPERM,ENOSYS");
}

static int do_chroot(void) { return chroot("/tmp") == 0 ? 0 : errno; }
static int chroot_p(const struct ctx *c)
{
	int e = in_child(do_chroot);
	return e == 0 ? escaped("chroot worked") : blocked("chroot: %s", ename(e));
}

static int io_uring(const struct ctx *c)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	long fd = syscall(SYS_io_uring_setup, 4, &p);
	return fd >= 0 ? escaped("io_uring_setup gave a ring") : blocked("io_uring_setup: %s", ename(errno));
}

static int bpf_map(const struct ctx *c)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4; a.value_size = 4; a.max_entries = 1;
	long fd = syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a));
	return fd >= 0 ? escaped("bpf(BPF_MAP_CREATE) gave a map") : blocked("bpf: %s", ename(errno));
}

/* A socket filter program: the one kind unprivileged bpf ever allowed. */
static int bpf_prog(const struct ctx *c)
{
	struct bpf_insn prog[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uintptr_t)prog; a.insn_cnt = 2;
	a.license = (uintptr_t)"GPL";
	long fd = syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	return fd >= 0 ? escaped("bpf(BPF_PROG_LOAD) loaded a program") : blocked("bpf prog: %s", ename(errno));
}

static int perf(const struct ctx *c)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.exclude_kernel = 1; a.exclude_hv = 1;
	long fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	return fd >= 0 ? escaped("perf_event_open gave an event") : blocked("perf_event_open: %s", ename(errno));
}

static int uffd(const struct ctx *c)
{
	long fd = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	return fd >= 0 ? escaped("userfaultfd gave an fd") : blocked("userfaultfd: %s", ename(errno));
}

/* The user keyring is per host uid, shared with every process of it. */
static int keyring(const struct ctx *c)
{
	long id = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0);
	return id >= 0 ? escaped("keyctl reached the user keyring (%ld)", id) : blocked("keyctl: %s", ename(errno));
}

static int addkey(const struct ctx *c)
{
	long id = syscall(SYS_add_key, "user", "escprobe", "x", 1, KEY_SPEC_PROCESS_KEYRING);
	return id >= 0 ? escaped("add_key made a key") : blocked("add_key: %s", ename(errno));
}

/* The capability checks come first: EBADF/EFAULT/ENOENT/EINVAL after them
 * mean the call was allowed to act. */
static int kexec(const struct ctx *c)
{
	long r = syscall(SYS_kexec_file_load, -1, -1, 0, "", 0);
	return gate("kexec_file_load", r, errno, "EPERM,ENOSYS");
}
static int init_mod(const struct ctx *c)
{
	long r = syscall(SYS_init_module, NULL, 0, "");
	return gate("init_module", r, errno, "EPERM,ENOSYS");
}
static int finit_mod(const struct ctx *c)
{
	long r = syscall(SYS_finit_module, -1, "", 0);
	return gate("finit_module", r, errno, "EPERM,ENOSYS");
}
static int delete_mod(const struct ctx *c)
{
	long r = syscall(SYS_delete_module, "escprobe_no_such_module", O_NONBLOCK);
	return gate("delete_module", r, errno, "EPERM,ENOSYS");
}
/* Wrong magic: EINVAL only once CAP_SYS_BOOT was granted. */
static int reboot_p(const struct ctx *c)
{
	long r = syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, 0x12345678, LINUX_REBOOT_CMD_CAD_OFF, NULL);
	return gate("reboot", r, errno, "EPERM,ENOSYS");
}
static int swapon_p(const struct ctx *c)
{
	long r = syscall(SYS_swapon, "/escprobe-no-such-file", 0);
	return gate("swapon", r, errno, "EPERM,ENOSYS");
}
static int acct_p(const struct ctx *c)
{
	long r = syscall(SYS_acct, "/escprobe-no-such-file");
	return gate("acct", r, errno, "EPERM,ENOSYS");
}
/* SYSLOG_ACTION_SIZE_BUFFER: reading anything of the kernel log. */
static int syslog_p(const struct ctx *c)
{
	long r = syscall(SYS_syslog, 10, NULL, 0);
	return gate("syslog(SIZE_BUFFER)", r, errno, "EPERM,ENOSYS");
}

/* Foreign ABIs: the filter's syscall numbers are x86_64's. Run in a child,
 * the kill it may get is the expected outcome. */
#ifdef __x86_64__
static int x32_call(void)
{
	long r = syscall(0x40000000 | 39 /* x32 getpid */);
	return r > 0 ? 0 : 1;
}
static int int80_call(void)
{
	long r;
	__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L /* i386 getpid */) : "memory");
	return r > 0 ? 0 : 1;
}
#endif
static int abi(const char *what, int (*fn)(void))
{
	int r = in_child(fn);
	if (r == 0) return escaped("%s getpid worked", what);
	if (r == 128 + SIGSYS) return blocked("%s: killed by SIGSYS", what);
	return blocked("%s: not available (%d)", what, r);
}
static int x32(const struct ctx *c)
{
#ifdef __x86_64__
	return abi("x32", x32_call);
#else
	return blocked("not x86_64");
#endif
}
static int int80(const struct ctx *c)
{
#ifdef __x86_64__
	return abi("int 0x80", int80_call);
#else
	return blocked("not x86_64");
#endif
}

/* ADDR_NO_RANDOMIZE weakens ASLR for everything the sandbox execs. */
static int persona(const struct ctx *c, unsigned long flag, const char *what)
{
	int old = personality(0xffffffff);
	long r = personality(old | flag);
	int now = personality(0xffffffff);
	personality(old);
	if (r != -1 && (now & flag))
		return escaped("personality(%s) took effect", what);
	return blocked("personality(%s): %s", what, r == -1 ? ename(errno) : "not set");
}
static int pers_noaslr(const struct ctx *c) { return persona(c, ADDR_NO_RANDOMIZE, "ADDR_NO_RANDOMIZE"); }
static int pers_rie(const struct ctx *c) { return persona(c, READ_IMPLIES_EXEC, "READ_IMPLIES_EXEC"); }

static int vsock(const struct ctx *c, unsigned long hi)
{
	long fd = syscall(SYS_socket, hi | AF_VSOCK, SOCK_STREAM, 0);
	if (fd < 0) return blocked("socket(AF_VSOCK%s): %s", hi ? "|hi" : "", ename(errno));
	struct sockaddr_vm a = {.svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_HOST, .svm_port = 9};
	int r = connect((int)fd, (struct sockaddr *)&a, sizeof(a));
	return escaped("vsock socket made (connect to the hypervisor: %s)", r ? ename(errno) : "ok");
}
static int vsock_lo(const struct ctx *c) { return vsock(c, 0); }
static int vsock_hi(const struct ctx *c) { return vsock(c, 0xffffffff00000000UL); }

static const struct probe probes[] = {
	{"ns_unshare_user", "kernel surface", C_HOST, "unshare(CLONE_NEWUSER): a nested user namespace", unshare_user},
	{"ns_clone_newuser", "kernel surface", C_HOST, "clone(CLONE_NEWUSER)", clone_user},
	{"ns_clone3_newuser", "kernel surface", C_HOST, "clone3 with CLONE_NEWUSER|CLONE_NEWNS (flags in memory, out of seccomp's sight)", clone3_user},
	{"ns_unshare_mount_net", "kernel surface", C_ROOT, "unshare(CLONE_NEWNS|CLONE_NEWNET) without a new user namespace", unshare_mnt},
	{"mount_tmpfs", "kernel surface", C_ROOT, "mount(2) a tmpfs", mount_tmpfs},
	{"mount_remount_root_rw", "kernel surface", C_ROOT, "remount the read-only root read-write (in a mount namespace of its own)", remount_root},
	{"mount_umount_proc_mask", "kernel surface", C_NONE, "unmount the mask over /proc/kcore; the host has no mask there", umount_mask},
	{"mount_fsopen", "kernel surface", C_ROOT, "new mount API: fsopen/fsconfig/fsmount a tmpfs", fsopen_tmpfs},
	{"mount_open_tree", "kernel surface", C_ROOT, "open_tree(OPEN_TREE_CLONE) of /", open_tree_clone},
	{"mount_move_mount", "kernel surface", C_ROOT, "move_mount a cloned tree onto /mnt", move_mount_p},
	{"mount_setattr_clear_ro", "kernel surface", C_ROOT, "mount_setattr clearing MOUNT_ATTR_RDONLY on / (a no-op on the host, whose / is writable)", mount_setattr_rw},
	{"mount_chroot", "kernel surface", C_ROOT, "chroot(2)", chroot_p},
	{"io_uring_setup", "kernel surface", C_INFO, "io_uring_setup (depends on kernel.io_uring_disabled)", io_uring},
	{"bpf_map_create", "kernel surface", C_ROOT, "bpf(BPF_MAP_CREATE)", bpf_map},
	{"bpf_prog_load", "kernel surface", C_ROOT, "bpf(BPF_PROG_LOAD) of a socket filter", bpf_prog},
	{"perf_event_open", "kernel surface", C_INFO, "perf_event_open of a software counter (depends on perf_event_paranoid)", perf},
	{"userfaultfd", "kernel surface", C_INFO, "userfaultfd(UFFD_USER_MODE_ONLY) (depends on the kernel)", uffd},
	{"keyctl_user_keyring", "kernel surface", C_HOST, "keyctl: the host uid's user keyring (not namespaced)", keyring},
	{"add_key", "kernel surface", C_HOST, "add_key to the process keyring", addkey},
	{"kexec_file_load", "kernel surface", C_INFO, "(root; needs a kernel with it) kexec_file_load past CAP_SYS_BOOT", kexec},
	{"init_module", "kernel surface", C_INFO, "(root; needs a kernel with it) init_module past CAP_SYS_MODULE", init_mod},
	{"finit_module", "kernel surface", C_INFO, "(root; needs a kernel with it) finit_module past CAP_SYS_MODULE", finit_mod},
	{"delete_module", "kernel surface", C_INFO, "(root; needs a kernel with it) delete_module past CAP_SYS_MODULE", delete_mod},
	{"reboot", "kernel surface", C_ROOT, "reboot past CAP_SYS_BOOT (bad magic: nothing happens)", reboot_p},
	{"swapon", "kernel surface", C_ROOT, "swapon past CAP_SYS_ADMIN", swapon_p},
	{"acct", "kernel surface", C_ROOT, "acct past CAP_SYS_PACCT", acct_p},
	{"syslog", "kernel surface", C_ROOT, "syslog: the kernel log (dmesg_restrict)", syslog_p},
	{"abi_x32", "kernel surface", C_INFO, "an x32 syscall (depends on the kernel's x32 support)", x32},
	{"abi_int80", "kernel surface", C_INFO, "an i386 syscall through int 0x80 (depends on ia32 emulation)", int80},
	{"personality_no_aslr", "kernel surface", C_HOST, "personality(ADDR_NO_RANDOMIZE)", pers_noaslr},
	{"personality_read_implies_exec", "kernel surface", C_HOST, "personality(READ_IMPLIES_EXEC)", pers_rie},
	{"vsock_socket", "kernel surface", C_INFO, "socket(AF_VSOCK) to the hypervisor (depends on a vsock transport)", vsock_lo},
	{"vsock_socket_hibits", "kernel surface", C_INFO, "socket(AF_VSOCK | 1<<32)", vsock_hi},
};
FAMILY(fam_kernel, probes);
