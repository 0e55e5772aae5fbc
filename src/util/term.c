/* Raw mode for the caller's terminal, undone on normal paths by the caller
 * and on fatal signals by a handler: nobody is left with a raw terminal. */
#define _GNU_SOURCE
#include "src/util/term.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <termios.h>

/* Signals whose default action ends the process without cloister's own
 * cleanup running (cancels go through signalfds elsewhere). */
static const int fatal_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS,
                                 SIGPIPE, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ};
#define N_FATAL (sizeof(fatal_sigs) / sizeof(*fatal_sigs))
/* File scope: a signal handler can reach nothing else, and a process has
 * one controlling terminal to give back. */
static struct sigaction old_actions[N_FATAL];
static struct termios saved_tio;
static volatile sig_atomic_t restore_fd = -1;

static void on_fatal(int sig)
{
	int e = errno;

	if (restore_fd >= 0)
		tcsetattr(restore_fd, TCSANOW, &saved_tio);
	errno = e;
	/* SA_RESETHAND put the default back: raising again runs it (a fault
	 * re-faults by itself once we return). */
	raise(sig);
}

static void fatal_handlers(bool install)
{
	struct sigaction sa = {.sa_handler = on_fatal, .sa_flags = SA_RESETHAND | SA_NODEFER};

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < N_FATAL; i++) {
		if (!install) {
			sigaction(fatal_sigs[i], &old_actions[i], NULL);
			continue;
		}
		sigaction(fatal_sigs[i], NULL, &old_actions[i]);
		/* What the caller chose for a signal (ignore, a handler) stays. */
		if (old_actions[i].sa_handler == SIG_DFL && !(old_actions[i].sa_flags & SA_SIGINFO))
			sigaction(fatal_sigs[i], &sa, NULL);
	}
}

int cl_term_raw(int fd)
{
	struct termios raw;

	if (restore_fd >= 0)
		return -EBUSY;
	if (tcgetattr(fd, &saved_tio) < 0)
		return -errno;
	raw = saved_tio;
	cfmakeraw(&raw);
	/* Handlers before the change: a fatal signal just after tcsetattr
	 * must already find them. */
	restore_fd = fd;
	fatal_handlers(true);
	if (tcsetattr(fd, TCSANOW, &raw) == 0)
		return 0;
	int e = errno;
	fatal_handlers(false);
	restore_fd = -1;
	return -e;
}

void cl_term_restore(void)
{
	if (restore_fd < 0)
		return;
	tcsetattr(restore_fd, TCSANOW, &saved_tio);
	/* Handlers after: until the terminal is back they are still needed. */
	fatal_handlers(false);
	restore_fd = -1;
}
