/* Owner labels on every container and the sweep that removes the
 * containers of owners that are gone. An owner is (pid namespace, pid,
 * start time): a reused pid or another namespace's pid never counts as
 * the owner being gone or alive by mistake. */
#define _GNU_SOURCE
#include "src/executors/docker_gc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/executors/docker_acct.h"
#include "src/executors/docker_api.h"

#define LBL_PID "org.cloister.owner.pid"
#define LBL_NS "org.cloister.owner.pidns"
#define LBL_START "org.cloister.owner.start"

/* Field 22 of /proc/PID/stat (start time in clock ticks); 0 if gone. */
static unsigned long long start_time(long pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command name may hold spaces and ')': fields follow the last ')'. */
	p = strrchr(buf, ')');
	/* The kernel writes this file: decimal fields, no overflow to detect. */
	/* NOLINTNEXTLINE(cert-err34-c) */
	if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
	                "%*d %*d %*d %llu", &v) != 1)
		v = 0;
	return v;
}

static unsigned long long pidns_inode(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

int cl_docker_owner_labels(json_t *labels, cl_error *err)
{
	char pid[24], ns[24], start[24];

	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	snprintf(ns, sizeof(ns), "%llu", pidns_inode());
	snprintf(start, sizeof(start), "%llu", start_time(getpid()));
	if (json_object_set_new(labels, LBL_PID, json_string(pid)) < 0 ||
	    json_object_set_new(labels, LBL_NS, json_string(ns)) < 0 ||
	    json_object_set_new(labels, LBL_START, json_string(start)) < 0)
		return cl_fail(err, ENOMEM, "labelling the container");
	return 0;
}

/* True only when the owner provably is gone: same pid namespace as ours,
 * and its pid is free or now another process (other start time). */
static bool owner_gone(json_t *labels)
{
	const char *pid = json_string_value(json_object_get(labels, LBL_PID));
	const char *ns = json_string_value(json_object_get(labels, LBL_NS));
	const char *start = json_string_value(json_object_get(labels, LBL_START));
	char mine[24];
	long p;

	if (!pid || !ns || !start)
		return false;
	snprintf(mine, sizeof(mine), "%llu", pidns_inode());
	if (strcmp(ns, mine) != 0 || (p = strtol(pid, NULL, 10)) <= 0)
		return false;
	return start_time(p) != strtoull(start, NULL, 10);
}

/* The accounting cgroup a killed run left (docker_acct.c). */
static void forget_acct(json_t *c)
{
	const char *name = json_string_value(json_array_get(json_object_get(c, "Names"), 0));
	const char *cg = json_string_value(json_object_get(json_object_get(c, "Labels"),
	                                                   CL_DK_ACCT_LABEL));

	if (name && name[0] == '/')
		cl_dk_acct_forget(cg, name + 1);
}

int cl_docker_gc(int *removed, cl_error *err)
{
	const char *sock = cl_docker_socket(err);
	json_t *list = NULL, *c;
	cl_error quiet = {0};
	int status = 0, rc;
	size_t i;

	*removed = -1;
	if (!sock || cl_docker_ping(sock, &quiet) < 0)
		return 0;
	/* filters={"label":["org.cloister.executor=docker"]}, URL-encoded. */
	rc = cl_docker_call(sock, "GET", "/containers/json?all=1&filters=%7B%22label%22%3A%5B%22"
	                    "org.cloister.executor%3Ddocker%22%5D%7D", NULL, 60000, &status, &list, err);
	if (rc == 0 && (status != 200 || !json_is_array(list)))
		rc = cl_fail(err, 0, "docker gc: listing containers: %s", cl_docker_message(list));
	*removed = 0;
	json_array_foreach(rc == 0 ? list : NULL, i, c) {
		const char *id = json_string_value(json_object_get(c, "Id"));
		if (!id || !owner_gone(json_object_get(c, "Labels")))
			continue;
		if (cl_docker_remove(sock, id, err) < 0) {
			rc = cl_error_code(err);
			break;
		}
		(*removed)++;
		/* After the container: its own cgroup was a child of this one. */
		forget_acct(c);
	}
	json_decref(list);
	return rc;
}
