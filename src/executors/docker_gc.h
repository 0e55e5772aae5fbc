/* `cloister gc` for the docker executor: containers whose cloister died
 * without removing them (SIGKILL cannot be handled). */
#ifndef CL_DOCKER_GC_H
#define CL_DOCKER_GC_H

#include <jansson.h>

#include "src/util/error.h"

/* Labels that name the cloister process owning a container; added to a
 * create body's Labels. */
int cl_docker_owner_labels(json_t *labels, cl_error *err);
/* Removes the containers of dead owners; *removed counts them. No daemon
 * is not an error (nothing to collect): *removed is then -1. */
int cl_docker_gc(int *removed, cl_error *err);

#endif
