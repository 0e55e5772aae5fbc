/* The policy's seccomp profile for docker (src/executors/docker_seccomp.c). */
#ifndef CL_DOCKER_SECCOMP_H
#define CL_DOCKER_SECCOMP_H

#include "src/util/error.h"
#include "src/policy/policy.h"

/* *out: "unconfined", the Docker profile JSON, or NULL for docker's own
 * default (NATIVE=0 only); caller frees. */
int cl_docker_seccomp(const struct cl_policy *p, char **out, cl_error *err);

#endif
