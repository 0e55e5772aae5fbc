/* Terminal attacks and a terminal state report, for tests/security/terminal.sh.
 * Usage: ttyprobe state | ATTACK...; each attack prints "NAME: ok" or "NAME: EWHAT". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

static void report(const char *name, long rc)
{
	printf("%s: %s\n", name, rc < 0 ? strerrorname_np(errno) : "ok");
}

/* fd 0's terminal as the caller sees it: line discipline, size, local
 * modes, and bytes waiting to be read (what TIOCSTI would add). */
static int state(void)
{
	struct winsize ws = {0};
	struct termios tio = {0};
	int ld = -1, pending = -1;

	ioctl(0, TIOCGETD, &ld);
	ioctl(0, TIOCGWINSZ, &ws);
	/* Canonical mode counts only whole lines, and TIOCSTI pushes one
	 * byte: count in non-canonical mode, then put the settings back. */
	if (tcgetattr(0, &tio) == 0) {
		struct termios raw = tio;
		raw.c_lflag &= ~(tcflag_t)ICANON;
		if (tcsetattr(0, TCSANOW, &raw) == 0) {
			ioctl(0, FIONREAD, &pending);
			tcsetattr(0, TCSANOW, &tio);
		}
	}
	printf("ldisc=%d size=%dx%d lflag=%#lx iflag=%#lx pending=%d\n", ld, ws.ws_row,
	       ws.ws_col, (unsigned long)tio.c_lflag, (unsigned long)tio.c_iflag, pending);
	return 0;
}

/* The caller's controlling terminal reached by name, not through an fd:
 * in a new session there is none (ENXIO), else TIOCSTI injects into it. */
static void attack_ctty(void)
{
	char c = 'X';
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY);

	report("ctty-open", fd);
	if (fd >= 0) {
		report("ctty-sti", ioctl(fd, TIOCSTI, &c));
		close(fd);
	}
}

static void attack(const char *a)
{
	char c = 'X';
	int ld = 27;   /* N_NULL: `stty line 27` in the original report */
	struct winsize ws = {.ws_row = 11, .ws_col = 22};
	struct termios tio;

	for (int fd = 0; fd <= 2; fd++) {
		char name[64];
		snprintf(name, sizeof(name), "%s(%d)", a, fd);
		if (!strcmp(a, "sti"))
			report(name, ioctl(fd, TIOCSTI, &c));
		else if (!strcmp(a, "sti-high"))   /* the kernel truncates to 32 bits */
			report(name, syscall(SYS_ioctl, fd, 0xffffffff00000000UL | TIOCSTI, &c));
		else if (!strcmp(a, "setd"))
			report(name, ioctl(fd, TIOCSETD, &ld));
		else if (!strcmp(a, "winsz"))
			report(name, ioctl(fd, TIOCSWINSZ, &ws));
		else if (!strcmp(a, "termios")) {
			if (tcgetattr(fd, &tio) == 0) {
				tio.c_lflag &= ~(tcflag_t)(ECHO | ICANON | ISIG);
				report(name, tcsetattr(fd, TCSANOW, &tio));
			} else {
				report(name, -1);
			}
		} else if (!strcmp(a, "sctty")) {
			report(name, ioctl(fd, TIOCSCTTY, 0));
			report(name, ioctl(fd, TIOCSCTTY, 1));   /* steal: needs CAP_SYS_ADMIN */
		} else if (!strcmp(a, "sig")) {
			pid_t pg = tcgetpgrp(fd);
			report(name, pg > 0 ? kill(-pg, SIGWINCH) : -1);
		} else {
			fprintf(stderr, "ttyprobe: unknown attack %s\n", a);
			return;
		}
	}
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "state"))
		return state();
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "ctty"))
			attack_ctty();
		else
			attack(argv[i]);
	return 0;
}
