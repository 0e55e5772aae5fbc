/* Privilege: a setuid binary, capability sets, and the host-wide knobs in
 * /proc/sys, /sys, sysrq-trigger, kcore and kallsyms. Files are opened for
 * writing and closed unwritten: the open is the attack. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "probe.h"

/* Capability line NAME of /proc/PID/status, as a number. */
static unsigned long long cap_of(pid_t pid, const char *name)
{
	char p[64], line[256];
	unsigned long long v = ~0ULL;
	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	FILE *f = fopen(p, "re");
	if (!f) return v;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name)))
			v = strtoull(line + strlen(name) + 1, NULL, 16);
	fclose(f);
	return v;
}

static int caps_zero(const struct ctx *c)
{
	const char *sets[] = {"CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"};
	for (size_t i = 0; i < ARRAY_LEN(sets); i++) {
		unsigned long long v = cap_of(getpid(), sets[i]);
		if (v)
			return escaped("%s %016llx", sets[i], v);
	}
	return blocked("all five capability sets are empty");
}

static int nnp(const struct ctx *c)
{
	int r = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	return r == 1 ? blocked("no_new_privs is set") : escaped("no_new_privs is not set (%d)", r);
}

/* Exec a setuid-root program (passwd waits for a password on a pipe we
 * never write) and read its effective capabilities while it runs. */
static int setuid_exec(const struct ctx *c)
{
	const char *prog = access("/usr/bin/passwd", X_OK) == 0 ? "/usr/bin/passwd" : NULL;
	int in[2], sync[2];
	if (!prog) return blocked("no setuid program to run here (/usr/bin/passwd absent)");
	if (pipe(in) < 0 || pipe2(sync, O_CLOEXEC) < 0) return broken("pipe: %s", ename(errno));
	pid_t p = fork();
	if (p == 0) {
		dup2(in[0], 0);
		close(sync[0]);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	close(in[0]); close(sync[1]);
	/* The CLOEXEC pipe closes at exec: from then on the credentials are
	 * the new program's. */
	char b;
	(void)!read(sync[0], &b, 1);
	/* A zombie keeps the credentials of what it ran: reading after an
	 * early exit of passwd is still exact. comm says the exec happened. */
	unsigned long long eff = cap_of(p, "CapEff:");
	char cp[64], comm[32] = "";
	snprintf(cp, sizeof(cp), "/proc/%d/comm", (int)p);
	FILE *f = fopen(cp, "re");
	if (f) { if (!fgets(comm, sizeof(comm), f)) comm[0] = 0; fclose(f); }
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	if (eff == ~0ULL || strncmp(comm, "passwd", 6))
		return broken("%s did not run (comm '%.16s')", prog, comm);
	return eff ? escaped("%s runs with CapEff %016llx", prog, eff) : blocked("%s runs with no capabilities", prog);
}

static int open_w(const char *path)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) { close(fd); return escaped("%s opened for writing", path); }
	return blocked("%s: %s", path, ename(errno));
}
static int proc_sys(const struct ctx *c) { return open_w("/proc/sys/kernel/printk_ratelimit"); }
static int proc_sys_core(const struct ctx *c) { return open_w("/proc/sys/kernel/core_pattern"); }
static int sysfs(const struct ctx *c) { return open_w("/sys/kernel/mm/ksm/run"); }
static int sysfs_uevent(const struct ctx *c) { return open_w("/sys/kernel/uevent_helper"); }
static int sysrq(const struct ctx *c) { return open_w("/proc/sysrq-trigger"); }

static int read_some(const char *path, int (*bad)(const char *, long))
{
	char b[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) return blocked("%s: %s", path, ename(errno));
	long n = read(fd, b, sizeof(b) - 1);
	int e = errno;
	close(fd);
	if (n < 0) return blocked("%s: read: %s", path, ename(e));
	b[n] = 0;
	return bad(b, n) ? escaped("%s: read %ld bytes of it", path, n) : blocked("%s: nothing useful (%ld bytes)", path, n);
}
static int any_bytes(const char *b, long n) { return n > 0; }
/* kallsyms hides addresses as zeros from the unprivileged. */
static int real_address(const char *b, long n) { return n > 16 && strspn(b, "0") < 16; }
static int kcore(const struct ctx *c) { return read_some("/proc/kcore", any_bytes); }
static int kallsyms(const struct ctx *c) { return read_some("/proc/kallsyms", real_address); }
static int devmem(const struct ctx *c) { return read_some("/dev/mem", any_bytes); }

static const struct probe probes[] = {
	{"priv_setuid_gains_nothing", "privilege", C_HOST, "exec a setuid-root program and read its capabilities (host as root: root already has them)", setuid_exec},
	{"priv_capability_sets_zero", "privilege", C_HOST, "any of the five capability sets non-empty (the host's bounding set is full)", caps_zero},
	{"priv_no_new_privs", "privilege", C_HOST, "no_new_privs not set", nnp},
	{"priv_proc_sys_write", "privilege", C_ROOT, "open /proc/sys/kernel/printk_ratelimit for writing", proc_sys},
	{"priv_core_pattern_write", "privilege", C_ROOT, "open /proc/sys/kernel/core_pattern for writing (a host-side program run on every crash)", proc_sys_core},
	{"priv_sys_write", "privilege", C_ROOT, "open /sys/kernel/mm/ksm/run for writing", sysfs},
	{"priv_uevent_helper_write", "privilege", C_INFO, "open /sys/kernel/uevent_helper for writing (exists only with CONFIG_UEVENT_HELPER)", sysfs_uevent},
	{"priv_sysrq_trigger", "privilege", C_INFO, "open /proc/sysrq-trigger for writing (host: root, CONFIG_MAGIC_SYSRQ)", sysrq},
	{"priv_kcore_read", "privilege", C_INFO, "read /proc/kcore, kernel memory (host: root, CONFIG_PROC_KCORE)", kcore},
	{"priv_kallsyms_addresses", "privilege", C_INFO, "kernel addresses from /proc/kallsyms (host: root, kptr_restrict below 2)", kallsyms},
	{"priv_dev_mem", "privilege", C_INFO, "read /dev/mem (STRICT_DEVMEM decides on the host)", devmem},
};
FAMILY(fam_priv, probes);
