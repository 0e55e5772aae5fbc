/* Pure conversions between cloister's limits and cgroup file contents, and
 * parsers for what the kernel reports back. No I/O: unit-tested directly. */
#define _GNU_SOURCE
#include "cgroups/internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cg_fmt_cpu_max(char *buf, size_t len, uint64_t quota_us, uint64_t period_us)
{
	int n;

	if (!period_us)
		return -EINVAL;
	if (quota_us)
		n = snprintf(buf, len, "%" PRIu64 " %" PRIu64, quota_us, period_us);
	else
		n = snprintf(buf, len, "max %" PRIu64, period_us);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

/* --memory-swap is the total (docker's convention); v2 wants swap alone. */
int64_t cg_swap_max(uint64_t memory, int64_t memory_swap)
{
	if (memory_swap < 0 || !memory)
		return -1;
	if (memory_swap == 0 || (uint64_t)memory_swap <= memory)
		return 0;
	return memory_swap - (int64_t)memory;
}

/* v1's memsw limit is the total; "0" means no swap, i.e. total = memory. */
int64_t cg_memsw_limit(uint64_t memory, int64_t memory_swap)
{
	if (memory_swap < 0 || !memory)
		return -1;
	if (memory_swap == 0 || (uint64_t)memory_swap <= memory)
		return (int64_t)memory;
	return memory_swap;
}

int cg_parse_key(const char *text, const char *key, int64_t *out)
{
	size_t kl = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, key, kl) == 0 && (p[kl] == ' ' || p[kl] == '\t')) {
			char *end;
			long long v;

			errno = 0;
			v = strtoll(p + kl + 1, &end, 10);
			if (errno || end == p + kl + 1 || (*end && *end != '\n'))
				return -EINVAL;
			*out = v;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -ENOENT;
}

/* Lines are "ID:CONTROLLERS:PATH"; v2 is "0::PATH"; a v1 line may list
 * several comma-separated controllers. */
int cg_parse_proc_cgroup(const char *text, const char *ctrl, char *out, size_t len)
{
	const char *line = text;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		const char *c1 = strchr(line, ':');
		const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		size_t ll = nl ? (size_t)(nl - line) : strlen(line);

		if (c1 && c2 && c2 < line + ll) {
			bool match = false;
			if (!*ctrl) {
				match = c2 == c1 + 1 && c1 - line == 1 && line[0] == '0';
			} else {
				const char *s = c1 + 1;
				size_t cl = strlen(ctrl);
				while (s < c2) {
					const char *e = memchr(s, ',', (size_t)(c2 - s));
					if (!e)
						e = c2;
					if ((size_t)(e - s) == cl && strncmp(s, ctrl, cl) == 0)
						match = true;
					s = e + 1;
				}
			}
			if (match) {
				size_t pl = ll - (size_t)(c2 + 1 - line);
				if (pl == 0 || pl >= len || c2[1] != '/')
					return -EINVAL;
				memcpy(out, c2 + 1, pl);
				out[pl] = '\0';
				return 0;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

int cg_fmt_leaf(char *buf, size_t len, pid_t pid, uint32_t rnd, bool explicit_parent)
{
	int n = snprintf(buf, len, "%s%d-%08x", explicit_parent ? "cloister-" : "", (int)pid, rnd);

	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

pid_t cg_parse_leaf(const char *name, bool explicit_parent)
{
	const char *p = name;
	char *end;
	long pid;

	if (explicit_parent) {
		if (strncmp(p, "cloister-", 9) != 0)
			return -1;
		p += 9;
	}
	if (*p < '1' || *p > '9')
		return -1;
	pid = strtol(p, &end, 10);
	if (*end != '-' || pid <= 0 || pid > 4194304)
		return -1;
	p = end + 1;
	if (strlen(p) != 8 || strspn(p, "0123456789abcdef") != 8)
		return -1;
	return (pid_t)pid;
}

double cg_ticks_to_ms(int64_t ticks, long hz)
{
	if (ticks < 0 || hz <= 0)
		return -1;
	return (double)ticks * 1000.0 / (double)hz;
}

void cg_describe_limits(const struct cl_limits *l, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
#define ADD(...) do { int n_ = snprintf(buf + o, len - o, __VA_ARGS__); \
		if (n_ > 0 && (size_t)n_ < len - o) o += (size_t)n_; } while (0)
	if (l->memory)
		ADD("%s--memory", o ? ", " : "");
	if (l->memory_swap >= 0)
		ADD("%s--memory-swap", o ? ", " : "");
	if (l->cpu_quota_us)
		ADD("%s--cpus", o ? ", " : "");
	if (l->pids)
		ADD("%s--pids", o ? ", " : "");
	if (!o && l->cgroup_parent)
		ADD("--cgroup-parent");
#undef ADD
}
