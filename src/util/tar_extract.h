/* Writes the members of a hostile tar stream (src/util/tar_read.h)
 * beneath a directory fd: regular files and directories only, no name
 * that is absolute or climbs, no link, a byte and member budget. */
#ifndef CL_TAR_EXTRACT_H
#define CL_TAR_EXTRACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/util/tar_read.h"

#define CL_TAR_MAX_MEMBERS 10000

struct cl_tar_dest {
	int root_fd;           /* members "." and "./REL" land at REL beneath it */
	int file_dir_fd;       /* the one member named file_name (no "./") goes here */
	const char *file_name;
	uint64_t max_bytes;    /* of all files' payloads */
	uint64_t bytes;
	size_t members;
	bool file_seen;
	int out_fd;            /* the file being written, or -1 */
	char why[320];         /* why a member was refused */
};

/* The callbacks; ctx is a struct cl_tar_dest (out_fd -1 to start). Errors:
 * -EXDEV escapes (absolute name, "..", symlink, hard link, a link on the
 * way), -EFBIG over max_bytes or CL_TAR_MAX_MEMBERS, -EINVAL anything else
 * refused (device node, fifo, malformed name, a duplicate), else -errno. */
extern const struct cl_tar_ops cl_tar_extract_ops;
/* A result member's name ("./a/b", "." or "./") -> "a/b" or "" (pure):
 * 0, or -EXDEV / -EINVAL as above. */
int cl_tar_result_rel(const char *name, char *rel, size_t len);
/* Closes a file left open by an error. */
void cl_tar_dest_close(struct cl_tar_dest *d);

#endif
