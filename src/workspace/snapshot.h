/* Workspace snapshots: immutable copies of what a sticky workspace's next
 * run would see, in <state>/snapshots/<id>/{tree/,meta.json}
 * (docs/workspaces.md, "Snapshots"). */
#ifndef WS_SNAPSHOT_H
#define WS_SNAPSHOT_H

#include <jansson.h>
#include <stdbool.h>

#include "src/util/error.h"

#define WS_SNAP_ID_MAX 64

/* An open snapshot: fd holds a shared flock until ws_snap_close, so
 * `workspace rm-snapshot` refuses while a run uses it. */
struct ws_snap {
	int fd;               /* <state>/snapshots/<id> */
	int tree_fd;          /* its tree/ */
	char tree[4200];      /* the path of tree/ (an overlay layer goes by path) */
};

/* 1 to 64 of letters, digits, '.', '_', '-', the first a letter or digit. */
bool ws_snap_id_ok(const char *id);
/* Whether id names a snapshot now. */
bool ws_snap_exists(const char *id);
/* Snapshots sticky workspace name as id (NULL: a new "snap-<hex>" one,
 * written to out). Refused when the workspace does not exist, is in use,
 * or id exists. Built under snapshots/.tmp-*, then renamed into place. */
int ws_snap_create(const char *name, const char *id, char out[WS_SNAP_ID_MAX + 1], cl_error *err);
/* Where a snapshot's tree comes from and what its record says. */
struct ws_snap_src {
	const char *upper;    /* absolute: an upper dir, or (base NULL) the whole tree */
	const char *base;     /* absolute: the layer under upper, or NULL */
	const char *root;     /* the rootDir recorded */
	const char *label;    /* the workspace recorded: a sticky name, "session:ID" */
	/* Around the read of the tree (NULL: none): pause before it, and
	 * resume after it on every path once pause succeeded (a running
	 * session's freeze). pause < 0 fails the snapshot. */
	int (*pause)(void *ctx, cl_error *err);
	void (*resume)(void *ctx);
	void *ctx;
};
/* Builds snapshot id (NULL: a new "snap-<hex>", written to out) from src:
 * strict copy under snapshots/.tmp-*, synced, renamed into place. On
 * failure nothing is left that reads as a snapshot. */
int ws_snap_build(const struct ws_snap_src *src, const char *id, char out[WS_SNAP_ID_MAX + 1],
                  cl_error *err);
/* Removes the unfinished builds (.tmp-*, .rm-*) nobody holds, quietly. */
void ws_snap_sweep(void);
/* Opens and share-locks snapshot id (err says so when there is none). */
int ws_snap_open(const char *id, struct ws_snap *s, cl_error *err);
void ws_snap_close(struct ws_snap *s);
/* [{"id","workspace","rootDir","created"}...], oldest first. */
int ws_snap_list(json_t **out, cl_error *err);
/* Removes snapshot id; refused while a run holds it. */
int ws_snap_remove(const char *id, cl_error *err);
/* `cloister gc`: removes what killed snapshot commands left (.tmp-*,
 * .rm-*) and nobody holds. Prints one line per removal. */
void ws_snap_gc(void);

#endif
