/* A terminal of the sandbox's own: when cloister's stdio is a terminal the
 * command gets a pty from the sandbox's devpts instead, relayed by the
 * supervisor, so it can never change (or inject into) the caller's terminal. */
#ifndef NS_PTY_H
#define NS_PTY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>

#include "ns/relay.h"
#include "src/util/error.h"
#include "src/policy/policy.h"

struct ns_pty;

/* ---- parent (supervisor), caller's privileges ---- */

/* Before clone: *out stays NULL (and nothing is touched) unless p->pty is
 * set and one of fds 0..2 is a terminal. */
int ns_pty_open(const struct cl_policy *p, int epfd, struct ns_pty **out, cl_error *err);
/* The same without a policy (`cloister exec`, whose pty comes from the
 * host's devpts): *out stays NULL unless one of fds 0..2 is a terminal. */
int ns_pty_for_stdio(int epfd, struct ns_pty **out, cl_error *err);
/* What the child needs: which of fds 0..2 to replace by the slave (bit n
 * for fd n) and the caller's window size for the new pty. */
unsigned ns_pty_stdio_mask(const struct ns_pty *t);
const struct winsize *ns_pty_winsize(const struct ns_pty *t);
/* The master from the sandbox (ownership taken): the caller's terminal
 * goes raw, takes a size the caller changed to since, and bytes flow. */
void ns_pty_on_master(struct ns_pty *t, int fd);
void ns_pty_event(struct ns_pty *t, struct ns_ev *ev, uint32_t events);
/* SIGWINCH on the host: the caller's size onto the pty if it changed
 * since the pty last got one (made with ns_pty_winsize, then each push). */
void ns_pty_winch(struct ns_pty *t);
/* Once the sandbox is gone: what it wrote is still passed on. */
void ns_pty_drain(struct ns_pty *t);
/* Restores the caller's terminal and closes everything; t may be NULL. */
void ns_pty_close(struct ns_pty *t);

/* ---- either side ---- */

/* The slave of the pty whose master was just opened (from a ptmx):
 * unlocked, opened by fd (TIOCGPTPEER, no path lookup), sized to ws unless
 * it is all zero. Returns the slave (close-on-exec) or -errno with err. */
int ns_pty_peer(int master, const struct winsize *ws, cl_error *err);

/* ---- child (inside, after the mounts) ---- */

/* Opens a pty in the sandbox's /dev/pts, sizes it, sends the master on
 * sync_fd (NS_MSG_PTY) and puts the slave on the fds in mask. Returns the
 * first of those fds (the future controlling terminal) or -errno. */
int ns_pty_child_setup(int sync_fd, unsigned mask, const struct winsize *ws, cl_error *err);

#endif
