/* A terminal inside the container (Engine API Tty) when cloister runs on
 * one: the container's pty is docker's, cloister relays the caller's
 * terminal to it in raw mode and passes window sizes on. */
#ifndef CL_DOCKER_TTY_H
#define CL_DOCKER_TTY_H

#include <jansson.h>
#include <stdbool.h>

#include "src/policy/policy.h"

/* True when the policy asks for a pty and stdin, stdout and stderr are all
 * terminals: a docker Tty merges the two output streams into one, so a
 * redirected stream keeps the non-tty mode (and stays separate). */
bool cl_docker_tty_wanted(const struct cl_policy *p);
/* Tty on in a create body, with the caller's size as the initial one
 * (daemons before API 1.42 ignore it: cl_docker_resize follows start). */
void cl_docker_tty_body(json_t *body);
/* POST /containers/ID/resize with the caller's current window size. A
 * container that has just exited refuses it: ignored, it has no terminal
 * left to size. */
void cl_docker_resize(const char *sock, const char *id);

#endif
