/* `cloister workspace snapshot --session ID|NAME [--id ID]`: asks the
 * session's supervisor for a snapshot of its workspace (src/session/snap.c
 * takes it) and prints the snapshot's id. 0, or 125 with one line. */
#define _GNU_SOURCE
#include "src/cli/session.h"

#include <stdio.h>
#include <unistd.h>

#include "src/session/client.h"
#include "src/workspace/snapshot.h"

#define EXIT_SETUP 125

int ss_cli_snapshot(const char *key, const char *id)
{
	struct ss_buf b = {0};
	struct ss_reply rep;
	cl_error err = {0};
	int sock, rc = -1;

	/* Refused here too, before anything is asked of the session. */
	if (id && !ws_snap_id_ok(id)) {
		fprintf(stderr, "cloister: workspace snapshot: snapshot id '%s': use 1 to %d letters, digits, "
		        "'.', '_' and '-', starting with a letter or digit\n", id, WS_SNAP_ID_MAX);
		return EXIT_SETUP;
	}
	ss_buf_add(&b, 0, "snap");
	if (id)
		ss_buf_add(&b, 'I', id);
	if ((sock = ss_connect(key, NULL, &err)) >= 0) {
		rc = ss_call(sock, &b, NULL, 0, &rep, &err);
		close(sock);
	}
	ss_buf_free(&b);
	if (rc < 0) {
		cl_wrap(&err, "workspace snapshot of session '%s'", key);
		cl_error_print(&err);
		return EXIT_SETUP;
	}
	if (rep.code != 0) {
		fprintf(stderr, "%s\n", rep.msg);
		return EXIT_SETUP;
	}
	if (rep.flags & SS_RF_UNPAUSED)
		fprintf(stderr, "cloister: workspace snapshot: session '%s' was not paused while its workspace "
		        "was copied (it has no cgroup this user can freeze here): files it changed meanwhile "
		        "may be copied half-written\n", key);
	printf("%s\n", rep.msg);
	return 0;
}
