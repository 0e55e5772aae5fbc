/* LD_PRELOAD probe for tests/integration/supervisor.sh: reports every heap
 * call made as pid 2 of a pid namespace, i.e. by the sandbox's command
 * before exec (init's vfork child; the cleared environment drops the probe
 * at exec). VFORK_ALLOC_PROBE=1 also says the probe is loaded. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static char boot[4096];   /* dlsym's own allocations, before the above exist */
static size_t boot_used;

static void report(const char *fn)
{
	static const char pre[] = "vfork-alloc-probe: ";
	static const char post[] = " called before exec by the command (pid 2)\n";

	if (syscall(SYS_getpid) != 2)
		return;
	(void)!write(2, pre, sizeof(pre) - 1);
	(void)!write(2, fn, strlen(fn));
	(void)!write(2, post, sizeof(post) - 1);
}

__attribute__((constructor)) static void probe_init(void)
{
	real_malloc = dlsym(RTLD_NEXT, "malloc");
	real_calloc = dlsym(RTLD_NEXT, "calloc");
	real_realloc = dlsym(RTLD_NEXT, "realloc");
	real_free = dlsym(RTLD_NEXT, "free");
	if (getenv("VFORK_ALLOC_PROBE"))
		(void)!write(2, "vfork-alloc-probe: loaded\n", 26);
}

static void *boot_alloc(size_t n)
{
	void *p = boot + boot_used;

	n = (n + 15) & ~(size_t)15;
	if (boot_used + n > sizeof(boot))
		return NULL;
	boot_used += n;
	return memset(p, 0, n);
}

static int from_boot(const void *p)
{
	return (const char *)p >= boot && (const char *)p < boot + sizeof(boot);
}

void *malloc(size_t n)
{
	report("malloc");
	return real_malloc ? real_malloc(n) : boot_alloc(n);
}

void *calloc(size_t n, size_t m)
{
	report("calloc");
	return real_calloc ? real_calloc(n, m) : boot_alloc(n * m);
}

void *realloc(void *p, size_t n)
{
	report("realloc");
	return real_realloc && !from_boot(p) ? real_realloc(p, n) : NULL;
}

void free(void *p)
{
	report("free");
	if (p && !from_boot(p) && real_free)
		real_free(p);
}
