/* Unit tests for reading a diff bundle's patches back (src/workspace/hunk.c):
 * the header reader and the exact hunk applier, on diffs that end anywhere.
 * Every diff is placed so that its NUL is the last byte of a page followed
 * by an inaccessible one, so a read past the string faults here even
 * without ASan (the fuzzer found such a read in CI, where jansson's string
 * buffer happened to end at the NUL). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "src/workspace/hunk.h"
#include "tests/unit/unit.h"

#define OID0 "0000000000000000000000000000000000000000"
#define OID1 "3e757656cf36eca53338e520d134963a44f793f8"
#define HEAD "diff --git a/n.txt b/n.txt\nindex " OID0 ".." OID1 " 100644\n--- a/n.txt\n+++ b/n.txt\n"

static char *page;
static size_t page_size;

/* s copied so that its NUL is the last readable byte. */
static const char *at_edge(const char *s)
{
	size_t n = strlen(s) + 1;

	if (n > page_size)
		abort();
	memcpy(page + page_size - n, s, n);
	return page + page_size - n;
}

/* Applies diff (its header parsed first) to old; the result (out_len
 * bytes, not NUL-terminated) or NULL. */
static char *apply(const char *diff, const char *old, size_t *out_len, char *why, size_t why_len)
{
	struct ws_header h;
	char *out = NULL;

	if (ws_header_parse(at_edge(diff), "n.txt", &h, why, why_len) < 0 || !h.hunks)
		return NULL;
	if (ws_hunks_apply(h.hunks, old, strlen(old), &out, out_len, why, why_len) < 0)
		return NULL;
	return out;
}

static int applies_to(const char *diff, const char *old, const char *want)
{
	char why[256];
	size_t n = 0;
	char *out = apply(diff, old, &n, why, sizeof(why));
	int ok = out && n == strlen(want) && !memcmp(out, want, n);

	free(out);
	return ok;
}

static int refused_with(const char *diff, const char *old, const char *want_why)
{
	char why[256] = "";
	size_t n;
	char *out = apply(diff, old, &n, why, sizeof(why));

	free(out);
	return !out && strstr(why, want_why) != NULL;
}

int main(void)
{
	struct ws_header h;
	char why[256];

	page_size = (size_t)sysconf(_SC_PAGESIZE);
	page = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED || mprotect(page + page_size, page_size, PROT_NONE) < 0)
		return 2;

	CHECK("a modify applies", applies_to(HEAD "@@ -1,2 +1,2 @@\n a\n-b\n+B\n", "a\nb\n", "a\nB\n"));
	CHECK("a hunk in the middle keeps the lines around it",
	      applies_to(HEAD "@@ -2 +2 @@\n-b\n+B\n", "a\nb\nc\n", "a\nB\nc\n"));
	CHECK("an add to an empty file", applies_to(HEAD "@@ -0,0 +1 @@\n+new\n", "", "new\n"));
	CHECK("no newline at the end of the new side",
	      applies_to(HEAD "@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n", "a\n", "b"));
	CHECK("the diff's last line without its newline",
	      applies_to(HEAD "@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file", "a\n", "b"));
	/* Only the "\ No newline" marker drops a newline; a cut diff's
	 * result is then checked against the blob id by the caller. */
	CHECK("a last body line without its newline is still a line",
	      applies_to(HEAD "@@ -1 +1 @@\n-a\n+b", "a\n", "b\n"));

	/* The regression: a diff that ends right after the hunk header. */
	CHECK("a diff ending at its hunk header is refused, not read past",
	      refused_with(HEAD "@@ -0,0 +1 @@", "", "has 0/0 lines, its header says 0/1"));
	CHECK("a diff ending at an empty-range hunk header applies nothing",
	      applies_to(HEAD "@@ -0,0 +0,0 @@", "", ""));
	CHECK("a second hunk header at the very end is refused",
	      refused_with(HEAD "@@ -1 +1 @@\n-a\n+b\n@@ -2 +2 @@", "a\nc\n", "has 0/0 lines"));

	CHECK("a context line that does not match is refused",
	      refused_with(HEAD "@@ -1,2 +1,2 @@\n x\n-b\n+B\n", "a\nb\n", "does not match the file at line 1"));
	CHECK("a hunk past the end is refused", refused_with(HEAD "@@ -5 +5 @@\n-a\n+b\n", "a\n", "past the end"));
	CHECK("hunks out of order are refused",
	      refused_with(HEAD "@@ -2 +2 @@\n-b\n+B\n@@ -1 +1 @@\n-a\n+A\n", "a\nb\n", "out of order"));
	CHECK("a line count that disagrees with the header is refused",
	      refused_with(HEAD "@@ -1,2 +1,2 @@\n-a\n+b\n", "a\nb\n", "has 1/1 lines, its header says 2/2"));
	CHECK("a bad hunk header is refused", refused_with(HEAD "@@ -x +1 @@\n+a\n", "", "bad hunk header"));

	/* Headers that end anywhere. */
	CHECK("a header ending after its index line has no hunks",
	      ws_header_parse(at_edge("diff --git a/n.txt b/n.txt\nindex " OID0 ".." OID1), "n.txt", &h, why,
	                      sizeof(why)) == 0 && !h.hunks);
	CHECK("a header ending after the index line's space is refused",
	      ws_header_parse(at_edge("diff --git a/n.txt b/n.txt\nindex " OID0 ".." OID1 " "), "n.txt", &h,
	                      why, sizeof(why)) < 0);
	CHECK("a header ending inside its first line is refused",
	      ws_header_parse(at_edge("diff --git a/n.txt b/n"), "n.txt", &h, why, sizeof(why)) < 0 &&
	      strstr(why, "does not start with"));
	CHECK("a header without an index line is refused",
	      ws_header_parse(at_edge("diff --git a/n.txt b/n.txt\n--- a/n.txt\n"), "n.txt", &h, why,
	                      sizeof(why)) < 0 && strstr(why, "no index line"));
	CHECK("a short blob id is refused",
	      ws_header_parse(at_edge("diff --git a/n.txt b/n.txt\nindex 0000..1111\n"), "n.txt", &h, why,
	                      sizeof(why)) < 0 && strstr(why, "unexpected header line"));
	UNIT_MAIN_END;
}
