/* One patch of a diff bundle, parsed once: `diff show` prints it, the
 * review gate counts it and `diff apply` writes it from this struct only,
 * so what a reviewer sees is what lands. */
#ifndef WS_HUNK_H
#define WS_HUNK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "src/workspace/patch.h"

enum ws_op { WS_OP_ADD, WS_OP_MODIFY, WS_OP_DELETE };

/* Every line of the diff text is one of these, in order. */
enum ws_lkind {
	WS_L_META,    /* diff --git, mode lines, index, ---/+++, Binary files */
	WS_L_HUNK,    /* @@ -a,b +c,d @@ */
	WS_L_CTX,     /* ' ' */
	WS_L_DEL,     /* '-' */
	WS_L_ADD,     /* '+' */
	WS_L_NONL,    /* \ No newline at end of file (of the line before) */
};

struct ws_line {
	enum ws_lkind kind;
	const char *s;        /* the whole line, without its '\n' */
	size_t n;
};

struct ws_hunk {
	long a, b, c, d;      /* old start, old count, new start, new count */
	size_t first, count;  /* its body lines in ws_patch.lines */
};

struct ws_patch {
	const char *path;     /* the JSON form (pathq.h), for messages */
	char *name;           /* the file's name, decoded: what apply opens */
	enum ws_op op;
	bool old_exec, new_exec, old_link, new_link;
	char old_oid[WS_OID_HEX + 1], new_oid[WS_OID_HEX + 1];
	bool binary;          /* "Binary files ... differ": content is bin */
	unsigned char *bin;   /* binaryContent, decoded (add/modify) */
	size_t bin_len;
	struct ws_line *lines;
	size_t n_lines;
	struct ws_hunk *hunks;
	size_t n_hunks;
	long added, removed;  /* '+' and '-' lines */
};

/* Reads patch object p (path already checked) into out: the strict
 * grammar cloister writes, every field consistent with the others. Strings
 * point into p, which must outlive out. 0, or -1 with why[] filled (one
 * line, what disagrees) and out freed. */
int ws_patch_read(const json_t *o, struct ws_patch *p, char *why, size_t len);
void ws_patch_free(struct ws_patch *p);
/* The link an add of mode 120000 makes points out of the tree: an
 * absolute target, or one whose `..` climb above the tree's root from
 * path's directory (git carries both; show flags them, apply can refuse). */
bool ws_link_leaves_tree(const char *path, const char *target, size_t len);

/* The content p leaves at its path, from the preimage old (old_len bytes;
 * "" for an add): the binary content or the hunks applied, checked
 * against the blob id of the index line (a delete must leave nothing).
 * 0 with *out malloc'd; 1: a hunk does not fit old (a conflict); -1: the
 * patch contradicts itself (a bad bundle). why[] says which. */
int ws_patch_result(const struct ws_patch *p, const char *old, size_t old_len, char **out, size_t *out_len,
                    char *why, size_t len);

#endif
