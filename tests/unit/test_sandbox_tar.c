/* Unit tests for the tar pieces of codeplane's spec runs: result member
 * names, the bounded reader (refusals, pieces of any size, long names)
 * and a writer -> reader -> extract round trip in a temp dir. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util/tar_extract.h"
#include "src/util/tar_read.h"
#include "src/util/tar_write.h"
#include "tests/unit/unit.h"

static int rel_rc(const char *name, const char *want)
{
	char rel[256];
	int rc = cl_tar_result_rel(name, rel, sizeof(rel));

	return rc == 0 && want && strcmp(rel, want) != 0 ? -999 : rc;
}

/* A reader whose callbacks only record what they saw. */
struct seen {
	char names[4096];
	uint64_t bytes;
};

static int s_begin(void *ctx, const struct cl_tar_member *m)
{
	struct seen *s = ctx;
	size_t n = strlen(s->names);

	snprintf(s->names + n, sizeof(s->names) - n, "%s%c:%s", n ? " " : "", m->type, m->name);
	return 0;
}

static int s_data(void *ctx, const void *buf, size_t len)
{
	(void)buf;
	((struct seen *)ctx)->bytes += len;
	return 0;
}

static int s_end(void *ctx)
{
	(void)ctx;
	return 0;
}

static const struct cl_tar_ops seen_ops = {s_begin, s_data, s_end};

/* One ustar header: name, type, size; checksum right unless bad. */
static void hdr(unsigned char *h, const char *name, char type, const char *size_field, int bad)
{
	unsigned sum = 0;

	memset(h, 0, 512);
	memcpy(h, name, strlen(name));
	memcpy(h + 100, "0000644", 7);
	memcpy(h + 124, size_field, strlen(size_field));
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar\0" "00", 8);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum + (unsigned)bad);
}

/* Feeds buf in pieces of step bytes; returns the first error or finish's. */
static int feed(struct cl_tar *t, const unsigned char *buf, size_t len, size_t step)
{
	for (size_t i = 0; i < len; i += step) {
		int rc = cl_tar_feed(t, buf + i, len - i < step ? len - i : step);
		if (rc < 0)
			return rc;
	}
	return cl_tar_finish(t);
}

static int read_archive(const unsigned char *buf, size_t len, size_t step, struct seen *s, char *why)
{
	struct cl_tar t;
	int rc;

	memset(s, 0, sizeof(*s));
	cl_tar_init(&t, &seen_ops, s);
	rc = feed(&t, buf, len, step);
	if (why)
		snprintf(why, 160, "%s", t.why);
	cl_tar_free(&t);
	return rc;
}

static void reader_tests(void)
{
	static unsigned char a[512 * 12];
	struct seen s;
	char why[160];

	/* file "a" (3 bytes), end marker */
	memset(a, 0, sizeof(a));
	hdr(a, "./a", '0', "00000000003", 0);
	memcpy(a + 512, "xyz", 3);
	CHECK("a file and the end marker", read_archive(a, 512 * 4, 512 * 4, &s, NULL) == 0 &&
	      strcmp(s.names, "0:./a") == 0 && s.bytes == 3);
	CHECK("fed one byte at a time", read_archive(a, 512 * 4, 1, &s, NULL) == 0 && s.bytes == 3);
	CHECK("trailing record padding ignored", read_archive(a, sizeof(a), 700, &s, NULL) == 0);
	CHECK("no end marker is refused", read_archive(a, 512 * 3, 512, &s, why) == -EPROTO &&
	      strstr(why, "ends early"));
	hdr(a, "./a", '0', "00000000003", 1);
	CHECK("bad checksum refused", read_archive(a, 512 * 4, 512, &s, why) == -EPROTO &&
	      strstr(why, "checksum"));
	hdr(a, "./a", '0', "\x80\0\0\0\0\0\0\0\0\0\0\1", 0);
	CHECK("base-256 size refused", read_archive(a, 512 * 4, 512, &s, why) == -EPROTO);
	hdr(a, "./a", 'V', "0", 0);
	CHECK("unknown type refused", read_archive(a, 512 * 4, 512, &s, why) == -EPROTO);
	hdr(a, "./l", '2', "00000000003", 0);
	CHECK("a link with a payload refused", read_archive(a, 512 * 4, 512, &s, why) == -EPROTO);
	/* zero block, then a header: not an end */
	memset(a, 0, sizeof(a));
	hdr(a + 512, "./a", '5', "0", 0);
	CHECK("lone zero block refused", read_archive(a, 512 * 4, 512, &s, why) == -EPROTO);
	/* GNU long name, then the member it names */
	memset(a, 0, sizeof(a));
	hdr(a, "././@LongLink", 'L', "00000000014", 0);
	memcpy(a + 512, "./long/name", 11);
	hdr(a + 1024, "./trunc", '0', "0", 0);
	CHECK("GNU long name", read_archive(a, 512 * 5, 100, &s, NULL) == 0 && strcmp(s.names, "0:./long/name") == 0);
	/* pax path record; a pax size record is refused */
	memset(a, 0, sizeof(a));
	hdr(a, "./PaxHeader", 'x', "00000000021", 0);
	memcpy(a + 512, "17 path=./p/q/rr\n", 17);
	hdr(a + 1024, "./short", '5', "0", 0);
	CHECK("pax path", read_archive(a, 512 * 5, 512, &s, NULL) == 0 && strcmp(s.names, "5:./p/q/rr") == 0);
	memcpy(a + 512, "17 size=99999999\n", 17);
	CHECK("pax size refused", read_archive(a, 512 * 5, 512, &s, why) == -EPROTO && strstr(why, "size"));
	memcpy(a + 512, "99 path=./p/q/rr\n", 17);
	CHECK("pax record length past its end refused", read_archive(a, 512 * 5, 512, &s, why) == -EPROTO);
}

static void name_tests(void)
{
	CHECK("'.' is the result dir", rel_rc(".", "") == 0 && rel_rc("./", "") == 0);
	CHECK("./a/b", rel_rc("./a/b", "a/b") == 0);
	CHECK("directory slash", rel_rc("./a/b/", "a/b") == 0);
	CHECK("absolute", rel_rc("/etc/passwd", NULL) == -EXDEV);
	CHECK("..", rel_rc("./../x", NULL) == -EXDEV && rel_rc("./a/../../x", NULL) == -EXDEV &&
	      rel_rc("./a/..", NULL) == -EXDEV);
	CHECK("no ./ prefix", rel_rc("a", NULL) == -EINVAL && rel_rc("", NULL) == -EINVAL);
	CHECK("empty or . component", rel_rc("./a//b", NULL) == -EINVAL && rel_rc("./a/./b", NULL) == -EINVAL);
	CHECK("'..x' is a name", rel_rc("./..x", "..x") == 0);
}

/* writer -> reader -> extractor in a temp dir, with a hostile member
 * appended by hand (a symlink): refused, nothing made for it. */
static void round_trip(void)
{
	char dir[] = "/tmp/cl-tar-unit.XXXXXX", path[256], buf[64], longp[512];
	int src, dst, tmpd, mfd = memfd_create("t", 0), rc;
	const char *bad;
	struct cl_tar t;
	struct cl_tar_dest d;
	static unsigned char img[1 << 16];
	ssize_t n;
	struct stat st;

	if (!mkdtemp(dir) || mfd < 0) {
		CHECK("temp dir", 0);
		return;
	}
	snprintf(path, sizeof(path), "%s/src/deep/er", dir);
	snprintf(buf, sizeof(buf), "%s/src", dir);
	mkdir(buf, 0755);
	snprintf(buf, sizeof(buf), "%s/src/deep", dir);
	mkdir(buf, 0755);
	mkdir(path, 0755);
	snprintf(buf, sizeof(buf), "%s/src/deep/er/f", dir);
	FILE *f = fopen(buf, "w");
	fputs("payload", f);
	fclose(f);
	/* Names over ustar's 100 bytes go through its prefix field. */
	snprintf(longp, sizeof(longp), "%s/src/deep/%0120d", dir, 0);
	mkdir(longp, 0755);
	snprintf(longp + strlen(longp), sizeof(longp) - strlen(longp), "/%090d", 1);
	f = fopen(longp, "w");
	fputs("long", f);
	fclose(f);
	snprintf(buf, sizeof(buf), "%s/dst", dir);
	mkdir(buf, 0755);
	snprintf(buf, sizeof(buf), "%s/tmp", dir);
	mkdir(buf, 0755);
	snprintf(buf, sizeof(buf), "%s/src", dir);
	src = open(buf, O_RDONLY | O_DIRECTORY);
	snprintf(buf, sizeof(buf), "%s/dst", dir);
	dst = open(buf, O_RDONLY | O_DIRECTORY);
	snprintf(buf, sizeof(buf), "%s/tmp", dir);
	tmpd = open(buf, O_RDONLY | O_DIRECTORY);
	CHECK("write tree", cl_tar_write_tree(src, mfd, &bad) == 0);
	n = pread(mfd, img, sizeof(img), 0);
	memset(&d, 0, sizeof(d));
	d.root_fd = dst;
	d.file_dir_fd = tmpd;
	d.file_name = "sandbox-result.json";
	d.max_bytes = 1000;
	d.out_fd = -1;
	cl_tar_init(&t, &cl_tar_extract_ops, &d);
	rc = n > 0 ? feed(&t, img, (size_t)n, 333) : -1;
	cl_tar_free(&t);
	CHECK("extract what was written", rc == 0);
	snprintf(buf, sizeof(buf), "%s/dst/deep/er/f", dir);
	CHECK("the file arrived", stat(buf, &st) == 0 && st.st_size == 7);
	snprintf(longp, sizeof(longp), "%s/dst/deep/%0120d/%090d", dir, 0, 1);
	CHECK("a long name arrived", stat(longp, &st) == 0 && st.st_size == 4);
	/* the same archive again: a duplicate file is refused */
	memset(&d.why, 0, sizeof(d.why));
	d.bytes = 0;
	cl_tar_init(&t, &cl_tar_extract_ops, &d);
	rc = feed(&t, img, (size_t)n, 512);
	cl_tar_dest_close(&d);
	cl_tar_free(&t);
	CHECK("a second copy of a file is refused", rc == -EINVAL && strstr(d.why, "twice"));
	/* budget */
	snprintf(buf, sizeof(buf), "rm -rf %s/dst/deep", dir);
	CHECK("reset", system(buf) == 0);
	d.bytes = 0;
	d.max_bytes = 3;
	cl_tar_init(&t, &cl_tar_extract_ops, &d);
	rc = feed(&t, img, (size_t)n, 512);
	cl_tar_dest_close(&d);
	cl_tar_free(&t);
	CHECK("over the byte budget is refused", rc == -EFBIG);
	snprintf(buf, sizeof(buf), "rm -rf %s", dir);
	CHECK("cleanup", system(buf) == 0);
	close(src);
	close(dst);
	close(tmpd);
	close(mfd);
}

int main(void)
{
	name_tests();
	reader_tests();
	round_trip();
	UNIT_MAIN_END;
}
