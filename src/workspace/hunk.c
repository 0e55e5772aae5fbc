/* The inverse of patch.c: a strict reader of the patch cloister writes
 * (one grammar, every line accounted for, no field that contradicts
 * another) and an exact hunk applier (no fuzz, no offset search: the
 * preimage was already matched by blob id, so any mismatch is a damaged
 * or forged bundle). */
#define _GNU_SOURCE
#include "src/workspace/hunk.h"
#include "src/workspace/pathq.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_NEWLINE "\\ No newline at end of file"
static const char zero_oid[WS_OID_HEX + 1] = "0000000000000000000000000000000000000000";

static bool starts(const struct ws_line *l, const char *p)
{
	size_t n = strlen(p);

	return l->n >= n && memcmp(l->s, p, n) == 0;
}

static bool is(const struct ws_line *l, const char *s)
{
	return l->n == strlen(s) && memcmp(l->s, s, l->n) == 0;
}

/* "100644", "100755" or (where link is given) "120000", and nothing after. */
static int mode_of(const struct ws_line *l, size_t at, bool *exec, bool *link)
{
	const char *m = l->s + at;

	if (l->n != at + 6)
		return -1;
	if (!memcmp(m, "100644", 6))
		*exec = false;
	else if (!memcmp(m, "100755", 6))
		*exec = true;
	else if (!memcmp(m, "120000", 6) && link)
		*link = true;
	else
		return -1;
	return 0;
}

static bool hex_oid(const char *s)
{
	return strspn(s, "0123456789abcdef") >= WS_OID_HEX;
}

/* "index OLD..NEW" with full ids, " MODE" when want_mode. */
static int index_line(const struct ws_line *l, struct ws_patch *p, bool want_mode)
{
	size_t at = 6 + 2 * WS_OID_HEX + 2;

	if (!starts(l, "index ") || l->n < at || !hex_oid(l->s + 6) ||
	    memcmp(l->s + 6 + WS_OID_HEX, "..", 2) || !hex_oid(l->s + 6 + WS_OID_HEX + 2))
		return -1;
	memcpy(p->old_oid, l->s + 6, WS_OID_HEX);
	memcpy(p->new_oid, l->s + 6 + WS_OID_HEX + 2, WS_OID_HEX);
	p->old_oid[WS_OID_HEX] = p->new_oid[WS_OID_HEX] = '\0';
	if (!want_mode)
		return l->n == at ? 0 : -1;
	if (l->n <= at || l->s[at] != ' ' || mode_of(l, at + 1, &p->old_exec, NULL) < 0)
		return -1;
	p->new_exec = p->old_exec;
	return 0;
}

/* Digits only (strtol would take a sign or spaces), at most 10. */
static int num(const char **s, const char *end, long *v)
{
	const char *b = *s;

	*v = 0;
	while (*s < end && **s >= '0' && **s <= '9' && *s - b < 10)
		*v = *v * 10 + (*(*s)++ - '0');
	return *s > b && (*s == end || **s < '0' || **s > '9') ? 0 : -1;
}

/* "@@ -a[,b] +c[,d] @@" then nothing or " context". */
static int hunk_head(const struct ws_line *l, struct ws_hunk *h)
{
	const char *s = l->s + 4, *end = l->s + l->n;

	h->b = h->d = 1;
	if (!starts(l, "@@ -") || num(&s, end, &h->a) < 0)
		return -1;
	if (s < end && *s == ',' && (++s, num(&s, end, &h->b) < 0))
		return -1;
	if (end - s < 2 || memcmp(s, " +", 2))
		return -1;
	s += 2;
	if (num(&s, end, &h->c) < 0 || (s < end && *s == ',' && (++s, num(&s, end, &h->d) < 0)))
		return -1;
	if (end - s < 3 || memcmp(s, " @@", 3) || (end - s > 3 && s[3] != ' '))
		return -1;
	return 0;
}

__attribute__((format(printf, 4, 5)))
static int fail(struct ws_patch *p, char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	ws_patch_free(p);
	return -1;
}

static int split_lines(const char *d, size_t dlen, struct ws_patch *p)
{
	size_t n = 0;

	for (size_t i = 0; i < dlen; i++)
		n += d[i] == '\n';
	p->lines = calloc(n + 1, sizeof(*p->lines));
	if (!p->lines)
		return -1;
	for (const char *l = d; l < d + dlen;) {
		const char *nl = memchr(l, '\n', (size_t)(d + dlen - l));
		p->lines[p->n_lines++] = (struct ws_line){WS_L_META, l, (size_t)(nl - l)};
		l = nl + 1;
	}
	return 0;
}

/* The hunks from line i on, to the end of the diff. */
static int read_hunks(struct ws_patch *p, size_t i, char *why, size_t len)
{
	bool old_done = false, new_done = false;   /* a side ended without newline */

	p->hunks = calloc(p->n_lines, sizeof(*p->hunks));
	if (!p->hunks)
		return fail(p, why, len, "out of memory");
	while (i < p->n_lines) {
		struct ws_line *l = &p->lines[i];
		struct ws_hunk *h = &p->hunks[p->n_hunks];
		long seen_old = 0, seen_new = 0;
		if (hunk_head(l, h) < 0)
			return fail(p, why, len, "its diff has a bad hunk header: %.*s", (int)l->n, l->s);
		if (old_done || new_done)
			return fail(p, why, len, "its diff has a hunk after the end of the file: %.*s", (int)l->n, l->s);
		l->kind = WS_L_HUNK;
		h->first = ++i;
		for (; i < p->n_lines && !starts(&p->lines[i], "@@"); i++) {
			struct ws_line *b = &p->lines[i];
			enum ws_lkind prev = p->lines[i - 1].kind;
			if (b->n && b->s[0] == '\\') {
				if (!is(b, NO_NEWLINE) || prev == WS_L_HUNK || prev == WS_L_NONL)
					return fail(p, why, len, "its diff has an unexpected line in a hunk: %.*s", (int)b->n, b->s);
				b->kind = WS_L_NONL;
				old_done |= prev != WS_L_ADD;
				new_done |= prev != WS_L_DEL;
				continue;
			}
			b->kind = !b->n ? WS_L_META : b->s[0] == ' ' ? WS_L_CTX : b->s[0] == '-' ? WS_L_DEL :
			          b->s[0] == '+' ? WS_L_ADD : WS_L_META;
			if (b->kind == WS_L_META)
				return fail(p, why, len, "its diff has an unexpected line in a hunk: %.*s", (int)b->n, b->s);
			/* Text after a line without newline would be joined to it:
			 * shown as two lines, written as one. */
			if ((b->kind != WS_L_ADD && old_done) || (b->kind != WS_L_DEL && new_done))
				return fail(p, why, len, "its diff has a line after the end of the file: %.*s", (int)b->n, b->s);
			seen_old += b->kind != WS_L_ADD;
			seen_new += b->kind != WS_L_DEL;
			p->added += b->kind == WS_L_ADD;
			p->removed += b->kind == WS_L_DEL;
		}
		h->count = i - h->first;
		if (seen_old != h->b || seen_new != h->d || (!h->b && !h->d)) {
			snprintf(why, len, "hunk at line %ld has %ld/%ld lines, its header says %ld/%ld", h->a, seen_old,
			         seen_new, h->b, h->d);
			ws_patch_free(p);
			return -1;
		}
		p->n_hunks++;
	}
	return 0;
}

/* The fields besides diff: binaryContent exactly when the diff says the
 * file is binary and the patch leaves content. */
static int read_content(const json_t *o, struct ws_patch *p, char *why, size_t len)
{
	const char *bc = json_string_value(json_object_get(o, "binaryContent"));
	char *again;

	if (bc && p->op == WS_OP_DELETE)
		return fail(p, why, len, "a delete with new content (binaryContent)");
	if (bc && !p->binary)
		return fail(p, why, len, "binaryContent on a text patch (its diff has no \"Binary files\" "
		            "line)");
	if (!p->binary || p->op == WS_OP_DELETE)
		return 0;
	if (!bc || ws_b64_decode(bc, &p->bin, &p->bin_len) < 0)
		return fail(p, why, len, "a binary patch needs valid base64 binaryContent");
	/* One encoding per content (no stray padding bits). */
	again = ws_b64_encode(p->bin, p->bin_len);
	if (!again || strcmp(again, bc)) {
		free(again);
		return fail(p, why, len, "its binaryContent is not in canonical base64");
	}
	free(again);
	return 0;
}

int ws_patch_read(const json_t *o, struct ws_patch *p, char *why, size_t len)
{
	const json_t *dj = json_object_get(o, "diff");
	const char *op = json_string_value(json_object_get(o, "operation"));
	const char *d = json_string_value(dj);
	size_t dlen = json_string_length(dj), i = 1;
	/* A 4095-byte name quoted with octal escapes is four times as long. */
	char a[16400], b[16400], line[32900];
	char *qa, *qb;
	bool mode_change = false;

	memset(p, 0, sizeof(*p));
	p->path = json_string_value(json_object_get(o, "path"));
	if (!p->path || !op || !d)
		return fail(p, why, len, "path, operation and diff must be strings");
	p->op = !strcmp(op, "add") ? WS_OP_ADD : !strcmp(op, "delete") ? WS_OP_DELETE : WS_OP_MODIFY;
	if (!dlen || d[dlen - 1] != '\n' || strlen(d) != dlen)
		return fail(p, why, len, "its diff is empty, has a NUL byte or does not end with a newline");
	if (split_lines(d, dlen, p) < 0)
		return fail(p, why, len, "out of memory");
	/* path is the JSON form (pathq.h); the headers name the file as git
	 * writes it, rebuilt here from the decoded name, so only that one
	 * spelling is accepted. */
	if (!(p->name = ws_path_decode(p->path)))
		return fail(p, why, len, "its path is not a name or the one C-quoted form of a name");
	qa = ws_git_name("a/", p->name);
	qb = ws_git_name("b/", p->name);
	bool named = qa && qb;
	if (named) {
		snprintf(a, sizeof(a), "%s", qa);
		snprintf(b, sizeof(b), "%s", qb);
	}
	free(qa);
	free(qb);
	if (!named)
		return fail(p, why, len, "out of memory");
	snprintf(line, sizeof(line), "diff --git %s %s", a, b);
	if (!is(&p->lines[0], line))
		return fail(p, why, len, "its diff header names another path: %.*s", (int)p->lines[0].n, p->lines[0].s);

	/* The mode lines the operation has, and no other. */
	const struct ws_line *l = i < p->n_lines ? &p->lines[i] : NULL;
	bool is_new = l && starts(l, "new file mode "), is_del = l && starts(l, "deleted file mode ");
	if ((p->op == WS_OP_ADD) != is_new || (p->op == WS_OP_DELETE) != is_del)
		return fail(p, why, len, "its operation (%s) and its diff header disagree", op);
	if (is_new && mode_of(l, 14, &p->new_exec, &p->new_link) < 0)
		return fail(p, why, len, "its diff has a new file mode apply cannot write: %.*s", (int)l->n, l->s);
	if (is_del && mode_of(l, 18, &p->old_exec, &p->old_link) < 0)
		return fail(p, why, len, "its diff has an unexpected header line: %.*s", (int)l->n, l->s);
	i += is_new || is_del;
	if (p->op == WS_OP_MODIFY && l && starts(l, "old mode ")) {
		const struct ws_line *nm = i + 1 < p->n_lines ? &p->lines[i + 1] : NULL;
		if (mode_of(l, 9, &p->old_exec, NULL) < 0 || !nm || !starts(nm, "new mode ") ||
		    mode_of(nm, 9, &p->new_exec, NULL) < 0 || p->old_exec == p->new_exec)
			return fail(p, why, len, "its diff has a mode change apply cannot write: %.*s", (int)l->n, l->s);
		mode_change = true;
		i += 2;
	}
	if (i >= p->n_lines || index_line(&p->lines[i], p, p->op == WS_OP_MODIFY && !mode_change) < 0)
		return fail(p, why, len, "its diff has no index line with full blob ids and the modes of its "
		            "operation");
	if (p->op == WS_OP_ADD && strcmp(p->old_oid, zero_oid))
		return fail(p, why, len, "an add whose diff has a base (old blob id %s)", p->old_oid);
	if (p->op == WS_OP_DELETE && strcmp(p->new_oid, zero_oid))
		return fail(p, why, len, "a delete with new content (new blob id %s)", p->new_oid);
	if ((p->op != WS_OP_ADD && !strcmp(p->old_oid, zero_oid)) ||
	    (p->op != WS_OP_DELETE && !strcmp(p->new_oid, zero_oid)))
		return fail(p, why, len, "its index line has no blob id for a side its operation has");
	i++;

	/* Then nothing (no content change), one Binary line, or names and hunks. */
	const char *from = p->op == WS_OP_ADD ? "/dev/null" : a, *to = p->op == WS_OP_DELETE ? "/dev/null" : b;
	if (i < p->n_lines && starts(&p->lines[i], "Binary files ")) {
		snprintf(line, sizeof(line), "Binary files %s and %s differ", from, to);
		if (!is(&p->lines[i], line))
			return fail(p, why, len, "its diff's Binary line names another path: %.*s",
			            (int)p->lines[i].n, p->lines[i].s);
		if (i + 1 < p->n_lines)
			return fail(p, why, len, "a binary patch with more diff after its Binary line: %.*s",
			            (int)p->lines[i + 1].n, p->lines[i + 1].s);
		p->binary = true;
	} else if (i < p->n_lines) {
		snprintf(line, sizeof(line), "--- %s", from);
		if (!is(&p->lines[i], line))
			return fail(p, why, len, "its diff has an unexpected header line: %.*s",
			            (int)p->lines[i].n, p->lines[i].s);
		snprintf(line, sizeof(line), "+++ %s", to);
		if (i + 1 >= p->n_lines || !is(&p->lines[i + 1], line) || i + 2 >= p->n_lines)
			return fail(p, why, len, "its diff's ---/+++ lines do not name %s, or no hunk follows", p->path);
		if (read_hunks(p, i + 2, why, len) < 0)
			return -1;
	}
	if (read_content(o, p, why, len) < 0)
		return -1;
	if (p->binary && p->op == WS_OP_ADD && !ws_is_binary((const char *)p->bin, p->bin_len))
		return fail(p, why, len, "a binary patch of text content (text is carried as hunks)");
	if (p->op == WS_OP_ADD) {
		/* All an add needs is here: its content is checked now, so
		 * `diff show` refuses what apply would. */
		char *out = NULL;
		size_t out_len;
		int rc = ws_patch_result(p, "", 0, &out, &out_len, why, len);
		/* A link's content is its target: a path symlinkat can take. */
		bool bad_link = rc == 0 && p->new_link && (!out_len || out_len >= 4096 || memchr(out, '\0', out_len));
		free(out);
		if (bad_link)
			return fail(p, why, len, "a symlink whose target is empty, too long or has a NUL byte");
		if (rc) {
			ws_patch_free(p);
			return -1;
		}
	}
	return 0;
}

bool ws_link_leaves_tree(const char *path, const char *target, size_t len)
{
	long depth = 0;
	const char *end = target + len;

	if (len && target[0] == '/')
		return true;
	for (const char *c = path; (c = strchr(c, '/')); c++)
		depth++;
	for (const char *c = target; c < end;) {
		const char *slash = memchr(c, '/', (size_t)(end - c));
		size_t n = slash ? (size_t)(slash - c) : (size_t)(end - c);
		if (n == 2 && !memcmp(c, "..", 2) && --depth < 0)
			return true;
		else if (n && !(n == 1 && *c == '.') && !(n == 2 && !memcmp(c, "..", 2)))
			depth++;
		c += n + (slash != NULL);
	}
	return false;
}

void ws_patch_free(struct ws_patch *p)
{
	free(p->name);
	p->name = NULL;
	free(p->lines);
	free(p->hunks);
	free(p->bin);
	p->lines = NULL;
	p->hunks = NULL;
	p->bin = NULL;
	p->n_lines = p->n_hunks = 0;
}

struct line {
	const char *s;
	size_t n;
	bool nl;
};

static struct line *split(const char *buf, size_t len, size_t *count)
{
	size_t n = 0, cap = 64;
	struct line *v = malloc(cap * sizeof(*v));

	if (!v)
		return NULL;
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t l = nl ? (size_t)(nl - (buf + at)) : len - at;
		if (n == cap) {
			struct line *w = realloc(v, (cap *= 2) * sizeof(*v));
			if (!w) {
				free(v);
				return NULL;
			}
			v = w;
		}
		v[n++] = (struct line){buf + at, l, nl != NULL};
		at += l + (nl != NULL);
	}
	*count = n;
	return v;
}

struct out {
	char *s;
	size_t len, cap;
	bool oom, open;       /* open: the last line has no newline */
	bool joined;          /* something was put after an open line */
};

static void put(struct out *o, const char *s, size_t n, bool nl)
{
	size_t need = o->len + n + 1;

	if (o->oom)
		return;
	if (o->open && (n || nl))
		o->joined = true;
	if (need > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		while (cap < need)
			cap *= 2;
		char *p = realloc(o->s, cap);
		if (!p) {
			o->oom = true;
			return;
		}
		o->s = p;
		o->cap = cap;
	}
	if (!o->s)   /* (cannot be: need > 0 made it above) */
		return;
	if (n)
		memcpy(o->s + o->len, s, n);
	o->len += n;
	if (nl)
		o->s[o->len++] = '\n';
	o->open = !nl;
}

/* One hunk: old lines checked from *pos on, new lines appended. 0, or 1
 * with why[] naming what does not fit. */
static int one_hunk(const struct ws_patch *p, const struct ws_hunk *h, const struct line *old, size_t n_old,
                    size_t *pos, struct out *o, char *why, size_t len)
{
	size_t start = h->b == 0 ? (size_t)h->a : (size_t)h->a - 1;

	if (start < *pos || start > n_old) {
		snprintf(why, len, "hunk at line %ld is out of order or past the end", h->a);
		return 1;
	}
	for (; *pos < start; (*pos)++)
		put(o, old[*pos].s, old[*pos].n, old[*pos].nl);
	for (size_t k = h->first; k < h->first + h->count; k++) {
		const struct ws_line *l = &p->lines[k];
		bool nl = !(k + 1 < h->first + h->count && p->lines[k + 1].kind == WS_L_NONL);
		if (l->kind == WS_L_NONL)
			continue;
		if (l->kind != WS_L_ADD) {
			if (*pos >= n_old || old[*pos].n != l->n - 1 || memcmp(old[*pos].s, l->s + 1, l->n - 1) != 0 ||
			    old[*pos].nl != nl) {
				snprintf(why, len, "hunk at line %ld does not match the file at line %zu", h->a, *pos + 1);
				return 1;
			}
			(*pos)++;
		}
		if (l->kind != WS_L_DEL)
			put(o, l->s + 1, l->n - 1, nl);
	}
	return 0;
}

int ws_patch_result(const struct ws_patch *p, const char *old, size_t old_len, char **out, size_t *out_len,
                    char *why, size_t len)
{
	size_t n_old = 0, pos = 0;
	struct line *lines = NULL;
	struct out o = {0};
	char oid[WS_OID_HEX + 1];
	int rc = 0;

	*out = NULL;
	*out_len = 0;
	if (p->binary) {
		/* The capture's rule: binary when either side is. */
		if (p->op == WS_OP_MODIFY && !ws_is_binary(old, old_len) &&
		    !ws_is_binary((const char *)p->bin, p->bin_len)) {
			snprintf(why, len, "a binary patch of text content (text is carried as hunks)");
			return -1;
		}
		if (p->op != WS_OP_DELETE) {
			put(&o, (const char *)p->bin, p->bin_len, false);
		}
	} else {
		if (p->n_hunks && ws_is_binary(old, old_len)) {
			snprintf(why, len, "a text patch of a binary file");
			return -1;
		}
		if (!(lines = split(old, old_len, &n_old))) {
			snprintf(why, len, "out of memory");
			return -1;
		}
		for (size_t k = 0; rc == 0 && k < p->n_hunks; k++)
			rc = one_hunk(p, &p->hunks[k], lines, n_old, &pos, &o, why, len);
		for (; rc == 0 && pos < n_old; pos++)
			put(&o, lines[pos].s, lines[pos].n, lines[pos].nl);
		free(lines);
		if (rc == 0 && o.joined) {
			snprintf(why, len, "its hunks put text after a line without newline");
			rc = -1;
		}
	}
	if (rc == 0 && !o.oom)
		put(&o, "", 0, false);   /* a buffer even for an empty result */
	if (rc == 0 && o.oom) {
		snprintf(why, len, "out of memory");
		rc = -1;
	}
	if (rc == 0 && p->op == WS_OP_DELETE && !p->binary && o.len) {
		snprintf(why, len, "a delete whose hunks leave content");
		rc = -1;
	}
	if (rc == 0 && p->op != WS_OP_DELETE) {
		ws_blob_id(o.s, o.len, oid);
		if (strcmp(oid, p->new_oid)) {
			snprintf(why, len, "the patched content does not match the blob id of its index line");
			rc = -1;
		}
	}
	if (rc) {
		free(o.s);
		return rc;
	}
	*out = o.s;
	*out_len = o.len;
	return 0;
}
