/* Escape probes (tests/security/escape_suite.sh): one named attack each,
 * run inside a sandbox and once on the bare host as the control. */
#ifndef ESC_PROBE_H
#define ESC_PROBE_H
#include <stddef.h>
#include <sys/types.h>

/* Exit codes: the attack failed the expected way / it worked / the probe
 * itself could not run it (a broken probe, never a pass). */
enum { P_BLOCKED = 0, P_ESCAPED = 1, P_BROKEN = 2 };

/* How the bare-host control is read (escape_suite.sh uses it):
 * C_HOST   the attack works on the host for any caller;
 * C_ROOT   it works on the host only for root (needs host privilege);
 * C_INFO   it depends on the host's configuration (recorded only);
 * C_NONE   no meaningful host control (the note says why). */
enum ctl { C_HOST, C_ROOT, C_INFO, C_NONE };

/* What the runner tells every probe (key=value arguments). Paths and pids
 * are the host's: inside a sandbox they must not be reachable. */
struct ctx {
	pid_t pid;            /* pid=  a host process of the caller, outside */
	int port;             /* port= a listening TCP port on host 127.0.0.1 */
	const char *abs;      /* abs=  a listening abstract unix socket name */
	const char *upath;    /* upath= a listening path unix socket */
	const char *secret;   /* secret= a host file only the caller can read */
	const char *exe;      /* exe=  the cloister binary on the host */
	const char *statedir; /* statedir= cloister's state dir on the host */
	int fd;               /* fd=   an fd the caller holds open (leak check) */
};

struct probe {
	const char *name;
	const char *family;
	enum ctl ctl;
	const char *note;     /* the attack, and for C_NONE why no control */
	int (*run)(const struct ctx *c);
};

struct family {
	const struct probe *p;
	size_t n;
};

extern const struct family fam_term, fam_proc, fam_files, fam_state,
	fam_kernel, fam_priv, fam_net, fam_res, fam_term_helper;

/* Verdict lines: one line on stdout, then the exit code to return. */
int blocked(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int escaped(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int broken(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A call whose permission check comes before its argument checks: the
 * errnos in `denied` (comma-separated names) mean it was refused; success
 * or any other errno means the attack got past the gate. */
int gate(const char *what, long rc, int err, const char *denied);
const char *ename(int e);
int swap_loop(const char *dir, const char *link);
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define FAMILY(var, arr) const struct family var = {arr, ARRAY_LEN(arr)}
#endif
