/* Compiled-BPF cache: one file per key, a checksummed header, written to a
 * temp file and renamed so readers never see half an entry. */
#define _GNU_SOURCE
#include "seccomp/cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "seccomp/sha256.h"

#define MAGIC "CLSCBPF\0"
#define FORMAT 1U
#define MAX_INSNS 4096U
#define MAX_WARN 65536U

/* magic, format, n_insns, flags, warn_len, key, checksum; then the program
 * and the warning text. The checksum covers everything but itself. */
struct header {
	char magic[8];
	uint32_t format, n_insns, flags, warn_len;
	uint8_t key[32];
	uint8_t sum[32];
};

static int usable_dir(const char *path)
{
	struct stat st;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -1;
	/* Someone else's or a shared writable dir could feed us a filter. */
	if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022))
		return -1;
	return 0;
}

const char *sc_cache_dir(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char parent[4096];

	if (xdg && xdg[0] == '/') {
		snprintf(parent, sizeof(parent), "%s", xdg);
	} else if (geteuid() == 0) {
		snprintf(parent, sizeof(parent), "/var/cache");
	} else if (home && home[0] == '/') {
		snprintf(parent, sizeof(parent), "%s/.cache", home);
	} else {
		return NULL;
	}
	mkdir(parent, 0700);
	if ((size_t)snprintf(buf, len, "%s/cloister", parent) >= len || usable_dir(buf) < 0)
		return NULL;
	return buf;
}

static int entry_path(const uint8_t key[32], char *buf, size_t len)
{
	char dir[4096], hex[65];

	if (!sc_cache_dir(dir, sizeof(dir)))
		return -1;
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	if ((size_t)snprintf(buf, len, "%s/%s.bpf", dir, hex) >= len)
		return -1;
	return 0;
}

static void checksum(const struct header *h, const void *payload, size_t len, uint8_t out[32])
{
	struct sc_sha256 s;

	sc_sha256_init(&s);
	sc_sha256_update(&s, h, offsetof(struct header, sum));
	sc_sha256_update(&s, payload, len);
	sc_sha256_final(&s, out);
}

static int validate(const uint8_t *data, size_t size, const uint8_t key[32], struct sc_cached *out)
{
	struct header h;
	uint8_t sum[32];
	size_t prog;

	if (size < sizeof(h))
		return -EBADMSG;
	memcpy(&h, data, sizeof(h));
	if (memcmp(h.magic, MAGIC, 8) || h.format != FORMAT || h.n_insns == 0 ||
	    h.n_insns > MAX_INSNS || h.warn_len > MAX_WARN || memcmp(h.key, key, 32))
		return -EBADMSG;
	prog = (size_t)h.n_insns * sizeof(struct sock_filter);
	if (size != sizeof(h) + prog + h.warn_len)
		return -EBADMSG;
	checksum(&h, data + sizeof(h), prog + h.warn_len, sum);
	if (memcmp(sum, h.sum, 32))
		return -EBADMSG;
	out->filter = malloc(prog);
	out->warning = h.warn_len ? strndup((const char *)data + sizeof(h) + prog, h.warn_len) : NULL;
	if (!out->filter || (h.warn_len && !out->warning)) {
		free(out->filter);
		free(out->warning);
		return -ENOMEM;
	}
	memcpy(out->filter, data + sizeof(h), prog);
	out->len = h.n_insns;
	out->flags = h.flags;
	return 0;
}

int sc_cache_get(const uint8_t key[32], struct sc_cached *out)
{
	char path[4200];
	struct stat st;
	uint8_t *data;
	ssize_t n;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	if (entry_path(key, path, sizeof(path)) < 0)
		return -ENOENT;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -EBADMSG;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_size > (off_t)(sizeof(struct header) + MAX_INSNS * 8 + MAX_WARN)) {
		close(fd);
		return -EBADMSG;
	}
	data = malloc((size_t)st.st_size + 1);
	if (!data) {
		close(fd);
		return -ENOENT;
	}
	n = pread(fd, data, (size_t)st.st_size, 0);
	close(fd);
	rc = n == st.st_size ? validate(data, (size_t)n, key, out) : -EBADMSG;
	free(data);
	return rc == -ENOMEM ? -ENOENT : rc;
}

void sc_cache_put(const uint8_t key[32], const struct sc_cached *in)
{
	char path[4200], tmp[4300];
	struct header h = {0};
	size_t prog = in->len * sizeof(struct sock_filter);
	size_t wl = in->warning ? strlen(in->warning) : 0;
	uint8_t *payload;
	int fd;
	bool ok;

	if (in->len == 0 || in->len > MAX_INSNS || wl > MAX_WARN ||
	    entry_path(key, path, sizeof(path)) < 0)
		return;
	memcpy(h.magic, MAGIC, 8);
	h.format = FORMAT;
	h.n_insns = (uint32_t)in->len;
	h.flags = in->flags;
	h.warn_len = (uint32_t)wl;
	memcpy(h.key, key, 32);
	payload = malloc(prog + wl);
	if (!payload)
		return;
	memcpy(payload, in->filter, prog);
	if (wl)
		memcpy(payload + prog, in->warning, wl);
	checksum(&h, payload, prog + wl, h.sum);
	snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd >= 0) {
		ok = write(fd, &h, sizeof(h)) == (ssize_t)sizeof(h) &&
		     write(fd, payload, prog + wl) == (ssize_t)(prog + wl);
		ok &= close(fd) == 0;
		if (!ok || rename(tmp, path) < 0)
			unlink(tmp);
	}
	free(payload);
}
