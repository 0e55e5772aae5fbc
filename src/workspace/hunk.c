/* The inverse of patch.c: a strict reader of the header cloister writes
 * and an exact hunk applier (no fuzz, no offset search: the preimage was
 * already matched by blob id, so any mismatch is a damaged bundle). */
#define _GNU_SOURCE
#include "src/workspace/hunk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool starts(const char *l, const char *p)
{
	return strncmp(l, p, strlen(p)) == 0;
}

static size_t line_len(const char *l)
{
	const char *nl = strchr(l, '\n');

	return nl ? (size_t)(nl - l) : strlen(l);
}

static int mode_of(const char *s, bool *exec, bool *link)
{
	if (starts(s, "100644"))
		*exec = false;
	else if (starts(s, "100755"))
		*exec = true;
	else if (starts(s, "120000") && link)
		*link = true;
	else
		return -1;
	return 0;
}

static int oids(const char *s, struct ws_header *h)
{
	const char *dots = strstr(s, "..");

	if (!dots || dots - s != WS_OID_HEX || strspn(s, "0123456789abcdef") != WS_OID_HEX ||
	    strspn(dots + 2, "0123456789abcdef") != WS_OID_HEX)
		return -1;
	memcpy(h->old_oid, s, WS_OID_HEX);
	memcpy(h->new_oid, dots + 2, WS_OID_HEX);
	h->old_oid[WS_OID_HEX] = h->new_oid[WS_OID_HEX] = '\0';
	return 0;
}

int ws_header_parse(const char *diff, const char *path, struct ws_header *h, char *why, size_t len)
{
	char first[8300];
	const char *l = diff;
	bool have_index = false;

	memset(h, 0, sizeof(*h));
	snprintf(first, sizeof(first), "diff --git a/%s b/%s\n", path, path);
	if (!starts(l, first)) {
		snprintf(why, len, "its diff does not start with \"diff --git a/%s b/%s\"", path, path);
		return -1;
	}
	for (l += strlen(first); *l; l += line_len(l) + (l[line_len(l)] == '\n')) {
		int bad = 0;
		if (starts(l, "@@ ")) {
			h->hunks = l;
			break;
		}
		if (starts(l, "new file mode "))
			h->is_new = true, bad = mode_of(l + 14, &h->new_exec, NULL);
		else if (starts(l, "deleted file mode "))
			h->is_deleted = true, bad = mode_of(l + 18, &h->old_exec, &h->old_link);
		else if (starts(l, "old mode "))
			bad = mode_of(l + 9, &h->old_exec, &h->old_link);
		else if (starts(l, "new mode "))
			bad = mode_of(l + 9, &h->new_exec, NULL);
		else if (starts(l, "index ")) {
			bad = oids(l + 6, h);
			have_index = !bad;
			if (!bad && l[6 + 2 * WS_OID_HEX + 2] == ' ') {
				bad = mode_of(l + 6 + 2 * WS_OID_HEX + 3, &h->old_exec, &h->old_link);
				h->new_exec = h->old_exec;
			}
		} else if (starts(l, "Binary files "))
			h->binary = true;
		else if (!starts(l, "--- ") && !starts(l, "+++ "))
			bad = 1;
		if (bad) {
			snprintf(why, len, "its diff has an unexpected header line: %.*s", (int)line_len(l), l);
			return -1;
		}
	}
	if (!have_index) {
		snprintf(why, len, "its diff has no index line with full blob ids");
		return -1;
	}
	return 0;
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
	bool oom;
};

static void put(struct out *o, const char *s, size_t n, bool nl)
{
	size_t need = o->len + n + 1;

	if (o->oom)
		return;
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
}

/* "@@ -a[,b] +c[,d] @@" */
static int hunk_head(const char *l, long *a, long *b, long *c, long *d)
{
	char *e;

	*b = *d = 1;
	if (!starts(l, "@@ -"))
		return -1;
	*a = strtol(l + 4, &e, 10);
	if (*e == ',')
		*b = strtol(e + 1, &e, 10);
	if (strncmp(e, " +", 2))
		return -1;
	*c = strtol(e + 2, &e, 10);
	if (*e == ',')
		*d = strtol(e + 1, &e, 10);
	return starts(e, " @@") && *a >= 0 && *b >= 0 && *c >= 0 && *d >= 0 ? 0 : -1;
}

/* One hunk from l: old lines checked from *pos on, new lines appended. */
static const char *one_hunk(const char *l, const struct line *old, size_t n_old, size_t *pos,
                            struct out *o, char *why, size_t len)
{
	long a, b, c, d, seen_old = 0, seen_new = 0;
	size_t start;

	if (hunk_head(l, &a, &b, &c, &d) < 0) {
		snprintf(why, len, "bad hunk header: %.*s", (int)line_len(l), l);
		return NULL;
	}
	start = b == 0 ? (size_t)a : (size_t)a - 1;
	if (start < *pos || start > n_old) {
		snprintf(why, len, "hunk at line %ld is out of order or past the end", a);
		return NULL;
	}
	for (; *pos < start; (*pos)++)
		put(o, old[*pos].s, old[*pos].n, old[*pos].nl);
	/* Past the header line and its newline if it has one: a diff may end
	 * right after "@@ ... @@" (a hostile bundle), and stepping over a
	 * newline that is not there reads past the string's NUL. */
	l += line_len(l);
	l += *l == '\n';
	while (*l == ' ' || *l == '-' || *l == '+') {
		char op = *l;
		size_t n = line_len(l) - 1;
		const char *text = l + 1;
		l += n + 1 + (l[n + 1] == '\n');
		bool nl = !starts(l, "\\ ");
		if (!nl)
			l += line_len(l) + (l[line_len(l)] == '\n');
		if (op != '+') {
			if (*pos >= n_old || old[*pos].n != n || memcmp(old[*pos].s, text, n) != 0 ||
			    old[*pos].nl != nl) {
				snprintf(why, len, "hunk at line %ld does not match the file at line %zu", a, *pos + 1);
				return NULL;
			}
			(*pos)++;
			seen_old++;
		}
		if (op != '-') {
			put(o, text, n, nl);
			seen_new++;
		}
	}
	if (seen_old != b || seen_new != d) {
		snprintf(why, len, "hunk at line %ld has %ld/%ld lines, its header says %ld/%ld", a, seen_old,
		         seen_new, b, d);
		return NULL;
	}
	return l;
}

int ws_hunks_apply(const char *hunks, const char *old, size_t old_len, char **out, size_t *out_len,
                   char *why, size_t len)
{
	size_t n_old = 0, pos = 0;
	struct line *lines = split(old, old_len, &n_old);
	struct out o = {0};
	const char *l = hunks;

	if (!lines) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	while (l && *l)
		l = one_hunk(l, lines, n_old, &pos, &o, why, len);
	for (; l && pos < n_old; pos++)
		put(&o, lines[pos].s, lines[pos].n, lines[pos].nl);
	free(lines);
	if (!l || o.oom) {
		if (o.oom)
			snprintf(why, len, "out of memory");
		free(o.s);
		return -1;
	}
	put(&o, "", 0, false);   /* a buffer even for an empty result */
	*out = o.s;
	*out_len = o.len;
	return 0;
}
