/* Writes a directory tree as a POSIX ustar archive (what the remote side
 * of a codeplane run extracts into its /workspace). */
#ifndef CL_TAR_WRITE_H
#define CL_TAR_WRITE_H

#include <stdint.h>

/* The tree below dir_fd, as "./REL" members: directories and regular
 * files only (anything else is an error; names too long for ustar's
 * fields get a GNU long-name record),
 * never following a link; owner 0, the permission bits kept. 0 or
 * -errno; *bad names the offending path (static buffer) on error. */
int cl_tar_write_tree(int dir_fd, int out_fd, const char **bad);

#endif
