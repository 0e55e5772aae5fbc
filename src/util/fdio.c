/* Whole-buffer reads and writes on file descriptors (pipes, sockets, files),
 * shared by the status writer, the bwrap fd protocol and the profile loader. */
#include "src/util/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int cl_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int cl_read_all(int fd, size_t max, char **out, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1);

	while (buf) {
		ssize_t r;
		if (n == cap) {
			char *nb = cap > max ? NULL : realloc(buf, cap * 2 + 1);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(buf);
			return -e;
		}
		if (r == 0) {
			if (n > max) {
				free(buf);
				return -EFBIG;
			}
			buf[n] = '\0';
			*out = buf;
			*len = n;
			return 0;
		}
		n += (size_t)r;
	}
	free(buf);
	return n > max ? -EFBIG : -ENOMEM;
}

int cl_write_file_at(int dirfd, const char *path, const char *data)
{
	int fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(data);
	ssize_t n;
	int rc;

	if (fd < 0)
		return -errno;
	n = write(fd, data, len);
	rc = n < 0 ? -errno : (size_t)n == len ? 0 : -EIO;
	close(fd);
	return rc;
}

static int cmp_fd(const void *a, const void *b)
{
	return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

int cl_close_fds_except(int *keep, size_t n)
{
	unsigned from = 3;

	/* Ascending keepers; each closes the gap below it. */
	qsort(keep, n, sizeof(int), cmp_fd);
	for (size_t k = 0; k < n; k++) {
		if (keep[k] < (int)from)
			continue;
		if ((unsigned)keep[k] > from &&
		    syscall(SYS_close_range, from, (unsigned)keep[k] - 1, 0U) < 0)
			return -errno;
		from = (unsigned)keep[k] + 1;
	}
	return syscall(SYS_close_range, from, ~0U, 0U) < 0 ? -errno : 0;
}
