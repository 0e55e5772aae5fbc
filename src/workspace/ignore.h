/* git's ignore rules of a workspace's base tree (docs/workspaces.md,
 * "Ignore rules"): matched by libgit2, read by cloister through fds. */
#ifndef WS_IGNORE_H
#define WS_IGNORE_H

#include <stdbool.h>

#include "src/util/error.h"

struct ws_ignore;

/* Rules for the tree at base_fd: its .git/info/exclude (a .git directory
 * at its top only) and the caller's own core.excludesFile; each
 * directory's .gitignore is added by ws_ignore_load_dir. ws_dl_load must
 * have run. */
int ws_ignore_open(struct ws_ignore **out, int base_fd, cl_error *err);
/* Adds the .gitignore of the base directory dfd (path rel, "" at the top).
 * Called once per directory, parents before children. */
int ws_ignore_load_dir(struct ws_ignore *ig, int dfd, const char *rel, cl_error *err);
/* Whether rel (a directory when is_dir) is ignored; NULL ig ignores nothing. */
bool ws_ignore_match(struct ws_ignore *ig, const char *rel, bool is_dir);
void ws_ignore_free(struct ws_ignore *ig);

#endif
