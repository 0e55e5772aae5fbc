/* A bounded, streaming reader of ustar archives (plus GNU long names and
 * pax path records) for tar streams a hostile remote sends: it checks
 * each header and hands members to callbacks, never the file system. */
#ifndef SB_TAR_READ_H
#define SB_TAR_READ_H

#include <stddef.h>
#include <stdint.h>

#define SB_TAR_NAME_MAX 4096      /* a longer member name is refused */
#define SB_TAR_PAX_MAX (64 * 1024) /* a larger pax header is refused */

struct sb_tar_member {
	char name[SB_TAR_NAME_MAX]; /* as in the archive, NUL-terminated */
	char type;                  /* '0' file, '5' dir, '1' hard link, '2' symlink, '3'/'4'/'6' */
	uint64_t size;              /* payload bytes (0 but for files) */
	unsigned mode;              /* permission bits */
};

/* Return 0 to go on, or a negative errno (the callback says why in its own
 * context); data gets a file's payload in pieces. */
struct sb_tar_ops {
	int (*begin)(void *ctx, const struct sb_tar_member *m);
	int (*data)(void *ctx, const void *buf, size_t len);
	int (*end)(void *ctx);
};

struct sb_tar {
	const struct sb_tar_ops *ops;
	void *ctx;
	int state;                /* internal */
	unsigned char blk[512];
	size_t blk_len;
	uint64_t left, pad;       /* of the current payload */
	char *meta;               /* 'L' / 'x' payload being read */
	size_t meta_len, meta_cap;
	char meta_type;
	char next_name[SB_TAR_NAME_MAX]; /* from 'L' or 'x', for the next header */
	int zero_blocks;
	struct sb_tar_member m;
	char why[160];            /* the reader's own refusal, "" if a callback's */
};

void sb_tar_init(struct sb_tar *t, const struct sb_tar_ops *ops, void *ctx);
/* Feeds the next bytes. 0, or negative: -EPROTO (malformed; why says how)
 * or a callback's error. After an error the reader must not be fed. */
int sb_tar_feed(struct sb_tar *t, const void *buf, size_t len);
/* At end of stream: 0 if it ended on the end-of-archive marker, else -EPROTO. */
int sb_tar_finish(struct sb_tar *t);
/* 1 once the end-of-archive marker was read (the rest is padding). */
int sb_tar_done(const struct sb_tar *t);
void sb_tar_free(struct sb_tar *t);

#endif
