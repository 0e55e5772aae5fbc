/* `cloister exec` on a terminal: the command gets a pty of the session's
 * own (made inside, its master sent back to us) and we relay it, so the
 * command can change only that pty, never the caller's terminal (line
 * discipline, size, modes), which never even enters the session. */
#ifndef SS_EXEC_TTY_H
#define SS_EXEC_TTY_H

#include "src/util/error.h"
#include "src/session/proto.h"

struct ss_tty;

/* *out stays NULL (nothing touched) unless one of fds 0..2 is a terminal;
 * else SIGWINCH, SIGINT, SIGTERM, SIGHUP and SIGQUIT are held for
 * ss_tty_relay from now on. */
int ss_tty_open(struct ss_tty **out, cl_error *err);
/* Adds what the request needs: which stdio fds get the pty (those are
 * passed as /dev/null) and the caller's window size. */
void ss_tty_request(const struct ss_tty *t, struct ss_buf *b);
/* Bit n: fd n is a terminal. */
unsigned ss_tty_mask(const struct ss_tty *t);
/* After the request went: takes the pty's master when it comes (the
 * caller's terminal goes raw then) and relays until the reply arrives,
 * then passes on what the command wrote last and fills rep. A window size
 * change is passed on; SIGINT/SIGTERM/SIGHUP/SIGQUIT give the terminal
 * back and end us by that signal (the session kills the command when we
 * hang up). 0 or -1 with err. */
int ss_tty_relay(struct ss_tty *t, int sock, struct ss_reply *rep, cl_error *err);
/* Restores the caller's terminal and signal mask; t may be NULL. */
void ss_tty_close(struct ss_tty *t);

#endif
