/* Sandbox specs on codeplane: the local request bundle goes to the remote
 * CODEPLANE_WORKDIR as a tar stream over ssh (then made read-only there,
 * best effort), and the result comes back the same way, read by cloister's
 * own bounded tar reader and written beneath the local result dir only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/clock.h"
#include "src/executors/cp_exec.h"
#include "src/sandbox/bundle.h"
#include "src/util/fsafe.h"
#include "src/util/tar_extract.h"
#include "src/util/tar_write.h"

/* Each of ship and collect: a stuck remote cannot hold the run longer. */
#define CP_TRANSFER_MS (300 * 1000)
/* The stream may carry headers and padding beyond the payload budget. */
#define CP_STREAM_MAX (SB_MAX_BUNDLE_BYTES + (uint64_t)CL_TAR_MAX_MEMBERS * 2048 + (1u << 20))

int cp_spec_paths(struct cp *w, const struct cl_policy *p, cl_error *err)
{
	for (size_t i = 0; i < p->n_mounts; i++) {
		const struct cl_mount *m = &p->mounts[i];
		if (m->kind != CL_MNT_BIND || !m->src)
			continue;
		if (strcmp(m->dest, "/workspace") == 0)
			snprintf(w->req, sizeof(w->req), "%s", m->src);
		else if (strcmp(m->dest, "/result") == 0)
			snprintf(w->res, sizeof(w->res), "%s", m->src);
		else if (strncmp(m->dest, "/workspace/", 11) == 0)   /* the result file */
			snprintf(w->res_file, sizeof(w->res_file), "%s", m->src);
	}
	if (!w->req[0] || !w->res[0] || !w->res_file[0] || !strrchr(w->res_file, '/'))
		return cl_fail(err, EINVAL, "codeplane: the sandbox spec's request and result are missing");
	w->spec = true;
	return 0;
}

char *cp_spec_env(const struct cp *w, const char *e)
{
	const char *eq = strchr(e, '=');
	char *out = NULL;

	/* The protocol's paths name /workspace; remotely it is CODEPLANE_WORKDIR. */
	if (strncmp(e, "SMITHERS_SANDBOX_", 17) != 0 || !eq || strncmp(eq + 1, "/workspace/", 11) != 0)
		return NULL;
	if (asprintf(&out, "%.*s=%s%s", (int)(eq - e), e, w->cfg.workdir, eq + 1 + 10) < 0)
		return NULL;
	return out;
}

static const char *base_of(const char *path)
{
	return strrchr(path, '/') + 1;
}

/* W='...' R='...' F='...'; then body. */
static char *script(const struct cp *w, const char *body)
{
	size_t len = 0, cap = 256;
	char *b = malloc(cap);
	int rc = b ? 0 : -ENOMEM;

	if (b)
		b[0] = '\0';
	rc = rc ?: cp_append(&b, &len, &cap, "W=") ?: cp_squote(&b, &len, &cap, w->cfg.workdir) ?:
	     cp_append(&b, &len, &cap, " R=") ?: cp_squote(&b, &len, &cap, w->cfg.result_dir) ?:
	     cp_append(&b, &len, &cap, " F=") ?: cp_squote(&b, &len, &cap, base_of(w->res_file)) ?:
	     cp_append(&b, &len, &cap, "; ") ?: cp_append(&b, &len, &cap, body);
	if (rc < 0) {
		free(b);
		return NULL;
	}
	return b;
}

static int transfer_end(struct cp *w, const char *what, int status, bool timed_out, int sig,
                        cl_error *err)
{
	if (sig)
		return cl_fail(err, ECANCELED, "codeplane: cancelled (signal %d) while %s", sig, what);
	if (timed_out)
		return cl_fail(err, ETIMEDOUT, "codeplane: %s took longer than %d s", what,
		               CP_TRANSFER_MS / 1000);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return cl_fail(err, EIO, "codeplane: %s on workspace %s failed (%s %d)", what, w->id,
		               WIFEXITED(status) ? "exit" : "signal",
		               WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return 0;
}

/* The remote request is replaced, not merged (a resumed workspace still
 * holds the last run's), then made read-only but for the result file:
 * the remote is the command's own machine, so this is intent, not a
 * boundary (docs/executors.md). */
static const char ship_body[] =
	"set -e; mkdir -p \"$W\" \"$R\"; chmod -R u+w \"$W\" \"$R\"; "
	"find \"$W\" \"$R\" -mindepth 1 -delete; tar -x -o -f - -C \"$W\"; "
	"chmod -R a-w \"$W\"; chmod u+w \"$W/.smithers/$F\"";

int cp_spec_ship(struct cp *w, cl_error *err)
{
	cl_autoclose int dir = open(w->req, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	cl_autoclose int mfd = memfd_create("cloister-request", MFD_CLOEXEC);
	cl_autofree char *remote = script(w, ship_body);
	const char *bad = "";
	bool timed_out = false;
	int rc, sig = 0, status;
	pid_t pid;

	if (dir < 0 || mfd < 0)
		return cl_fail_errno(err, "codeplane: packing the request bundle");
	if (!remote)
		return cl_fail(err, ENOMEM, "codeplane: packing the request bundle");
	/* Packed whole first: ssh then reads a file, and nothing here blocks
	 * on a remote that stops reading. */
	if ((rc = cl_tar_write_tree(dir, mfd, &bad)) < 0)
		return cl_fail(err, -rc, "codeplane: packing the request bundle (%s)", bad);
	if (lseek(mfd, 0, SEEK_SET) < 0)
		return cl_fail_errno(err, "codeplane: packing the request bundle");
	/* Its stdout is not the command's: anything the remote says goes to stderr. */
	pid = cp_spawn_ssh(w, remote, mfd, 2, err);
	if (pid < 0)
		return cl_error_code(err);
	status = cp_wait_ssh(w, pid, CP_TRANSFER_MS, &timed_out, &sig);
	return transfer_end(w, "shipping the request bundle", status, timed_out, sig, err);
}

struct pump {
	struct cl_tar tar;
	struct cl_tar_dest dest;
	uint64_t seen;
	int sig;
	bool timed_out;
};

/* Reads ssh's stdout into the tar reader until EOF, a refusal, the
 * deadline or a cancel. 0 or the reader's error. */
static int pump(struct cp *w, int in, struct pump *pp)
{
	double end = cl_mono_ms() + CP_TRANSFER_MS;
	char buf[65536];

	for (;;) {
		struct pollfd pf[2] = {{.fd = in, .events = POLLIN}, {.fd = w->sig_fd, .events = POLLIN}};
		struct signalfd_siginfo si;
		double left = end - cl_mono_ms();
		ssize_t n;
		int rc, k = poll(pf, 2, left <= 0 ? 0 : (int)left + 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0) {
			pp->timed_out = true;
			return -ETIMEDOUT;
		}
		if (k < 0)
			return -errno;
		if ((pf[1].revents & POLLIN) && read(w->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			pp->sig = (int)si.ssi_signo;
			return -ECANCELED;
		}
		if (!(pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(in, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return cl_tar_finish(&pp->tar);
		if ((uint64_t)n > CP_STREAM_MAX - pp->seen) {
			snprintf(pp->dest.why, sizeof(pp->dest.why), "the stream is over %llu bytes",
			         (unsigned long long)CP_STREAM_MAX);
			return -EFBIG;
		}
		pp->seen += (uint64_t)n;
		if ((rc = cl_tar_feed(&pp->tar, buf, (size_t)n)) < 0)
			return rc;
	}
}

static const char collect_body[] = "cd \"$W/.smithers\" && exec tar -c -f - \"$F\" -C \"$R\" .";

int cp_spec_collect(struct cp *w, cl_error *err)
{
	char tmp[PATH_MAX];
	cl_autoclose int res = open(w->res, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	cl_autoclose int tmpd = -1;
	cl_autofree char *remote = script(w, collect_body);
	struct pump pp;
	int pipefd[2], rc, status;
	pid_t pid;

	snprintf(tmp, sizeof(tmp), "%.*s", (int)(base_of(w->res_file) - 1 - w->res_file), w->res_file);
	tmpd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (res < 0 || tmpd < 0)
		return cl_fail_errno(err, "codeplane: opening the local result directory");
	if (!remote || pipe2(pipefd, O_CLOEXEC) < 0)
		return cl_fail(err, remote ? errno : ENOMEM, "codeplane: collecting the result bundle");
	pid = cp_spawn_ssh(w, remote, -1, pipefd[1], err);
	close(pipefd[1]);
	if (pid < 0) {
		close(pipefd[0]);
		return cl_error_code(err);
	}
	memset(&pp, 0, sizeof(pp));
	pp.dest = (struct cl_tar_dest){.root_fd = res, .file_dir_fd = tmpd, .out_fd = -1,
	                               .file_name = base_of(w->res_file), .max_bytes = SB_MAX_BUNDLE_BYTES};
	cl_tar_init(&pp.tar, &cl_tar_extract_ops, &pp.dest);
	rc = pump(w, pipefd[0], &pp);
	/* Whatever is left of the stream is not read: ssh goes. */
	if (rc < 0)
		kill(pid, SIGKILL);
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	cl_tar_dest_close(&pp.dest);
	cl_tar_free(&pp.tar);
	if (rc == -ECANCELED || rc == -ETIMEDOUT)
		rc = transfer_end(w, "collecting the result bundle", status, pp.timed_out, pp.sig, err);
	else if (rc < 0)
		rc = cl_fail(err, -rc, "codeplane: the result bundle from workspace %s was refused: %s",
		             w->id, pp.dest.why[0] ? pp.dest.why : pp.tar.why[0] ? pp.tar.why : strerror(-rc));
	else
		rc = transfer_end(w, "collecting the result bundle", status, false, 0, err);
	if (rc < 0)
		cl_empty_dir(res);   /* no half-made bundle stays */
	return rc;
}
