/* A run's workspace: the overlay's upper and work dirs in cloister's state
 * dir, the mount that puts them over DIR, and their removal. */
#ifndef WS_STATE_H
#define WS_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/util/error.h"
#include "src/workspace/root.h"
#include "src/policy/policy.h"

struct ws_run {
	int parent_fd;        /* <state>/workspaces */
	int run_fd;           /* <state>/workspaces/<name> */
	int lower_fd;         /* the base, opened once: captured against this */
	int snap_fd;          /* a snapshot held (shared flock) while it is the base */
	int upper_fd;
	int work_fd;
	char name[160];
	char dir[4096];       /* DIR, resolved: where it appears inside */
	char lower[4400];     /* the overlay's lower dir: DIR, a snapshot's tree or a sticky base/ */
	char upper[4400];     /* upper/'s path: the overlay's upper dir, or (copy) the whole tree */
	bool sticky;          /* kept at cleanup (spec persistence "sticky") */
	bool copy;            /* no overlayfs here: upper_fd is a copy of DIR */
	bool git_ignore;      /* the capture applies git's ignore rules (not --workspace-ignore none) */
	uint64_t seq;         /* the bundle's seq: 1, or the sticky one's next */
};

/* Opens DIR, makes a fresh run dir with upper/ and work/ (or, where
 * overlayfs does not mount or $CLOISTER_WORKSPACE_MODE is "copy", a copy
 * of DIR in upper/, bound read-write), and appends the overlay mount of DIR to p. On error
 * nothing is left behind. */
/* With snapshot (an id, or NULL) the base is that snapshot's tree, not
 * DIR's content. */
int ws_run_prepare(struct cl_policy *p, struct ws_run *w, const char *snapshot, cl_error *err);
/* The same for a sticky workspace: <state>/workspaces/sticky-NAME keeps
 * its upper dir across runs (the next run sees earlier changes, seq goes
 * on); one run at a time (flock), one rootDir per name. idle_secs >= 0
 * lets `cloister gc` remove it after that long unused. A new one made
 * with snapshot copies that snapshot's tree into its base/ and keeps it
 * as its base; a known one refuses a snapshot other than its own. */
int ws_sticky_prepare(struct cl_policy *p, struct ws_run *w, const char *name, int64_t idle_secs,
                      const char *snapshot, cl_error *err);
/* After a captured run of a sticky workspace: its seq is used up. */
int ws_sticky_commit_seq(struct ws_run *w, cl_error *err);
/* How long `cloister gc` leaves the changes of a failed capture. */
#define WS_KEPT_DAYS 7
/* After a failed capture: the run dir becomes <state>/workspaces/kept-*
 * (a sticky one stays where it is), with what `cloister diff capture`
 * needs (kept-lower, kept-mode, kept-skip, kept-seq, kept-ignore); its path into out.
 * cleanup then leaves it. */
int ws_run_keep(struct ws_run *w, const char *skip, char *out, size_t len, cl_error *err);
/* ws_run_keep, then the one line on stderr saying where and how to
 * capture again (diff_out or FILE in it). */
void ws_run_keep_report(struct ws_run *w, const char *skip, const char *diff_out);
/* Removes the run dir (not a sticky one) and closes everything; safe to
 * call twice. */
void ws_run_cleanup(struct ws_run *w);
/* `cloister gc`: removes run dirs no live cloister holds (a killed run's)
 * and sticky workspaces idle longer than their idleTimeoutSecs. Prints
 * one line per removal. */
void ws_gc(void);

#endif
