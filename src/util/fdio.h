/* Whole-buffer fd I/O used across cloister: write everything, or read
 * until EOF with a size cap. Both retry on EINTR and keep errno. */
#ifndef CL_FDIO_H
#define CL_FDIO_H

#include <stddef.h>

/* 0 or -errno. */
int cl_write_all(int fd, const void *buf, size_t len);
/* Closes every fd from 3 up except the n in keep (negative ones ignored;
 * keep is sorted in place). 0 or -errno of the failed close_range. */
int cl_close_fds_except(int *keep, size_t n);
/* Writes data to an existing file (procfs, sysfs, cgroupfs knobs) in one
 * write(); a short write is -EIO. dirfd may be AT_FDCWD. 0 or -errno. */
int cl_write_file_at(int dirfd, const char *path, const char *data);
/* Reads fd to EOF into a new NUL-terminated buffer (*out, *len excludes the
 * NUL). More than max bytes: -EFBIG. Otherwise 0 or -errno. */
int cl_read_all(int fd, size_t max, char **out, size_t *len);

#endif
