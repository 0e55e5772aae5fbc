/* A run's workspace: the overlay's upper and work dirs in cloister's state
 * dir, the mount that puts them over DIR, and their removal. */
#ifndef WS_STATE_H
#define WS_STATE_H

#include <sys/types.h>

#include "src/error.h"
#include "src/policy.h"

struct ws_run {
	int parent_fd;        /* <state>/workspaces */
	int run_fd;           /* <state>/workspaces/<name> */
	int lower_fd;         /* DIR, opened once: captured against this */
	int upper_fd;
	int work_fd;
	char name[64];
	char dir[4096];       /* DIR, resolved: where it appears inside */
};

/* Where workspace state lives: $CLOISTER_STATE_DIR, else
 * /var/lib/cloister for root, else $XDG_STATE_HOME/cloister or
 * ~/.local/state/cloister. */
int ws_state_root(char *out, size_t len, cl_error *err);
/* Opens DIR, makes a fresh run dir with upper/ and work/, and appends the overlay mount of DIR to p. On error
 * nothing is left behind. */
int ws_run_prepare(struct cl_policy *p, struct ws_run *w, cl_error *err);
/* Removes the run dir and closes everything; safe to call twice. */
void ws_run_cleanup(struct ws_run *w);
/* Removes the tree name below parent, making its dirs writable first
 * (the sandbox may have left read-only ones). 0 or -errno. */
int ws_remove_tree_at(int parent, const char *name);

#endif
