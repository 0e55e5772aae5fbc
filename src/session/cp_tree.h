/* `cloister cp -r`: directory trees into and out of a session. */
#ifndef SS_CP_TREE_H
#define SS_CP_TREE_H

#include <stdbool.h>

#include "src/util/error.h"

/* The directory src into key's path (into it under src's name when path
 * is a directory). 0 or -1 with err. */
int ss_cp_tree_in(const char *src, const char *key, const char *path, bool mkdirs, cl_error *err);
/* The directory path of key to dest (into it under path's name when dest
 * is a directory, not a link to one), built beside it and renamed into
 * place; an existing directory there is replaced, anything else refuses. */
int ss_cp_tree_out(const char *key, const char *path, const char *dest, cl_error *err);

#endif
