/* Copying DIR for the workspace fallback (no overlayfs here). */
#ifndef WS_COPY_H
#define WS_COPY_H

#include "src/error.h"

/* Copies the tree below src_fd into the empty directory dst_fd; shown
 * names the source in errors. 0 or a negative code with err set. */
int ws_copy_tree(int src_fd, int dst_fd, const char *shown, cl_error *err);

#endif
