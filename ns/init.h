/* pid 1 of the sandbox: starts the command, reaps every zombie, forwards
 * signals, and reports the command's wait status to the parent. */
#ifndef NS_INIT_H
#define NS_INIT_H

#include "ns/child.h"

_Noreturn void ns_init_run(struct ns_child *c);
/* Every signal the caller ignores back to its default action (exec resets
 * handled ones itself): a sandbox must not inherit, say, the SIGINT a
 * shell's background job ignores, or ^C on the command's own pty would do
 * nothing. Called right before exec (bwrap mode keeps them, as bwrap). */
void ns_reset_ignored_signals(void);

#endif
