/* Directory trees for `cloister cp -r`, as one stream over a pipe: the
 * sender walks a tree without following any symlink (links are sent as
 * links, anything but files, directories and links refuses the copy);
 * the receiver builds it in a fresh directory, every name checked, and
 * puts it in place by rename. The same code runs on the host (the
 * client) and inside the session (the copy's confined process). */
#ifndef SS_TREE_H
#define SS_TREE_H

#include <stdint.h>

#include "src/util/error.h"

#define SS_TREE_MAX_BYTES (4ULL << 30)   /* file contents of one copy */
#define SS_TREE_MAX_ENTRIES 200000
#define SS_TREE_MAX_DEPTH 64

/* Sends the tree below dirfd (kept open) to out. 0 or -1 with err naming
 * the entry (shown: how the top is named in messages). */
int ss_tree_send(int dirfd, int out, const char *shown, cl_error *err);
/* Receives a stream from in below dirfd, a new empty directory of ours,
 * which takes the top's mode. 0, -EPIPE when the stream ended early (the
 * sender failed: its error is the one to show), or another negative code
 * with err. */
int ss_tree_recv(int in, int dirfd, cl_error *err);
/* A new directory beside name in parent (".cloister-cp.XXXXXX", 0700):
 * its name goes into tmp. The fd, or -1 with err. */
int ss_tree_mktemp(int parent, char tmp[32], cl_error *err);
/* Puts parent/tmp in place of parent/name: a rename when name is free,
 * else an exchange with the directory there, whose old tree is removed.
 * Something other than a directory at name refuses. 0 or -1 with err (tmp
 * is left to the caller to remove). */
int ss_tree_commit(int parent, const char *tmp, const char *name, const char *shown,
                   cl_error *err);

#endif
