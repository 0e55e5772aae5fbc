/* Shared by the two capture walkers (capture.c: an overlay's upper dir;
 * capture_copy.c: a whole copy), defined in capture_walk.c: the list of
 * changed sides they fill. */
#ifndef WS_CAPTURE_WALK_H
#define WS_CAPTURE_WALK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "src/util/error.h"
#include "src/workspace/capture.h"

#define MAX_DEPTH 256

/* One side of one path: old (lower) or new (upper). */
struct ent {
	char *path;
	bool is_new;
	bool exec;
	bool link;
};

struct walk {
	struct ent *v;
	size_t n, cap;
	enum ws_fail why;
	const char *skip;
	struct ws_ignore *ig;  /* the base's ignore rules, or NULL */
	json_t *skipped;      /* [{path, type}]: special files left out */
	cl_error *err;
};

/* Appends one side (old = lower, new = upper/copy) of path. */
int ws_walk_push(struct walk *w, const char *path, bool is_new, const struct stat *st);
/* prefix/name into out; ENAMETOOLONG when it does not fit. */
int ws_walk_join(char *out, size_t len, const char *prefix, const char *name, cl_error *err);
/* A change a bundle cannot carry: err names rel and what it is. */
int ws_walk_unsupported(struct walk *w, const char *rel, const char *what);
/* rel is deeper than MAX_DEPTH: a limit, err names it. */
int ws_walk_too_deep(struct walk *w, const char *rel);
/* A fifo, socket or device node at rel: left out of the bundle, named
 * in w->skipped. */
int ws_walk_skip(struct walk *w, const char *rel, const struct stat *st);
/* Neither a regular file, a directory nor a symlink. */
bool ws_is_special(const struct stat *st);
/* Every file below the lower entry name (or the entry itself) as deleted. */
int ws_walk_old_tree(struct walk *w, int lfd, const char *name, const char *rel, const struct stat *st,
                     int depth);
/* The copy walker: nfd (the changed copy) against ofd (the base, or -1). */
int ws_walk_copy(struct walk *w, int nfd, int ofd, const char *prefix, int depth);

#endif
