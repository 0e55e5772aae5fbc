/* The host's half of `cloister cp`: where a copy's ends are on the host,
 * found without following the links a sandbox could plant there (its
 * --rw directories are on the host too), and single files streamed
 * through pipes of ours with the limits of one copy (tree.h). */
#ifndef SS_CP_HOST_H
#define SS_CP_HOST_H

#include <stdbool.h>
#include <stddef.h>

#include "src/util/error.h"

/* src opened for reading: its directory as the caller wrote it, its last
 * name never followed (a link is refused, naming src). dir: a directory
 * (O_DIRECTORY), else a regular file (fifos, devices, sockets refused,
 * never opened blocking). The fd, or -1 with err. */
int ss_cp_src_open(const char *src, bool dir, cl_error *err);
/* Where a copy of path goes at dest: dest itself, or dest/<path's name>
 * when dest is a directory (not a link to one). Its parent directory
 * opened (O_PATH) and the name in it, or -1 with err. */
int ss_cp_out_target(const char *path, const char *dest, char *name, size_t size,
                     cl_error *err);
/* One regular file src ("-": stdin) into key's path. 0 or -1 with err. */
int ss_cp_file_in(const char *src, const char *key, const char *path, bool mkdirs,
                  cl_error *err);
/* key's regular file path to dest ("-": stdout), at most SS_TREE_MAX_BYTES.
 * A file is built beside its destination and renamed into place. */
int ss_cp_file_out(const char *key, const char *path, const char *dest, cl_error *err);

#endif
