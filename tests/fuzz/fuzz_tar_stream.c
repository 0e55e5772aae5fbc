/* libFuzzer target: the ustar reader codeplane runs on a remote's result
 * stream (cl_tar_feed / cl_tar_finish), with callbacks that check the
 * member names as extraction does (cl_tar_result_rel) and count payload
 * bytes against what each header announced. The input's first byte picks
 * where it is cut in two, so chunk boundaries are fuzzed too. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/util/tar_extract.h"
#include "src/util/tar_read.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

struct count {
	uint64_t want, got;
	int open;
};

static int f_begin(void *ctx, const struct cl_tar_member *m)
{
	struct count *c = ctx;
	char rel[CL_TAR_NAME_MAX];

	if (c->open || strnlen(m->name, sizeof(m->name)) >= sizeof(m->name))
		abort();   /* a member began inside another, or the name is unterminated */
	(void)cl_tar_result_rel(m->name, rel, sizeof(rel));
	c->want = m->size;
	c->got = 0;
	c->open = 1;
	return 0;
}

static int f_data(void *ctx, const void *buf, size_t len)
{
	struct count *c = ctx;

	(void)buf;
	c->got += len;
	if (!c->open || c->got > c->want)
		abort();   /* more payload than the header announced */
	return 0;
}

static int f_end(void *ctx)
{
	struct count *c = ctx;

	if (!c->open || c->got != c->want)
		abort();
	c->open = 0;
	return 0;
}

static const struct cl_tar_ops ops = {f_begin, f_data, f_end};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct count c = {0};
	struct cl_tar t;
	size_t cut;
	int rc;

	if (len < 1)
		return 0;
	/* In [1, len): the first piece is data[1..cut), the second the rest. */
	cut = 1 + (len > 1 ? (size_t)data[0] * 37 % (len - 1) : 0);
	cl_tar_init(&t, &ops, &c);
	rc = cl_tar_feed(&t, data + 1, cut - 1);
	if (rc == 0)
		rc = cl_tar_feed(&t, data + cut, len - cut);
	if (rc == 0)
		(void)cl_tar_finish(&t);
	cl_tar_free(&t);
	return 0;
}
