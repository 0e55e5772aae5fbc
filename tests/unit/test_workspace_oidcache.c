/* Unit tests for the blob id cache file (src/workspace/oidcache.c): what
 * close() writes is read back, records written by hand in the documented
 * shape are found, and a file with any damaged record is ignored whole
 * (its good records too), never trusted in part. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/workspace/oidcache.h"
#include "src/workspace/wsdl.h"
#include "tests/unit/unit.h"

#define OID_A "3e757656cf36eca53338e520d134963a44f793f8"
#define OID_B "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
/* The record of st_of(7, ...) for "a.txt" with OID_A, as close() writes it. */
#define REC_A "1 7 12 1000.5 1001.999999999 100644 " OID_A " a.txt"

static char state[] = "/tmp/cloidcache.XXXXXX", tree[] = "/tmp/cloidtree.XXXXXX";
static int tree_fd;
static char cache_file[600];

static struct stat st_of(unsigned long long ino, long long mtime)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_dev = 1;
	st.st_ino = ino;
	st.st_size = 12;
	st.st_mode = S_IFREG | 0644;
	st.st_mtim.tv_sec = mtime;
	st.st_mtim.tv_nsec = 5;
	st.st_ctim.tv_sec = 1001;
	st.st_ctim.tv_nsec = 999999999;
	return st;
}

/* The one file in <state>/oidcache (the tree's cache). */
static void find_cache_file(void)
{
	char dir[256];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/oidcache", state);
	if (!(d = opendir(dir)))
		abort();
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			snprintf(cache_file, sizeof(cache_file), "%s/%s", dir, de->d_name);
	closedir(d);
}

static void write_cache(const char *text, size_t len)
{
	int fd = open(cache_file, O_WRONLY | O_TRUNC | O_CLOEXEC);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len)
		abort();
	close(fd);
}

/* Opens the cache and says whether path with st has the id oid. */
static int has(const char *path, const struct stat *st, const char *oid)
{
	struct ws_oidcache c;
	const char *got;
	int ok;

	ws_oidcache_open(&c, tree_fd, NULL);
	got = ws_oidcache_get(&c, path, st);
	ok = got && strcmp(got, oid) == 0;
	ws_oidcache_close(&c);
	return ok;
}

static void written_by_close_is_read_back(void)
{
	struct stat a = st_of(7, 1000), old = st_of(8, -5), lead = st_of(9, 1000), fresh = st_of(10, 1000),
	            other = st_of(70, 1000);
	struct ws_oidcache c;

	fresh.st_ctim.tv_sec = time(NULL);
	ws_oidcache_open(&c, tree_fd, NULL);
	ws_oidcache_put(&c, "a.txt", &a, OID_A);
	ws_oidcache_put(&c, "d/before 1970", &old, OID_B);
	ws_oidcache_put(&c, " leading space", &lead, OID_B);
	ws_oidcache_put(&c, "fresh", &fresh, OID_A);
	ws_oidcache_close(&c);
	find_cache_file();
	CHECK("close writes a cache file", cache_file[0] != '\0');
	CHECK("a record is read back", has("a.txt", &a, OID_A));
	CHECK("a time before 1970 is read back", has("d/before 1970", &old, OID_B));
	CHECK("a path starting with a space keeps it", has(" leading space", &lead, OID_B) &&
	                                               !has("leading space", &lead, OID_B));
	CHECK("a file changed in the last 2 s is not cached", !has("fresh", &fresh, OID_A));
	CHECK("another inode does not match", !has("a.txt", &other, OID_A));
}

static void hand_written_records_are_found(void)
{
	static const char text[] = REC_A "\0" "1 8 12 -5.5 1001.999999999 100644 " OID_B " d/b";
	struct stat a = st_of(7, 1000), b = st_of(8, -5);

	write_cache(text, sizeof(text));
	CHECK("hand-written records: the first", has("a.txt", &a, OID_A));
	CHECK("hand-written records: the last", has("d/b", &b, OID_B));
}

/* REC_A followed by bad (and its NUL unless it is the unterminated case):
 * the good record must be dropped with the bad one. */
static void damaged(const char *name, const char *bad, int terminated)
{
	char text[512];
	struct stat a = st_of(7, 1000);
	int n = snprintf(text, sizeof(text), "%s%c%s", REC_A, '\0', bad);

	write_cache(text, (size_t)n + (terminated ? 1 : 0));
	CHECK(name, !has("a.txt", &a, OID_A));
}

static void damaged_files_are_ignored_whole(void)
{
	damaged("damaged: a record without its NUL", "1 8 12 1000.5 1001.9 100644 " OID_B " b", 0);
	damaged("damaged: upper-case hex", "1 8 12 1000.5 1001.9 100644 E69DE29BB2D1D6434B8B29AE775AD8C2E48C5391 b", 1);
	damaged("damaged: a short id", "1 8 12 1000.5 1001.9 100644 e69de29bb2d1d6434b8b29ae775ad8c2e48c539 b", 1);
	damaged("damaged: a number that overflows", "1 184467440737095516160 12 1000.5 1001.9 100644 " OID_B " b", 1);
	damaged("damaged: a signed size beyond LLONG_MAX", "1 8 9223372036854775808 1000.5 1001.9 100644 " OID_B " b", 1);
	damaged("damaged: no path", "1 8 12 1000.5 1001.9 100644 " OID_B, 1);
	damaged("damaged: no path after the space", "1 8 12 1000.5 1001.9 100644 " OID_B " ", 1);
	damaged("damaged: a plus sign", "+1 8 12 1000.5 1001.9 100644 " OID_B " b", 1);
	damaged("damaged: two spaces", "1  8 12 1000.5 1001.9 100644 " OID_B " b", 1);
	damaged("damaged: no nanoseconds", "1 8 12 1000 1001.9 100644 " OID_B " b", 1);
	damaged("damaged: an 8 in the octal mode", "1 8 12 1000.5 1001.9 100684 " OID_B " b", 1);
	damaged("damaged: an empty record", "", 1);
}

int main(void)
{
	cl_error err = {0};
	char rm[256];

	if (!mkdtemp(state) || !mkdtemp(tree) || setenv("CLOISTER_STATE_DIR", state, 1) < 0)
		abort();
	if ((tree_fd = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		abort();
	CHECK("libgit2 and libcrypto load", ws_dl_load(&err) == 0);
	if (err.msg[0] == '\0') {
		written_by_close_is_read_back();
		hand_written_records_are_found();
		damaged_files_are_ignored_whole();
	}
	close(tree_fd);
	snprintf(rm, sizeof(rm), "rm -rf '%s' '%s'", state, tree);
	if (system(rm) != 0)
		return 1;
	UNIT_MAIN_END;
}
