/* Unit tests for reading a diff bundle's patches back (src/workspace/hunk.c,
 * bundle_load.c): the strict patch reader that `diff show`, the review gate
 * and `diff apply` all work from, and the exact hunk applier. Each refusal
 * is a bundle whose fields disagree, so that what show prints would not be
 * what apply writes. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/workspace/apply.h"
#include "src/workspace/hunk.h"
#include "src/workspace/patch.h"
#include "src/workspace/pathq.h"
#include "src/workspace/wsdl.h"
#include "tests/unit/unit.h"

#define Z40 "0000000000000000000000000000000000000000"
#define GIT "diff --git a/n.txt b/n.txt\n"
#define NAMES "--- a/n.txt\n+++ b/n.txt\n"

static char why[512];

static const char *oid(const char *s, size_t n)
{
	static char buf[4][WS_OID_HEX + 1];
	static int k;
	char *o = buf[k++ % 4];

	ws_blob_id(s, n, o);
	return o;
}

/* (idx and cat hand out rotating static buffers: a result is used within
 * the next few calls, or copied.) */
/* "index OLD..NEW[ 100644]" for old -> new text (NULL: that side absent). */
static char *idx(const char *old, const char *new_, const char *mode)
{
	static char buf[4][128];
	static int k;
	char *o = buf[k++ % 4];

	snprintf(o, 128, "index %s..%s%s%s\n", old ? oid(old, strlen(old)) : Z40,
	         new_ ? oid(new_, strlen(new_)) : Z40, mode ? " " : "", mode ? mode : "");
	return o;
}

static char *cat(const char *first, ...)
{
	static char buf[8][8192];
	static int k;
	char *o = buf[k++ % 8];
	va_list ap;

	o[0] = '\0';
	va_start(ap, first);
	for (const char *s = first; s; s = va_arg(ap, const char *))
		strncat(o, s, 8191 - strlen(o));
	va_end(ap);
	return o;
}

static json_t *obj(const char *op, const char *diff, const char *bc)
{
	json_t *p = json_pack("{s:s,s:s,s:s}", "path", "n.txt", "operation", op, "diff", diff);

	if (bc)
		json_object_set_new(p, "binaryContent", json_string(bc));
	return p;
}

/* The patch reads, and applied to old gives want (want NULL: reads only). */
static int gives(const char *op, const char *diff, const char *bc, const char *old, const char *want)
{
	json_t *o = obj(op, diff, bc);
	struct ws_patch p;
	char *out = NULL;
	size_t n = 0;
	int ok = ws_patch_read(o, &p, why, sizeof(why)) == 0;

	if (ok && want)
		ok = ws_patch_result(&p, old, strlen(old), &out, &n, why, sizeof(why)) == 0 && n == strlen(want) &&
		     !memcmp(out, want, n);
	if (ok)
		ws_patch_free(&p);
	free(out);
	json_decref(o);
	return ok;
}

/* Refused while reading, with want_why in the reason. */
static int refused(const char *op, const char *diff, const char *bc, const char *want_why)
{
	json_t *o = obj(op, diff, bc);
	struct ws_patch p;
	int rc = ws_patch_read(o, &p, why, sizeof(why));

	json_decref(o);
	if (rc == 0)
		ws_patch_free(&p);
	if (rc == 0 || !strstr(why, want_why))
		fprintf(stderr, "  (reason: %s)\n", rc == 0 ? "accepted" : why);
	return rc < 0 && strstr(why, want_why) != NULL;
}

/* Reads, but its result over old is refused: rc 1 (conflict) or -1. */
static int result_refused(const char *op, const char *diff, const char *bc, const char *old, size_t old_len,
                          int want_rc, const char *want_why)
{
	json_t *o = obj(op, diff, bc);
	struct ws_patch p;
	char *out = NULL;
	size_t n;
	int rc = -2;

	if (ws_patch_read(o, &p, why, sizeof(why)) == 0) {
		rc = ws_patch_result(&p, old, old_len, &out, &n, why, sizeof(why));
		ws_patch_free(&p);
	}
	free(out);
	json_decref(o);
	if (rc != want_rc || !strstr(why, want_why))
		fprintf(stderr, "  (rc %d, reason: %s)\n", rc, why);
	return rc == want_rc && strstr(why, want_why) != NULL;
}

static int binary_gives(const char *diff, const char *bc, const char *want, size_t want_len)
{
	json_t *o = obj("add", diff, bc);
	struct ws_patch p;
	char *out = NULL;
	size_t n = 0;
	int ok = ws_patch_read(o, &p, why, sizeof(why)) == 0;

	if (ok) {
		ok = p.binary && ws_patch_result(&p, "", 0, &out, &n, why, sizeof(why)) == 0 && n == want_len &&
		     !memcmp(out, want, n);
		ws_patch_free(&p);
	}
	free(out);
	json_decref(o);
	return ok;
}

static int bundle_reads(const char *text)
{
	struct ws_bundle b;
	cl_error err = {0};
	int rc = ws_bundle_parse(text, strlen(text), "t.json", &b, &err);

	if (rc == 0)
		ws_bundle_free(&b);
	else
		fprintf(stderr, "  (reason: %s)\n", err.msg);
	return rc == 0;
}

static int bundle_refused(const char *text, const char *want_why)
{
	struct ws_bundle b;
	cl_error err = {0};
	int rc = ws_bundle_parse(text, strlen(text), "t.json", &b, &err);

	if (rc == 0)
		ws_bundle_free(&b);
	if (rc == 0 || !strstr(err.msg, want_why))
		fprintf(stderr, "  (reason: %s)\n", rc == 0 ? "accepted" : err.msg);
	return rc < 0 && strstr(err.msg, want_why) != NULL;
}

static void hunks(void)
{
	char mod[1024];

	snprintf(mod, sizeof(mod), "%s", cat(GIT, idx("a\nb\n", "a\nB\n", "100644"), NAMES, NULL));

	CHECK("a modify applies", gives("modify", cat(mod, "@@ -1,2 +1,2 @@\n a\n-b\n+B\n", NULL), NULL,
	                                "a\nb\n", "a\nB\n"));
	CHECK("a hunk in the middle keeps the lines around it",
	      gives("modify", cat(GIT, idx("a\nb\nc\n", "a\nB\nc\n", "100644"), NAMES, "@@ -2 +2 @@\n-b\n+B\n", NULL),
	            NULL, "a\nb\nc\n", "a\nB\nc\n"));
	CHECK("an add applies",
	      gives("add", cat(GIT, "new file mode 100644\n", idx(NULL, "new\n", NULL), "--- /dev/null\n+++ b/n.txt\n",
	                       "@@ -0,0 +1 @@\n+new\n", NULL), NULL, "", "new\n"));
	CHECK("an empty add has no names and no hunks",
	      gives("add", cat(GIT, "new file mode 100755\n", idx(NULL, "", NULL), NULL), NULL, "", ""));
	CHECK("no newline at the end of the new side",
	      gives("modify", cat(GIT, idx("a\n", "b", "100644"), NAMES,
	                          "@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n", NULL), NULL, "a\n", "b"));
	CHECK("a delete whose hunks remove the whole file reads",
	      gives("delete", cat(GIT, "deleted file mode 100644\n", idx("a\n", NULL, NULL),
	                          "--- a/n.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n", NULL), NULL, "a\n", ""));
	CHECK("a mode change alone reads",
	      gives("modify", cat(GIT, "old mode 100644\nnew mode 100755\n", idx("a\n", "a\n", NULL), NULL), NULL,
	            "a\n", "a\n"));

	CHECK("a context line that does not match is a conflict",
	      result_refused("modify", cat(mod, "@@ -1,2 +1,2 @@\n x\n-b\n+B\n", NULL), NULL, "a\nb\n", 4, 1,
	                     "does not match the file at line 1"));
	CHECK("a hunk past the end is a conflict",
	      result_refused("modify", cat(mod, "@@ -5 +5 @@\n-a\n+b\n", NULL), NULL, "a\n", 2, 1, "past the end"));
	CHECK("hunks out of order are a conflict",
	      result_refused("modify", cat(mod, "@@ -2 +2 @@\n-b\n+B\n@@ -1 +1 @@\n-a\n+A\n", NULL), NULL, "a\nb\n",
	                     4, 1, "out of order"));
	CHECK("a line count that disagrees with the header is refused",
	      refused("modify", cat(mod, "@@ -1,2 +1,2 @@\n-a\n+b\n", NULL), NULL, "has 1/1 lines, its header says 2/2"));
	CHECK("a diff ending at its hunk header is refused",
	      refused("modify", cat(mod, "@@ -0,0 +1 @@\n", NULL), NULL, "has 0/0 lines, its header says 0/1"));
	CHECK("a bad hunk header is refused", refused("modify", cat(mod, "@@ -x +1 @@\n+a\n", NULL), NULL,
	                                              "bad hunk header"));
	CHECK("a signed number in a hunk header is refused",
	      refused("modify", cat(mod, "@@ -+1 +1 @@\n-a\n+b\n", NULL), NULL, "bad hunk header"));
	CHECK("a diff whose last line has no newline is refused",
	      refused("modify", cat(mod, "@@ -1 +1 @@\n-a\n+b", NULL), NULL, "does not end with a newline"));
	CHECK("a stray line after the hunks is refused",
	      refused("modify", cat(mod, "@@ -1 +1 @@\n-a\n+b\nrm -rf /\n", NULL), NULL, "unexpected line in a hunk"));
}

static void disagreements(void)
{
	const char *bin = "AAECAw==";   /* 00 01 02 03 */
	const char *raw = "\0\1\2\3";
	char bidx[128];

	snprintf(bidx, sizeof(bidx), "index %s..%s\n", Z40, oid(raw, 4));
	char badd[1024];

	snprintf(badd, sizeof(badd), "%s", cat(GIT, "new file mode 100644\n", bidx,
	                                       "Binary files /dev/null and b/n.txt differ\n", NULL));

	CHECK("a binary add gives its content", binary_gives(badd, bin, raw, 4));
	/* The review-gate bypass: the reviewer sees a text hunk, apply
	 * would have written binaryContent. */
	CHECK("a Binary line followed by text hunks is refused",
	      refused("add", cat(badd, "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+benign\n", NULL), bin,
	              "a binary patch with more diff after its Binary line"));
	CHECK("binaryContent on a text patch is refused",
	      refused("add", cat(GIT, "new file mode 100644\n", idx(NULL, "benign\n", NULL), "--- /dev/null\n+++ b/n.txt\n",
	                         "@@ -0,0 +1 @@\n+benign\n", NULL), bin, "binaryContent on a text patch"));
	CHECK("a binary patch without binaryContent is refused", refused("add", badd, NULL, "needs valid base64"));
	CHECK("binaryContent that is not canonical base64 is refused", refused("add", badd, "AAECAx==", "canonical"));
	CHECK("binaryContent that does not match the index line is refused",
	      refused("add", badd, "AAECBA==", "does not match the blob id"));
	snprintf(bidx, sizeof(bidx), "index %s..%s\n", Z40, oid("text\n", 5));
	CHECK("a binary add of text content is refused",
	      refused("add", cat(GIT, "new file mode 100644\n", bidx, "Binary files /dev/null and b/n.txt differ\n", NULL),
	              "dGV4dAo=", "binary patch of text content"));

	CHECK("an add whose index line has a base is refused",
	      refused("add", cat(GIT, "new file mode 100644\n", idx("old\n", "new\n", NULL), NULL), NULL,
	              "an add whose diff has a base"));
	CHECK("an add whose diff names an old side is refused",
	      refused("add", cat(GIT, "new file mode 100644\n", idx(NULL, "new\n", NULL), NAMES, "@@ -0,0 +1 @@\n+new\n",
	                         NULL), NULL, "unexpected header line: --- a/n.txt"));
	CHECK("a delete with a new blob id is refused",
	      refused("delete", cat(GIT, "deleted file mode 100644\n", idx("a\n", "b\n", NULL), NULL), NULL,
	              "a delete with new content"));
	CHECK("a delete with binaryContent is refused",
	      refused("delete", cat(GIT, "deleted file mode 100644\n", idx("a\n", NULL, NULL), NULL), bin,
	              "a delete with new content (binaryContent)"));
	CHECK("a delete whose hunks leave content is refused",
	      result_refused("delete", cat(GIT, "deleted file mode 100644\n", idx("a\nb\n", NULL, NULL),
	                                   "--- a/n.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n", NULL), NULL, "a\nb\n", 4, -1,
	                     "leave content"));
	CHECK("a modify with a new file header is refused",
	      refused("modify", cat(GIT, "new file mode 100644\n", idx(NULL, "a\n", NULL), NULL), NULL,
	              "its operation (modify) and its diff header disagree"));
	CHECK("an add without a new file header is refused",
	      refused("add", cat(GIT, idx("a\n", "b\n", "100644"), NULL), NULL,
	              "its operation (add) and its diff header disagree"));
	CHECK("a diff header for another path is refused",
	      refused("modify", cat("diff --git a/other b/other\n", idx("a\n", "b\n", "100644"), NULL), NULL,
	              "names another path"));
	CHECK("---/+++ lines for another path are refused",
	      refused("modify", cat(GIT, idx("a\n", "b\n", "100644"), "--- a/other\n+++ b/other\n", "@@ -1 +1 @@\n-a\n+b\n",
	                            NULL), NULL, "unexpected header line: --- a/other"));
	CHECK("a Binary line for another path is refused",
	      refused("add", cat(GIT, "new file mode 100644\n", bidx, "Binary files /dev/null and b/x differ\n", NULL),
	              bin, "Binary line names another path"));
	CHECK("a mode change whose index line also has a mode is refused",
	      refused("modify", cat(GIT, "old mode 100644\nnew mode 100755\n", idx("a\n", "a\n", "100644"), NULL), NULL,
	              "no index line"));
	CHECK("a second mode line is refused",
	      refused("modify", cat(GIT, "old mode 100644\nnew mode 100755\nnew mode 100644\n", idx("a\n", "a\n", NULL),
	                            NULL), NULL, "no index line"));
	CHECK("a mode change to the same mode is refused",
	      refused("modify", cat(GIT, "old mode 100644\nnew mode 100644\n", idx("a\n", "a\n", NULL), NULL), NULL,
	              "mode change apply cannot write"));
	CHECK("a symlink add gives its target",
	      gives("add", cat(GIT, "new file mode 120000\n", idx(NULL, "t", NULL), "--- /dev/null\n+++ b/n.txt\n",
	                       "@@ -0,0 +1 @@\n+t\n\\ No newline at end of file\n", NULL), NULL, "", "t"));
	CHECK("a symlink add without a target is refused",
	      refused("add", cat(GIT, "new file mode 120000\n", idx(NULL, "", NULL), NULL), NULL,
	              "a symlink whose target is empty"));
	CHECK("a mode change to a symlink is refused",
	      refused("modify", cat(GIT, "old mode 100644\nnew mode 120000\n", idx("a\n", "a\n", NULL), NULL), NULL,
	              "mode change apply cannot write"));
	/* Shown as two lines, written as one. */
	CHECK("a line after a line without newline is refused",
	      refused("add", cat(GIT, "new file mode 100644\n", idx(NULL, "foobar\n", NULL), "--- /dev/null\n+++ b/n.txt\n",
	                         "@@ -0,0 +1,2 @@\n+foo\n\\ No newline at end of file\n+bar\n", NULL), NULL,
	              "line after the end of the file"));
	CHECK("a hunk after a line without newline is refused",
	      refused("modify", cat(GIT, idx("a\nb\n", "x", "100644"), NAMES,
	                            "@@ -1 +1 @@\n-a\n+x\n\\ No newline at end of file\n@@ -2 +1,0 @@\n-b\n", NULL), NULL,
	              "hunk after the end of the file"));
	CHECK("a changed no-newline marker is refused",
	      refused("modify", cat(GIT, idx("a\n", "b", "100644"), NAMES, "@@ -1 +1 @@\n-a\n+b\n\\ whatever\n", NULL), NULL,
	              "unexpected line in a hunk"));
	CHECK("text kept after a line without newline is refused",
	      result_refused("modify", cat(GIT, idx("a\nb\n", "xb\n", "100644"), NAMES,
	                                   "@@ -1 +1 @@\n-a\n+x\n\\ No newline at end of file\n", NULL), NULL, "a\nb\n", 4,
	                     -1, "after a line without newline"));

	/* What only the preimage can tell. */
	snprintf(bidx, sizeof(bidx), "index %s..%s 100644\n", oid("a\n", 2), oid("text\n", 5));
	CHECK("a binary modify of text to text is refused",
	      result_refused("modify", cat(GIT, bidx, "Binary files a/n.txt and b/n.txt differ\n", NULL), "dGV4dAo=", "a\n",
	                     2, -1, "binary patch of text content"));
	snprintf(bidx, sizeof(bidx), "index %s..%s 100644\n", oid("a\n\0z\n", 5), oid("b\n\0z\n", 5));
	CHECK("a text patch of a binary file is refused",
	      result_refused("modify", cat(GIT, bidx, NAMES, "@@ -1 +1 @@\n-a\n+b\n", NULL), NULL, "a\n\0z\n", 5, -1,
	                     "text patch of a binary file"));
}

static void bundles(void)
{
	char b[4096];
	const char *add = cat(GIT, "new file mode 100644\n", idx(NULL, "", NULL), NULL);
	json_t *d = json_string(add);
	char *esc = json_dumps(d, JSON_ENCODE_ANY);

	snprintf(b, sizeof(b), "{\"seq\":1,\"baseRef\":\"x\",\"patches\":[{\"path\":\"n.txt\",\"operation\":\"add\","
	         "\"diff\":%s}]}", esc);
	CHECK("a well-formed bundle reads", bundle_reads(b));
	snprintf(b, sizeof(b), "{\"seq\":1,\"baseRef\":\"x\",\"patches\":[{\"path\":\"n.txt\",\"operation\":\"add\","
	         "\"diff\":%s,\"mode\":\"100755\"}]}", esc);
	CHECK("an unknown patch field is refused", bundle_refused(b, "patch n.txt: unknown field \"mode\""));
	snprintf(b, sizeof(b), "{\"seq\":1,\"baseRef\":\"x\",\"renames\":[],\"patches\":[]}");
	CHECK("an unknown bundle field is refused", bundle_refused(b, "unknown field \"renames\""));
	snprintf(b, sizeof(b), "{\"seq\":1,\"baseRef\":\"x\",\"patches\":[{\"path\":\"n.txt\",\"operation\":\"add\","
	         "\"diff\":%s},{\"path\":\"n.txt\",\"operation\":\"add\",\"diff\":%s}]}", esc, esc);
	CHECK("two patches for one path are refused", bundle_refused(b, "two patches for n.txt"));
	snprintf(b, sizeof(b), "{\"seq\":1,\"baseRef\":\"x\",\"patches\":[{\"path\":\"n.txt\",\"operation\":\"modify\","
	         "\"diff\":%s}]}", esc);
	CHECK("a bundle's patch error names the patch and the disagreement",
	      bundle_refused(b, "patch n.txt: its operation (modify) and its diff header disagree"));
	free(esc);
	json_decref(d);
}

/* encode then decode gives the name back, for every byte value. */
static int round_trips(const char *name, const char *want_json)
{
	char *e = ws_path_encode(name), *d = e ? ws_path_decode(e) : NULL;
	int ok = e && d && !strcmp(d, name) && (!want_json || !strcmp(e, want_json));

	free(e);
	free(d);
	return ok;
}

static int decode_refused(const char *path)
{
	char *d = ws_path_decode(path);

	free(d);
	return d == NULL;
}

static void names(void)
{
	int all = 1;
	char n[4] = "a?b";
	char *g = ws_git_name("a/", "caf\xc3\xa9");

	for (int c = 1; c < 256; c++) {
		n[1] = (char)c;
		all &= round_trips(n, NULL);
	}
	CHECK("every byte of a name round-trips through the JSON form", all);
	CHECK("a plain UTF-8 name is itself", round_trips("src/caf\xc3\xa9.txt", "src/caf\xc3\xa9.txt"));
	CHECK("a newline is quoted as git does", round_trips("a\nb", "\"a\\nb\""));
	CHECK("a byte that is not UTF-8 is octal", round_trips("bad\xff", "\"bad\\377\""));
	CHECK("a name starting with a quote is quoted", round_trips("\"x", "\"\\\"x\""));
	CHECK("a quote inside a plain name stays", round_trips("a\"b\\c", "a\"b\\c"));
	CHECK("git's header quotes bytes >= 0x80", g && !strcmp(g, "\"a/caf\\303\\251\""));
	free(g);
	CHECK("a raw control byte is refused", decode_refused("a\tb"));
	CHECK("a plain name in quotes is refused", decode_refused("\"ab\""));
	CHECK("an octal escape of a short-escape byte is refused", decode_refused("\"a\\011\""));
	CHECK("a NUL escape is refused", decode_refused("\"a\\000\""));
	CHECK("an unterminated quote is refused", decode_refused("\"a\\n"));
	CHECK("a bare quote inside is refused", decode_refused("\"a\"\\n\""));
}

int main(void)
{
	cl_error err = {0};

	if (ws_dl_load(&err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 2;
	}
	hunks();
	disagreements();
	bundles();
	names();
	UNIT_MAIN_END;
}
