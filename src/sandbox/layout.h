/* The on-disk layout of one sandbox run under rootDir:
 * .smithers/sandboxes/<runId>/<sandboxId>/{request,result,tmp}. */
#ifndef SB_LAYOUT_H
#define SB_LAYOUT_H

#include <limits.h>

#include "src/sandbox/sberror.h"

#define SB_REQUEST_FILE ".smithers/sandbox-request.json"
#define SB_RESULT_FILE ".smithers/sandbox-result.json"
#define SB_REQUEST_INSIDE "/workspace/" SB_REQUEST_FILE
#define SB_RESULT_INSIDE "/workspace/" SB_RESULT_FILE

struct sb_layout {
	char root[PATH_MAX - 64]; /* <rootDir>/.smithers/sandboxes/<runId>/<sandboxId> */
	char request[PATH_MAX];
	char result[PATH_MAX];
	char tmp[PATH_MAX];
	char result_file[PATH_MAX];   /* tmp/sandbox-result.json, bound writable */
	char empty_profile[PATH_MAX]; /* tmp/empty-profile, bound over /etc/profile */
	int root_fd, request_fd, result_fd, tmp_fd;
	size_t root_dir_len;          /* root[0..len) is rootDir (without a trailing '/') */
};

/* Paths only (no file system), for dry runs and messages. */
int sb_layout_paths(const char *root_dir, const char *run_id, const char *sandbox_id,
                    struct sb_layout *l, struct sb_error *e);
/* create: makes the directories (request/result/tmp must not exist yet). */
int sb_layout_create(struct sb_layout *l, struct sb_error *e);
/* cleanup: removes request/ and tmp/, keeps result/. */
int sb_layout_cleanup(struct sb_layout *l, struct sb_error *e);
void sb_layout_close(struct sb_layout *l);
/* The cleanup a run killed before its own (SIGKILL, crash) never did:
 * removes request/ and tmp/ of that sandbox, if there, never following a
 * link below rootDir. For ids read back from the state database. */
int sb_layout_sweep(const char *root_dir, const char *run_id, const char *sandbox_id,
                    struct sb_error *e);

#endif
