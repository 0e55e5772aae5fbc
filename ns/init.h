/* pid 1 of the sandbox: starts the command, reaps every zombie, forwards
 * signals, and reports the command's wait status to the parent. */
#ifndef NS_INIT_H
#define NS_INIT_H

#include "ns/child.h"

_Noreturn void ns_init_run(struct ns_child *c);

#endif
