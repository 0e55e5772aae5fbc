/* The bundle file: serialized once, written to a temporary name next to
 * the target, synced, renamed into place; on any failure removed. */
#define _GNU_SOURCE
#include "src/workspace/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/util/fdio.h"

int ws_bundle_write(const json_t *bundle, const char *path, cl_error *err)
{
	char *text = json_dumps(bundle, JSON_COMPACT);
	char tmp[4096];
	int fd, rc;

	if (!text)
		return cl_fail(err, ENOMEM, "serializing the diff bundle");
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", path) >= sizeof(tmp)) {
		free(text);
		return cl_fail(err, ENAMETOOLONG, "--diff-out %s", path);
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		free(text);
		return cl_fail_errno(err, "--diff-out %s: creating a temporary file next to it", path);
	}
	rc = cl_write_all(fd, text, strlen(text));
	if (rc == 0)
		rc = cl_write_all(fd, "\n", 1);
	if (rc == 0 && fchmod(fd, 0644) < 0)
		rc = -errno;
	if (rc == 0 && fsync(fd) < 0)
		rc = -errno;
	close(fd);
	free(text);
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0) {
		unlink(tmp);
		return cl_fail(err, -rc, "--diff-out %s: writing the diff bundle", path);
	}
	return 0;
}
