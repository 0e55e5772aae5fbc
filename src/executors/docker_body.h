/* The policy as an Engine API container-create body (POST /containers/create).
 * Pure: no daemon, unit-testable. */
#ifndef CL_DOCKER_BODY_H
#define CL_DOCKER_BODY_H

#include <jansson.h>

#include "src/util/error.h"
#include "src/policy/policy.h"

/* The image when neither --image nor CLOISTER_DOCKER_IMAGE names one. */
#define CL_DOCKER_DEFAULT_IMAGE "debian:bookworm-slim"

/* p's image, or $CLOISTER_DOCKER_IMAGE, or the default. */
const char *cl_docker_image(const struct cl_policy *p);
/* The create body; a policy field docker cannot honour is an error
 * naming it (never silently dropped). seccomp is the profile JSON text
 * ("unconfined" for none). */
json_t *cl_docker_body(const struct cl_policy *p, const char *seccomp, cl_error *err);
/* Capability number -> "CAP_..." name, NULL beyond the table. */
const char *cl_docker_cap_name(unsigned cap);

#endif
