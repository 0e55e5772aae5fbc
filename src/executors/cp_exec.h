/* Shared by the codeplane executor's files: its state, ssh to the
 * workspace, and the pieces of a remote shell command. */
#ifndef CL_CP_EXEC_H
#define CL_CP_EXEC_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/util/error.h"
#include "src/executors/cp_api.h"
#include "src/policy/policy.h"
#include "src/policy/status.h"

struct cp {
	struct cp_config cfg;
	char id[80];
	char name[64];            /* the workspace's name (sticky: its key) */
	bool sticky;
	char host[256], user[64];
	int port;
	int sig_fd;               /* SIGINT/SIGTERM/SIGHUP, held since create */
	sigset_t old_mask;
	bool mask_set;
	bool ssh_failed;          /* the command's ssh ended with 255 */
	int lock_fd;              /* sticky with a name: its flock, held to cleanup */
	/* Sandbox spec (policy spec_io): the local request, result and result
	 * file that are shipped and collected. */
	bool spec;
	char req[PATH_MAX], res[PATH_MAX], res_file[PATH_MAX];
};

/* A fixed alphabet (letters, digits and extra), 1..max-1 bytes, no
 * leading '-': for server-chosen strings put in URLs and ssh's argv. */
bool cp_safe_token(const char *s, size_t max, const char *extra);
/* "codeplane: WHAT: HTTP STATUS: message (resource.field: code, ...)". */
int cp_api_error(const char *what, int status, json_t *body, cl_error *err);
/* GET the workspace every 250 ms until running; bounded by the start
 * timeout and ended by a cancel. */
int cp_wait_running(struct cp *w, cl_error *err);
/* Appends s, or s single-quoted for a POSIX shell. 0 or -ENOMEM. */
int cp_append(char **buf, size_t *len, size_t *cap, const char *s);
int cp_squote(char **buf, size_t *len, size_t *cap, const char *s);
/* ssh to the workspace running remote; in_fd/out_fd become its stdin and
 * stdout (-1: inherited). The child gets the caller's signal mask. */
pid_t cp_spawn_ssh(const struct cp *w, const char *remote, int in_fd, int out_fd, cl_error *err);
/* Waits for ssh (pid), ending it on the deadline (timeout_ms, 0 = none:
 * *timed_out) or a cancel (*sig). Returns its wait status. */
int cp_wait_ssh(struct cp *w, pid_t pid, uint64_t timeout_ms, bool *timed_out, int *sig);

/* Sandbox specs (cp_spec.c): the request bundle into CODEPLANE_WORKDIR
 * (then made read-only), and the result bundle back as a tar stream,
 * extracted beneath the local result dir. */
int cp_spec_paths(struct cp *w, const struct cl_policy *p, cl_error *err);
int cp_spec_ship(struct cp *w, cl_error *err);
int cp_spec_collect(struct cp *w, cl_error *err);
/* The env entry as the remote command gets it (protocol paths moved to
 * the remote directories); NULL to use e as it is. Caller frees. */
char *cp_spec_env(const struct cp *w, const char *e);

/* Sticky workspaces (cp_sticky.c): 1 and w->id set if a recorded one was
 * found and resumed, 0 if none (create one), <0 on error. */
int cp_sticky_resume(struct cp *w, cl_error *err);
/* One run per sticky name: takes <record>.lock (flock, not waiting) into
 * w->lock_fd; an error names the name when another run holds it. */
int cp_sticky_lock(struct cp *w, cl_error *err);
/* Records w->id for the next run with this name (atomically). */
int cp_sticky_record(const struct cp *w, cl_error *err);

#endif
