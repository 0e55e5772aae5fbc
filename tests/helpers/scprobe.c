/* Seccomp prober for the tests: calls each syscall of interest with invalid
 * arguments (so an allowed call fails harmlessly) and prints its errno. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

/* Usage: scprobe [NAME...]    prints "NAME ERRNO" (or "NAME OK") per probe;
 *        scprobe pty          TIOCSTI/TIOCLINUX against a fresh pty;
 *        scprobe int80|x32    one getpid through a foreign ABI. */

#define HI (1UL << 32)
#define CLONE_NEW_ALL (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | \
                       CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

struct probe {
	const char *name;
	long nr;
	unsigned long a[6];
};

/* Each row: if the filter allows the call, the kernel rejects the bad
 * argument noted at the end and nothing happens. */
static const struct probe probes[] = {
	{"getppid", SYS_getppid, {0}},                                     /* OK */
	{"ioctl_tcgets", SYS_ioctl, {-1UL, TCGETS}},                       /* EBADF */
	{"ioctl_tiocsti", SYS_ioctl, {-1UL, TIOCSTI}},                     /* EBADF */
	{"ioctl_tiocsti_hi", SYS_ioctl, {-1UL, HI | TIOCSTI}},             /* EBADF */
	{"ioctl_tioclinux", SYS_ioctl, {-1UL, TIOCLINUX}},                 /* EBADF */
	{"ioctl_tioclinux_hi", SYS_ioctl, {-1UL, HI | TIOCLINUX}},         /* EBADF */
	{"unshare", SYS_unshare, {0x1}},                                   /* EINVAL: bad flag */
	{"setns", SYS_setns, {-1UL, 0}},                                   /* EBADF */
	{"clone_newuser", SYS_clone, {CLONE_NEWUSER | CLONE_FS}},          /* EINVAL combo */
	{"clone_newns", SYS_clone, {CLONE_NEWNS | CLONE_FS}},              /* EINVAL combo */
	{"clone_newnet_hi", SYS_clone, {HI | CLONE_NEWNET | CLONE_THREAD}},/* EINVAL */
	{"clone_thread_bad", SYS_clone, {CLONE_THREAD}},                   /* EINVAL: no SIGHAND */
	{"clone3", SYS_clone3, {0, 0}},                                    /* EINVAL: size */
	{"io_uring_setup", SYS_io_uring_setup, {0, 0}},                    /* EFAULT/EINVAL */
	{"io_uring_enter", SYS_io_uring_enter, {-1UL, 0, 0, 0, 0, 0}},     /* EBADF */
	{"io_uring_register", SYS_io_uring_register, {-1UL, 0, 0, 0}},     /* EBADF */
	{"bpf", SYS_bpf, {-1UL, 0, 0}},                                    /* EINVAL (or EPERM) */
	{"perf_event_open", SYS_perf_event_open, {0, 0, -1UL, -1UL, 0}},   /* EFAULT */
	{"userfaultfd", SYS_userfaultfd, {0x1 | 0x2}},                     /* EINVAL: bad flag */
	{"keyctl", SYS_keyctl, {-1UL}},                                    /* EOPNOTSUPP */
	{"add_key", SYS_add_key, {0, 0, 0, 0, 0}},                         /* EFAULT */
	{"request_key", SYS_request_key, {0, 0, 0, 0}},                    /* EFAULT */
	{"mount", SYS_mount, {0, 0, 0, 0, 0}},                             /* EFAULT */
	{"umount2", SYS_umount2, {0, -1UL}},                               /* EINVAL */
	{"open_tree", SYS_open_tree, {-1UL, 0, -1UL}},                     /* EINVAL: flags */
	{"name_to_handle_at", SYS_name_to_handle_at, {-1UL, 0, 0, 0, -1UL}}, /* EINVAL */
	{"chroot", SYS_chroot, {0}},                                       /* EFAULT */
	{"clock_settime", SYS_clock_settime, {0, 0}},                      /* EFAULT */
	{"ptrace", SYS_ptrace, {0xdead, -1UL, 0, 0}},                      /* ESRCH */
	{"personality_query", SYS_personality, {0xffffffffUL}},            /* OK */
	{"personality_linux32", SYS_personality, {0x0008}},               /* OK, then reset */
	{"personality_noaslr", SYS_personality, {0x0040000}},              /* OK, then reset */
	{"socket_unix", SYS_socket, {1, -1UL, 0}},                         /* EINVAL: type */
	{"socket_vsock", SYS_socket, {40, -1UL, 0}},                       /* EINVAL: type */
	{"socket_vsock_hi", SYS_socket, {HI | 40, -1UL, 0}},               /* EINVAL: type */
	{"get_mempolicy", SYS_get_mempolicy, {0, 0, 0, 0, -1UL}},          /* EINVAL: flags */
	{"kcmp", SYS_kcmp, {-1UL, -1UL, 0, 0, 0}},                         /* ESRCH */
	{"seccomp", SYS_seccomp, {-1UL, 0, 0}},                            /* EINVAL: op */
	{"memfd_create", SYS_memfd_create, {0, 0}},                        /* EFAULT */
};

static const char *ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "OK";
	return n ? n : "?";
}

static void run(const struct probe *p)
{
	long r;

	errno = 0;
	r = syscall(p->nr, p->a[0], p->a[1], p->a[2], p->a[3], p->a[4], p->a[5]);
	printf("%s %s\n", p->name, r < 0 ? ename(errno) : "OK");
	if (p->nr == SYS_personality && r >= 0)
		syscall(SYS_personality, 0UL);
	if (p->nr != SYS_personality && r >= 0 && p->nr != SYS_getppid)
		close((int)r);
}

/* TIOCSTI on a real pty that is our controlling terminal (the one case
 * where the kernel itself allows it): "OK" only if the byte really got
 * into the input queue. */
static void sti(int s, int m, const char *label, unsigned long req)
{
	char c = 'x', got = 0;
	long r;
	int n = 0;

	errno = 0;
	r = syscall(SYS_ioctl, s, req, &c);
	if (r < 0) {
		printf("%s %s\n", label, ename(errno));
		return;
	}
	/* The injected byte is readable on the terminal side. */
	fcntl(s, F_SETFL, O_NONBLOCK);
	n = (int)read(s, &got, 1);
	printf("%s %s\n", label, n == 1 && got == 'x' ? "OK" : "NOT_INJECTED");
	(void)m;
}

static int pty(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY), s;
	char *name, sel = 2;
	long r;

	setsid();
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || !(name = ptsname(m)) ||
	    (s = open(name, O_RDWR)) < 0) {
		printf("pty_setup %s\n", ename(errno));
		return 1;
	}
	ioctl(s, TIOCSCTTY, 0);
	/* canonical mode would hold the byte until newline */
	{
		struct termios t;
		if (tcgetattr(s, &t) == 0) {
			t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
			tcsetattr(s, TCSANOW, &t);
		}
	}
	sti(s, m, "pty_tiocsti", TIOCSTI);
	sti(s, m, "pty_tiocsti_hi", HI | TIOCSTI);
	errno = 0;
	r = syscall(SYS_ioctl, s, HI | TIOCLINUX, &sel);
	printf("pty_tioclinux_hi %s\n", r < 0 ? ename(errno) : "OK");
	return 0;
}

/* Foreign ABIs on x86_64: i386 via int 0x80 and x32 via the 0x40000000
 * syscall bit. The default profile kills the process (SIGSYS). */
static int foreign(const char *which)
{
	long r = -1;

#if defined(__x86_64__)
	if (strcmp(which, "int80") == 0) {
		r = 20;  /* i386 getpid */
		__asm__ volatile("int $0x80" : "+a"(r) : : "memory");
		printf("int80 %s\n", r < 0 ? ename((int)-r) : "OK");
	} else {
		errno = 0;
		r = syscall(0x40000000L | 39);  /* x32 getpid */
		printf("x32 %s\n", r < 0 ? ename(errno) : "OK");
	}
#else
	printf("%s NOT_X86_64\n", which);
#endif
	return 0;
}

int main(int argc, char **argv)
{
	size_t n = sizeof(probes) / sizeof(*probes);

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && strcmp(argv[1], "pty") == 0)
		return pty();
	if (argc == 2 && (strcmp(argv[1], "int80") == 0 || strcmp(argv[1], "x32") == 0))
		return foreign(argv[1]);
	if (argc == 2 && strcmp(argv[1], "list") == 0) {
		for (size_t i = 0; i < n; i++)
			puts(probes[i].name);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		bool want = argc < 2;
		for (int a = 1; a < argc; a++)
			want |= strcmp(argv[a], probes[i].name) == 0;
		if (want)
			run(&probes[i]);
	}
	return 0;
}
