/* The workspace state root (root.c): where it is, its directories opened
 * 0700 and without links, names, small state files. */
#ifndef WS_ROOT_H
#define WS_ROOT_H

#include <stdbool.h>
#include <stddef.h>

#include "src/util/error.h"

/* Where workspace state lives: $CLOISTER_STATE_DIR, else
 * /var/lib/cloister for root, else $XDG_STATE_HOME/cloister or
 * ~/.local/state/cloister. */
int ws_state_root(char *out, size_t len, cl_error *err);
/* Opens <state root>/SUB, made 0700 as needed (the existing part resolved
 * first, nothing created through a link): an fd, or <0 with err. */
int ws_state_open(const char *sub, cl_error *err);
/* mkdir -p with 0700 for what it creates, path resolved already: an fd
 * of the last directory, or <0 with err. */
int ws_open_dirs(const char *path, cl_error *err);
/* realpath of the longest existing prefix of path, the rest appended. */
int ws_resolve_existing(const char *path, char *out, size_t len, cl_error *err);
/* A sticky workspace name (and the base of a snapshot id): letters,
 * digits, '.', '_', '-', at most 128, not "." or "..". */
bool ws_name_ok(const char *n);
/* A small state file below dfd, never through a symlink: read (NUL-
 * terminated, truncated to len - 1), or written whole by a rename. 0 or
 * -errno. */
int ws_read_small(int dfd, const char *name, char *buf, size_t len);
int ws_write_small(int dfd, const char *name, const char *text);

#endif
