/* Where sessions live on the host: a 0700 runtime directory of the user
 * ($CLOISTER_RUNTIME_DIR if set, else $XDG_RUNTIME_DIR/cloister,
 * /run/cloister for root, /tmp/cloister-UID), one 0700 directory per session holding its control
 * socket and its info file. */
#ifndef SS_RUNDIR_H
#define SS_RUNDIR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/util/error.h"

#define SS_ID_LEN 12
#define SS_NAME_MAX 64

struct ss_info {
	char id[SS_ID_LEN + 1];
	char name[SS_NAME_MAX + 1];
	pid_t pid;                 /* the supervisor */
	uint64_t start;            /* its start time (clock ticks since boot) */
	pid_t init_pid;
	uint64_t init_start;
	int64_t created;           /* unix seconds */
	uint64_t idle_s;           /* 0 = no idle timeout */
};

/* The runtime directory, checked (a directory, not a link, ours, no access
 * for others) and created if missing when create is set. Fills path; 0,
 * 1 when it does not exist (and create is not set), or -1 with err. */
int ss_rundir(char *path, size_t size, bool create, cl_error *err);
/* A fresh random session id. */
int ss_new_id(char id[SS_ID_LEN + 1], cl_error *err);
bool ss_valid_name(const char *name);
/* Process start time from /proc/PID/stat, or 0 when it is gone (or a zombie). */
uint64_t ss_proc_start(pid_t pid);
/* Whether the process recorded with this start time is still that one. */
bool ss_alive(pid_t pid, uint64_t start);
int ss_info_write(const char *dir, const struct ss_info *in, cl_error *err);
/* Reads DIR/info; 0, or -1 when it is missing or malformed. */
int ss_info_read(const char *dir, struct ss_info *in);
/* The session named by ID or NAME in the runtime dir: fills dir (its
 * directory) and in. 0, or -1 with err ("no session ..."). */
int ss_find(const char *id_or_name, char *dir, size_t size, struct ss_info *in, cl_error *err);
/* Removes a session directory's known files and the directory. */
void ss_dir_remove(const char *dir);

#endif
