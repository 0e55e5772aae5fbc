/* A bounded, streaming reader of ustar archives (plus GNU long names and
 * pax path records) for tar streams a hostile remote sends: it checks
 * each header and hands members to callbacks, never the file system. */
#ifndef CL_TAR_READ_H
#define CL_TAR_READ_H

#include <stddef.h>
#include <stdint.h>

#define CL_TAR_NAME_MAX 4096      /* a longer member name is refused */
#define CL_TAR_PAX_MAX (64 * 1024) /* a larger pax header is refused */

struct cl_tar_member {
	char name[CL_TAR_NAME_MAX]; /* as in the archive, NUL-terminated */
	char type;                  /* '0' file, '5' dir, '1' hard link, '2' symlink, '3'/'4'/'6' */
	uint64_t size;              /* payload bytes (0 but for files) */
	unsigned mode;              /* permission bits */
};

/* Return 0 to go on, or a negative errno (the callback says why in its own
 * context); data gets a file's payload in pieces. */
struct cl_tar_ops {
	int (*begin)(void *ctx, const struct cl_tar_member *m);
	int (*data)(void *ctx, const void *buf, size_t len);
	int (*end)(void *ctx);
};

struct cl_tar {
	const struct cl_tar_ops *ops;
	void *ctx;
	int state;                /* internal */
	unsigned char blk[512];
	size_t blk_len;
	uint64_t left, pad;       /* of the current payload */
	char *meta;               /* 'L' / 'x' payload being read */
	size_t meta_len, meta_cap;
	char meta_type;
	char next_name[CL_TAR_NAME_MAX]; /* from 'L' or 'x', for the next header */
	int zero_blocks;
	struct cl_tar_member m;
	char why[160];            /* the reader's own refusal, "" if a callback's */
};

void cl_tar_init(struct cl_tar *t, const struct cl_tar_ops *ops, void *ctx);
/* Feeds the next bytes. 0, or negative: -EPROTO (malformed; why says how)
 * or a callback's error. After an error the reader must not be fed. */
int cl_tar_feed(struct cl_tar *t, const void *buf, size_t len);
/* At end of stream: 0 if it ended on the end-of-archive marker, else -EPROTO. */
int cl_tar_finish(struct cl_tar *t);
/* 1 once the end-of-archive marker was read (the rest is padding). */
int cl_tar_done(const struct cl_tar *t);
void cl_tar_free(struct cl_tar *t);

#endif
