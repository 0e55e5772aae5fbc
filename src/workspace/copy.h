/* Copying DIR for the workspace fallback (no overlayfs here). */
#ifndef WS_COPY_H
#define WS_COPY_H

#include "src/util/error.h"

#include <stdbool.h>

/* Directories below the top a copy goes (each level holds three fds). */
#define WS_COPY_MAX_DEPTH 256

struct ws_copy_opts {
	const char *skip;   /* a top-level name left out, or NULL */
	bool strict;        /* a fifo, socket or device fails the copy */
};

/* Copies the tree below src_fd into the empty directory dst_fd; shown
 * names the source in errors. Without strict, fifos, sockets and devices
 * are left out. A file with several names is copied once, its other
 * names hard links to it. 0 or a negative code with err set. */
int ws_copy_tree(int src_fd, int dst_fd, const char *shown, const struct ws_copy_opts *o,
                 cl_error *err);

#endif
