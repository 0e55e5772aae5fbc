/* The ustar writer: one 512-byte header per member (name split over the
 * prefix field when long, a GNU long-name record when that cannot hold
 * it), payloads padded to blocks, two zero blocks at the end. Only directories and regular files, opened without following. */
#define _GNU_SOURCE
#include "src/util/tar_write.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util/fdio.h"

#define WRITE_MAX_DEPTH 64

static char bad_path[PATH_MAX];

static int fail(int rc, const char *rel)
{
	snprintf(bad_path, sizeof(bad_path), "%s", rel);
	return rc;
}

/* name, or prefix "/" name, in ustar's fields (zeroed: no terminator is
 * needed, a field may be full). */
static int put_name(unsigned char *h, const char *path)
{
	size_t n = strlen(path), cut;

	if (n <= 100) {
		memcpy(h, path, n);   /* NOLINT(bugprone-not-null-terminated-result) */
		return 0;
	}
	/* The last '/' that leaves at most 155 bytes before it and 1..100 after. */
	for (cut = n - 1 < 155 ? n - 1 : 155; cut > 0; cut--)
		if (n - cut - 1 <= 100 && n - cut - 1 > 0 && path[cut] == '/')
			break;
	if (cut == 0)
		return -ENAMETOOLONG;
	memcpy(h + 345, path, cut);   /* NOLINT(bugprone-not-null-terminated-result) */
	memcpy(h, path + cut + 1, n - cut - 1);   /* NOLINT(bugprone-not-null-terminated-result) */
	return 0;
}

static int header(int out, const char *path, char type, unsigned mode, uint64_t size);

/* A name ustar cannot split (a part over 100 bytes): a GNU 'L' record
 * carries it whole (GNU and busybox tar read it), the header a cut copy. */
static int long_name(int out, unsigned char *h, const char *path)
{
	static const unsigned char zero[512];
	size_t n = strlen(path) + 1;
	int rc = header(out, "././@LongLink", 'L', 0644, n);

	rc = rc ?: cl_write_all(out, path, n);
	rc = rc ?: (n % 512 ? cl_write_all(out, zero, 512 - n % 512) : 0);
	memcpy(h, path, 100);   /* NOLINT(bugprone-not-null-terminated-result) */
	return rc;
}

static int header(int out, const char *path, char type, unsigned mode, uint64_t size)
{
	unsigned char h[512];
	unsigned sum = 0;
	int rc;

	memset(h, 0, sizeof(h));
	if (put_name(h, path) < 0 && (rc = long_name(out, h, path)) < 0)
		return rc;
	if (size > 077777777777ULL)
		return -EFBIG;
	snprintf((char *)h + 100, 8, "%07o", mode & 07777);
	snprintf((char *)h + 108, 8, "%07o", 0);
	snprintf((char *)h + 116, 8, "%07o", 0);
	snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
	snprintf((char *)h + 136, 12, "%011o", 0);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar\0" "00", 8);
	memset(h + 148, ' ', 8);
	for (size_t i = 0; i < sizeof(h); i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	return cl_write_all(out, h, sizeof(h));
}

static int file_body(int fd, int out, uint64_t size)
{
	static const unsigned char zero[512];
	char buf[65536];
	uint64_t done = 0;

	while (done < size) {
		size_t want = size - done < sizeof(buf) ? (size_t)(size - done) : sizeof(buf);
		ssize_t n = read(fd, buf, want);
		int rc;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)   /* shrank since the header: the archive would lie */
			return n < 0 ? -errno : -EIO;
		if ((rc = cl_write_all(out, buf, (size_t)n)) < 0)
			return rc;
		done += (uint64_t)n;
	}
	return size % 512 ? cl_write_all(out, zero, 512 - size % 512) : 0;
}

static int tree(int dfd, const char *rel, int out, int depth)
{
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if (depth > WRITE_MAX_DEPTH)
		return fail(-ELOOP, rel);
	if (!(d = fdopendir(dfd))) {
		close(dfd);
		return fail(-errno, rel);
	}
	while (rc == 0 && (errno = 0, de = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;
		int fd;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", rel, de->d_name) >= (int)sizeof(path))
			return closedir(d), fail(-ENAMETOOLONG, rel);
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0) {
			rc = fail(-errno, path);
			if (fd >= 0)
				close(fd);
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			/* No trailing '/': the type says directory, and the name
			 * keeps its 100 bytes. */
			rc = header(out, path, '5', st.st_mode, 0);
			rc = rc < 0 ? fail(rc, path) : tree(fd, path, out, depth + 1);
			continue;   /* tree() took fd */
		}
		if (!S_ISREG(st.st_mode))
			rc = fail(-EINVAL, path);
		else if ((rc = header(out, path, '0', st.st_mode, (uint64_t)st.st_size)) < 0 ||
		         (rc = file_body(fd, out, (uint64_t)st.st_size)) < 0)
			rc = fail(rc, path);
		close(fd);
	}
	if (rc == 0 && errno)
		rc = fail(-errno, rel);
	closedir(d);
	return rc;
}

int cl_tar_write_tree(int dir_fd, int out_fd, const char **bad)
{
	static const unsigned char end[1024];
	int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	bad_path[0] = '\0';
	*bad = bad_path;
	if (fd < 0)
		return -errno;
	rc = header(out_fd, "./", '5', 0755, 0);
	if (rc == 0)
		rc = tree(fd, ".", out_fd, 0);
	else
		close(fd);
	return rc ?: cl_write_all(out_fd, end, sizeof(end));
}
