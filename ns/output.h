/* --output-limit: the sandbox's stdout and stderr go through pipes the
 * supervisor relays to its own, up to a byte budget shared by both. */
#ifndef NS_OUTPUT_H
#define NS_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "ns/relay.h"
#include "src/util/error.h"
#include "src/policy/policy.h"

struct ns_output;

/* Parent, before clone: the pipes, registered with epfd. *out stays NULL
 * without p->output_limit: then the sandbox writes to the caller's fds
 * directly, with no copy. */
int ns_output_open(const struct cl_policy *p, int epfd, struct ns_output **out, cl_error *err);
/* Child, after clone: the pipes become fd 1 and 2. No allocation. */
int ns_output_child(const struct ns_output *o, cl_error *err);
/* Parent, after clone: drops the write ends, so EOF means the sandbox
 * side is gone. */
void ns_output_parent(struct ns_output *o);
/* An epoll event of kind NS_EV_OUTPUT. */
void ns_output_event(struct ns_output *o, struct ns_ev *ev);
/* After the sandbox exited: relays what is still buffered, waiting for
 * our reader if wait (a normal exit), else only what fits now (a timeout
 * must end the run even if nobody reads). True if any output was cut. */
bool ns_output_finish(struct ns_output *o, bool wait);
void ns_output_close(struct ns_output *o);

#endif
