/* On-disk cache of compiled seccomp programs, keyed by a hash of everything
 * that shapes the program. Best effort: cache trouble never fails a run. */
#ifndef SC_CACHE_H
#define SC_CACHE_H

#include <linux/filter.h>
#include <stddef.h>
#include <stdint.h>

struct sc_cached {
	struct sock_filter *filter;  /* malloc'd */
	size_t len;
	unsigned flags;              /* SECCOMP_FILTER_FLAG_* for seccomp(2) */
	char *warning;               /* malloc'd or NULL: the loader's warning */
};

/* The cache directory for this user (created 0700), or NULL if none is
 * usable. buf holds the path. */
const char *sc_cache_dir(char *buf, size_t len);
/* 0 on a valid hit; -ENOENT on a miss; -EBADMSG when an entry existed but
 * was corrupt or foreign (the caller rebuilds and overwrites it). */
int sc_cache_get(const uint8_t key[32], struct sc_cached *out);
/* Atomic (temp file + rename); errors are ignored by design. */
void sc_cache_put(const uint8_t key[32], const struct sc_cached *in);

#endif
