/* One command's view of a cgroup it shares (a session's): the OOM kills
 * counted between two reads, and the memory high-water mark over the same
 * window where the kernel resets it per reader (cgroup v2 memory.peak,
 * Linux 6.12 and later), else since the cgroup was made. */
#define _GNU_SOURCE
#include "cgroups/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The memory hierarchy's directory, or -1 when there is none. */
static int mem_fd(const struct cg_handle *h)
{
	if (h->be == &cg_backend_v2)
		return h->dirs[0].fd;
	return h->mem >= 0 ? h->dirs[h->mem].fd : -1;
}

static int oom_kills(const struct cg_handle *h, int fd, int64_t *v)
{
	if (h->be == &cg_backend_v2)
		return cg_read_key(fd, "memory.events", "oom_kill", v);
	/* As in v1_collect: oom_kill (Linux >= 4.13), else limit hits. */
	if (cg_read_key(fd, "memory.oom_control", "oom_kill", v) == 0)
		return 0;
	return cg_read_i64(fd, "memory.failcnt", v);
}

void cg_window_begin(struct cg_handle *h, struct cg_window *w)
{
	int fd = h ? mem_fd(h) : -1;

	memset(w, 0, sizeof(*w));
	w->oom_before = -1;
	w->peak_fd = -1;
	if (fd < 0)
		return;
	if (oom_kills(h, fd, &w->oom_before) < 0)
		w->oom_before = -1;
	if (h->be != &cg_backend_v2)
		return;
	/* A write resets the peak for reads through this open file only:
	 * other readers (a concurrent exec) keep theirs. Older kernels have
	 * the file read-only; then the peak is the cgroup's lifetime one. */
	w->peak_fd = openat(fd, "memory.peak", O_RDWR | O_CLOEXEC);
	if (w->peak_fd >= 0 && write(w->peak_fd, "reset\n", 6) == 6)
		w->windowed = true;
	else if (w->peak_fd >= 0) {
		close(w->peak_fd);
		w->peak_fd = -1;
	}
}

static int64_t read_peak_fd(int fd)
{
	char buf[64], *end;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long long v;

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	errno = 0;
	v = strtoll(buf, &end, 10);
	return errno || end == buf ? -1 : v;
}

void cg_window_end(struct cg_handle *h, struct cg_window *w, struct cg_stats *st)
{
	int fd = h ? mem_fd(h) : -1;
	int64_t v;

	st->oom_killed = false;
	st->memory_peak = -1;
	if (fd >= 0) {
		if (w->oom_before >= 0 && oom_kills(h, fd, &v) == 0)
			st->oom_killed = v > w->oom_before;
		if (w->windowed)
			st->memory_peak = read_peak_fd(w->peak_fd);
		else if (cg_read_i64(fd, h->be == &cg_backend_v2 ? "memory.peak"
		                     : "memory.max_usage_in_bytes", &v) == 0)
			st->memory_peak = v;
	}
	if (w->peak_fd >= 0)
		close(w->peak_fd);
	w->peak_fd = -1;
}
