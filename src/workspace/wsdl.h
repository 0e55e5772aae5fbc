/* libgit2 and libcrypto, loaded on first use: only diff capture, apply and
 * show need them, and shared libraries linked into cloister would cost
 * every launch its share of ld.so time (see src/state/sqlite_dl.h). */
#ifndef WS_DL_H
#define WS_DL_H

#include <git2.h>
#include <git2/sys/repository.h>
#include <stddef.h>

#include "src/util/error.h"

struct ws_git_api {
	__typeof__(git_libgit2_init) *init;
	__typeof__(git_diff_buffers) *diff_buffers;
	__typeof__(git_odb_hash) *odb_hash;
	__typeof__(git_odb_hashfile) *odb_hashfile;
	__typeof__(git_oid_fmt) *oid_fmt;
	__typeof__(git_error_last) *error_last;
	__typeof__(git_repository_new) *repository_new;
	__typeof__(git_repository_free) *repository_free;
	__typeof__(git_ignore_add_rule) *ignore_add_rule;
	__typeof__(git_ignore_path_is_ignored) *ignore_path_is_ignored;
};

extern struct ws_git_api ws_git;

/* Loads libgit2 (and initializes it) and libcrypto once; 0, or err names
 * what is missing. */
int ws_dl_load(cl_error *err);
/* SHA-256 of buf into out[32] (libcrypto). */
void ws_sha256(const void *buf, size_t len, unsigned char out[32]);

#endif
