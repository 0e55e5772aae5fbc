/* Scope-tied cleanup helpers: an fd, heap block or child pid is released when
 * its variable leaves scope unless ownership is taken with cl_steal_*(). */
#ifndef CL_CLEANUP_H
#define CL_CLEANUP_H

#include <stdlib.h>
#include <unistd.h>

static inline void cl_closep(int *fd)
{
	/* No retry on EINTR: on Linux the descriptor is gone either way. */
	if (*fd >= 0)
		close(*fd);
}

static inline void cl_freep(void *p)
{
	free(*(void **)p);
}

#define cl_autoclose __attribute__((cleanup(cl_closep)))
#define cl_autofree __attribute__((cleanup(cl_freep)))

static inline int cl_steal_fd(int *fd)
{
	int v = *fd;

	*fd = -1;
	return v;
}

static inline void *cl_steal_ptr(void *pp)
{
	void **p = pp;
	void *v = *p;

	*p = NULL;
	return v;
}

#endif
