/* Builds one patch of a diff bundle: the git header (modes, full blob ids
 * so apply can check preimages exactly) is written here, the hunks come
 * from libgit2's diff of the two buffers. */
#define _GNU_SOURCE
#include "src/workspace/patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "src/util/cleanup.h"
#include "src/workspace/pathq.h"
#include "src/workspace/wsdl.h"

struct sbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->s, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

void ws_blob_id(const char *data, size_t len, char out[WS_OID_HEX + 1])
{
	git_oid oid;

	ws_git.odb_hash(&oid, data, len, GIT_OBJECT_BLOB);
	ws_git.oid_fmt(out, &oid);
	out[WS_OID_HEX] = '\0';
}

bool ws_utf8_valid(const char *data, size_t len)
{
	const unsigned char *c = (const unsigned char *)data, *end = c + len;

	while (c < end) {
		size_t n = *c < 0x80 ? 1 : (*c & 0xe0) == 0xc0 ? 2 : (*c & 0xf0) == 0xe0 ? 3 :
		           (*c & 0xf8) == 0xf0 ? 4 : 0;
		uint32_t cp;

		if (!n || (size_t)(end - c) < n)
			return false;
		cp = n == 1 ? *c : *c & (0x7f >> n);
		for (size_t i = 1; i < n; i++) {
			if ((c[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (c[i] & 0x3f);
		}
		/* Overlong forms, surrogates and values past U+10FFFF are not
		 * UTF-8 either (jansson refuses them too). */
		if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
			return false;
		c += n;
	}
	return true;
}

/* A NUL anywhere makes a file binary (git looks at the first 8000 bytes
 * only, but a text patch is a JSON string, which cannot hold a NUL: one
 * past byte 8000 cut the patch short there). A JSON string must also be
 * UTF-8: any other text goes as binary (its full content in base64) too. */
bool ws_is_binary(const char *data, size_t len)
{
	return memchr(data, '\0', len) != NULL || !ws_utf8_valid(data, len);
}

static const char *mode_of(const struct ws_side *s)
{
	return s->link ? "120000" : s->exec ? "100755" : "100644";
}

/* diff --git, mode lines, index line with full ids, ---/+++ names. */
struct names {
	char *a, *b;          /* "a/P" and "b/P" as git writes them (quoted when odd) */
};

static void header(struct sbuf *b, const struct names *nm, const struct ws_side *o, const struct ws_side *n,
                   bool with_names)
{
	char oid_o[WS_OID_HEX + 1], oid_n[WS_OID_HEX + 1], line[256];

	sb_str(b, "diff --git ");
	sb_str(b, nm->a);
	sb_str(b, " ");
	sb_str(b, nm->b);
	sb_str(b, "\n");
	if (!o->present) {
		snprintf(line, sizeof(line), "new file mode %s\n", mode_of(n));
		sb_str(b, line);
	} else if (!n->present) {
		snprintf(line, sizeof(line), "deleted file mode %s\n", mode_of(o));
		sb_str(b, line);
	} else if ((o->exec != n->exec || o->link != n->link)) {
		snprintf(line, sizeof(line), "old mode %s\nnew mode %s\n", mode_of(o), mode_of(n));
		sb_str(b, line);
	}
	memset(oid_o, '0', WS_OID_HEX);
	memset(oid_n, '0', WS_OID_HEX);
	oid_o[WS_OID_HEX] = oid_n[WS_OID_HEX] = '\0';
	if (o->present)
		ws_blob_id(o->data, o->len, oid_o);
	if (n->present)
		ws_blob_id(n->data, n->len, oid_n);
	/* The mode goes on the index line only when it did not change. */
	snprintf(line, sizeof(line), "index %s..%s%s%s\n", oid_o, oid_n,
	         o->present && n->present && o->exec == n->exec ? " " : "",
	         o->present && n->present && o->exec == n->exec ? mode_of(o) : "");
	sb_str(b, line);
	if (!with_names)
		return;
	sb_str(b, "--- ");
	sb_str(b, o->present ? nm->a : "/dev/null");
	sb_str(b, "\n+++ ");
	sb_str(b, n->present ? nm->b : "/dev/null");
	sb_str(b, "\n");
}

static int on_hunk(const git_diff_delta *d, const git_diff_hunk *h, void *payload)
{
	sb_add(payload, h->header, h->header_len);
	return 0;
}

static int on_line(const git_diff_delta *d, const git_diff_hunk *h, const git_diff_line *l,
                   void *payload)
{
	char origin = l->origin;

	/* The "\ No newline at end of file" markers arrive as their own
	 * lines, text included; every other line gets its origin first. */
	if (origin == GIT_DIFF_LINE_CONTEXT || origin == GIT_DIFF_LINE_ADDITION ||
	    origin == GIT_DIFF_LINE_DELETION)
		sb_add(payload, &origin, 1);
	sb_add(payload, l->content, l->content_len);
	return 0;
}

static int hunks(struct sbuf *b, const struct ws_side *o, const struct ws_side *n, cl_error *err)
{
	git_diff_options opt;
	int rc;

	/* GIT_DIFF_OPTIONS_INIT leaves fields to zero-init (-Wextra objects). */
	memset(&opt, 0, sizeof(opt));
	opt.version = GIT_DIFF_OPTIONS_VERSION;
	opt.ignore_submodules = GIT_SUBMODULE_IGNORE_UNSPECIFIED;

	/* Binary was decided by the caller (git's rule, both sides). */
	opt.flags = GIT_DIFF_FORCE_TEXT;
	opt.context_lines = 3;
	rc = ws_git.diff_buffers(o->present ? o->data : NULL, o->present ? o->len : 0, NULL,
	                         n->present ? n->data : NULL, n->present ? n->len : 0, NULL, &opt,
	                         NULL, NULL, on_hunk, on_line, b);
	if (rc < 0) {
		const git_error *ge = ws_git.error_last();
		return cl_fail(err, 0, "diffing: %s", ge && ge->message ? ge->message : "libgit2 error");
	}
	return 0;
}

static bool same_content(const struct ws_side *o, const struct ws_side *n)
{
	return o->len == n->len && (o->len == 0 || memcmp(o->data, n->data, o->len) == 0);
}

static void names_free(struct names *nm)
{
	free(nm->a);
	free(nm->b);
}

json_t *ws_patch_make(const char *path, const struct ws_side *o, const struct ws_side *n,
                      bool *same, cl_error *err)
{
	__attribute__((cleanup(names_free))) struct names nm = {0};
	cl_autofree char *jpath = NULL;
	struct sbuf b = {0};
	bool binary = (o->present && ws_is_binary(o->data, o->len)) ||
	              (n->present && ws_is_binary(n->data, n->len));
	bool content_same = o->present && n->present && same_content(o, n);
	json_t *p = NULL;

	*same = content_same && o->exec == n->exec && o->link == n->link;
	if (*same)
		return NULL;
	nm.a = ws_git_name("a/", path);
	nm.b = ws_git_name("b/", path);
	jpath = ws_path_encode(path);
	if (!nm.a || !nm.b || !jpath) {
		cl_fail(err, 12, "building the patch for %s", path);
		return NULL;
	}
	/* ---/+++ appear only when there is content to show, as in git. */
	header(&b, &nm, o, n, !content_same && !binary && ((o->present && o->len) || (n->present && n->len)));
	if (!content_same && binary) {
		sb_str(&b, "Binary files ");
		sb_str(&b, o->present ? nm.a : "/dev/null");
		sb_str(&b, " and ");
		sb_str(&b, n->present ? nm.b : "/dev/null");
		sb_str(&b, " differ\n");
	} else if (!content_same && hunks(&b, o, n, err) < 0) {
		free(b.s);
		return NULL;
	}
	if (b.oom) {
		free(b.s);
		cl_fail(err, 12, "building the patch for %s", jpath);
		return NULL;
	}
	/* By length, never "s": a NUL would cut the text there. None can be
	 * in it (content with one is binary), but a cut patch is one apply
	 * refuses with a misleading conflict, so say so here instead. */
	if (memchr(b.s, '\0', b.len)) {
		free(b.s);
		cl_fail(err, 0, "building the patch for %s: a NUL byte in its text diff", path);
		return NULL;
	}
	p = json_pack("{s:s,s:s,s:s%}", "path", jpath, "operation",
	              !o->present ? "add" : !n->present ? "delete" : "modify", "diff", b.s, b.len);
	free(b.s);
	/* The content only when the patch changes it: a mode change of a
	 * binary file has no Binary line, and apply refuses content the diff
	 * does not announce. */
	if (p && binary && n->present && !content_same) {
		char *enc = ws_b64_encode((const unsigned char *)n->data, n->len);
		if (!enc || json_object_set_new(p, "binaryContent", json_string(enc)) < 0) {
			json_decref(p);
			p = NULL;
		}
		free(enc);
	}
	if (!p)
		cl_fail(err, 12, "building the patch for %s", jpath);
	return p;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *ws_b64_encode(const unsigned char *in, size_t len)
{
	char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < len ? (unsigned)in[i + 1] << 8 : 0) |
		             (i + 2 < len ? in[i + 2] : 0);
		*o++ = b64[v >> 18 & 63];
		*o++ = b64[v >> 12 & 63];
		*o++ = (char)(i + 1 < len ? b64[v >> 6 & 63] : '=');
		*o++ = (char)(i + 2 < len ? b64[v & 63] : '=');
	}
	*o = '\0';
	return out;
}

static int b64_val(char c)
{
	const char *p = c ? strchr(b64, c) : NULL;

	return p ? (int)(p - b64) : -1;
}

int ws_b64_decode(const char *in, unsigned char **out, size_t *len)
{
	size_t n = strlen(in), k = 0;
	unsigned char *o;

	if (n % 4)
		return -1;
	o = malloc(n / 4 * 3 + 1);
	if (!o)
		return -1;
	for (size_t i = 0; i < n; i += 4) {
		int a = b64_val(in[i]), b = b64_val(in[i + 1]);
		int c = in[i + 2] == '=' ? 0 : b64_val(in[i + 2]);
		int d = in[i + 3] == '=' ? 0 : b64_val(in[i + 3]);
		bool pad2 = in[i + 2] == '=', pad3 = in[i + 3] == '=';
		if (a < 0 || b < 0 || c < 0 || d < 0 || (pad2 && !pad3) || ((pad2 || pad3) && i + 4 != n)) {
			free(o);
			return -1;
		}
		unsigned v = (unsigned)a << 18 | (unsigned)b << 12 | (unsigned)c << 6 | (unsigned)d;
		o[k++] = (unsigned char)(v >> 16);
		if (!pad2)
			o[k++] = (unsigned char)(v >> 8);
		if (!pad3)
			o[k++] = (unsigned char)v;
	}
	*out = o;
	*len = k;
	return 0;
}
