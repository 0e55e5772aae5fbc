/* The tree a sticky workspace's next run would see (its upper dir over its
 * base), as a read-only overlay mount that belongs to no namespace. */
#ifndef WS_MERGED_H
#define WS_MERGED_H

#include "src/util/error.h"

/* A detached, read-only overlay of upper (a sticky workspace's upper dir)
 * over base (absolute paths): the kernel applies the whiteouts and opaque
 * marks overlayfs wrote (user.overlay.*, the sandbox's userxattr overlay).
 * Made in a forked child with its own user and mount namespaces; the
 * mount fd is returned (the caller reads through it with its own
 * credentials and closes it), or a negative code with err set. */
int ws_merged_open(const char *upper, const char *base, cl_error *err);

#endif
