/* Parent side of seccomp: turn --seccomp/--seccomp-bpf into a raw cBPF
 * program, from the cache when possible, else compiled and cached. */
#define _GNU_SOURCE
#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "seccomp/cache.h"
#include "seccomp/profile.h"
#include "seccomp/seccomp.h"
#include "seccomp/sha256.h"
#include "src/fdio.h"

#define MAX_PROFILE (4U << 20)
#define MAX_INSNS 4096U

static bool debug(void)
{
	const char *d = getenv("CLOISTER_DEBUG");
	return d && strstr(d, "seccomp");
}

/* Reads a whole file of at most max bytes. Pipes work too (--seccomp-bpf
 * /dev/fd/N, as bwrap users pass programs), so read until EOF. */
static int read_file(const char *path, const char *what, char **data, size_t *len,
                     size_t max, cl_error *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return cl_fail_errno(err, "opening %s %s", what, path);
	if (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode) ||
	    (S_ISREG(st.st_mode) && (size_t)st.st_size > max)) {
		close(fd);
		return cl_fail(err, 0, "%s %s: not a file of at most %zu bytes", what, path, max);
	}
	rc = cl_read_all(fd, max, data, len);
	close(fd);
	if (rc == -EFBIG)
		return cl_fail(err, 0, "%s %s: not a file of at most %zu bytes", what, path, max);
	if (rc < 0)
		return cl_fail(err, -rc, "reading %s %s", what, path);
	return 0;
}

int sc_bpf_read(const char *path, struct sc_program *out, cl_error *err)
{
	char *data;
	size_t len;
	int rc = read_file(path, "seccomp BPF file", &data, &len, MAX_INSNS * 8, err);

	if (rc < 0)
		return rc;
	if (len == 0 || len % sizeof(struct sock_filter)) {
		free(data);
		return cl_fail(err, 0, "seccomp BPF file %s: %zu bytes is not a whole number of "
		               "8-byte instructions (expected raw cBPF, as bwrap --seccomp takes)",
		               path, len);
	}
	out->filter = (struct sock_filter *)data;
	out->len = (unsigned short)(len / sizeof(struct sock_filter));
	out->flags = 0;
	return 0;
}

int sc_profile_load(const char *spec, const struct sc_context *ctx, struct sc_profile *out,
                    cl_error *err)
{
	char *text;
	size_t len;
	int rc;

	if (strcmp(spec, "default") == 0)
		return sc_profile_default(ctx, out, err);
	rc = read_file(spec, "seccomp profile", &text, &len, MAX_PROFILE, err);
	if (rc < 0)
		return rc;
	rc = sc_profile_from_json(text, len, spec, ctx, out, err);
	free(text);
	return rc;
}

/* Everything that shapes the compiled program goes into the key. */
static void cache_key(const char *kind, const void *data, size_t len,
                      const struct sc_context *ctx, uint8_t key[32])
{
	const struct scmp_version *v = seccomp_version();
	struct sc_sha256 s;
	struct utsname u = {0};
	uint32_t native = seccomp_arch_native();
	uint8_t nested = ctx->allow_nested;

	uname(&u);
	sc_sha256_init(&s);
	sc_sha256_update(&s, "cloister-seccomp-1", 19);
	sc_sha256_update(&s, kind, strlen(kind) + 1);
	sc_sha256_update(&s, data, len);
	sc_sha256_update(&s, v, sizeof(*v));
	sc_sha256_update(&s, &native, sizeof(native));
	sc_sha256_update(&s, &nested, 1);
	sc_sha256_update(&s, &ctx->caps, sizeof(ctx->caps));
	/* minKernel entries depend on the running kernel. */
	sc_sha256_update(&s, u.release, strlen(u.release) + 1);
	sc_sha256_final(&s, key);
}

/* The default profile is keyed by its resolved rules, so any change to the
 * table changes the key even if nobody bumps SC_DEFAULT_VERSION. */
static void default_key(const struct sc_profile *p, const struct sc_context *ctx,
                        uint8_t key[32])
{
	struct sc_sha256 s;
	uint8_t h[32];

	sc_sha256_init(&s);
	sc_sha256_update(&s, SC_DEFAULT_VERSION, sizeof(SC_DEFAULT_VERSION));
	sc_sha256_update(&s, &p->default_action, sizeof(p->default_action));
	sc_sha256_update(&s, &p->badarch_action, sizeof(p->badarch_action));
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct sc_rule *r = &p->rules[i];
		sc_sha256_update(&s, r->name, strlen(r->name) + 1);
		sc_sha256_update(&s, &r->action, sizeof(r->action));
		for (unsigned c = 0; c < r->n_conds; c++) {
			uint64_t w[4] = {r->conds[c].arg, (uint64_t)r->conds[c].op, r->conds[c].v,
			                 r->conds[c].v2};
			sc_sha256_update(&s, w, sizeof(w));
		}
	}
	sc_sha256_final(&s, h);
	cache_key("default", h, sizeof(h), ctx, key);
}

static unsigned kernel_flags(unsigned f)
{
	return (f & SC_FLAG_LOG ? SECCOMP_FILTER_FLAG_LOG : 0) |
	       (f & SC_FLAG_SPEC_ALLOW ? SECCOMP_FILTER_FLAG_SPEC_ALLOW : 0) |
	       (f & SC_FLAG_TSYNC ? SECCOMP_FILTER_FLAG_TSYNC : 0);
}

static void warn_unknown(const char *spec, const char *names)
{
	const struct scmp_version *v = seccomp_version();

	if (names && *names)
		fprintf(stderr, "cloister: warning: %s: skipping syscalls unknown to libseccomp "
		        "%u.%u.%u: %s\n", spec, v->major, v->minor, v->micro, names);
}

static int to_program(struct sc_cached *c, struct sc_program *out)
{
	out->filter = c->filter;
	out->len = (unsigned short)c->len;
	out->flags = c->flags;
	c->filter = NULL;
	return 0;
}

struct build_id {
	uint8_t bytes[64];
	size_t len;
};

/* dl_iterate_phdr callback: the GNU build-id note of the main program. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	struct build_id *id = data;

	if (info->dlpi_name && info->dlpi_name[0])
		return 0;   /* a shared library; the main program comes first */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *n = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = n + ph->p_memsz;
		if (ph->p_type != PT_NOTE)
			continue;
		while (n + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)n;
			const uint8_t *name = n + sizeof(*nh);
			const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3U);
			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && nh->n_descsz <= sizeof(id->bytes)) {
				memcpy(id->bytes, desc, nh->n_descsz);
				id->len = nh->n_descsz;
				return 1;
			}
			n = desc + ((nh->n_descsz + 3) & ~3U);
		}
	}
	return 1;
}

/* The built-in profile's key. The binary's build-id changes with any change
 * to the rule tables (they are compiled in), so a warm launch need not build
 * and hash the rules; without a build-id, the resolved rules are hashed. */
static int default_profile_key(const struct sc_context *ctx, struct sc_profile *prof,
                               uint8_t key[32], cl_error *err)
{
	struct build_id id = {.len = 0};
	int rc;

	dl_iterate_phdr(find_build_id, &id);
	if (id.len) {
		cache_key("default-build-id", id.bytes, id.len, ctx, key);
		return 0;
	}
	rc = sc_profile_default_raw(ctx, prof, err);
	if (rc == 0)
		default_key(prof, ctx, key);
	return rc;
}

int sc_build(const char *spec, const struct sc_context *ctx, struct sc_program *out,
             cl_error *err)
{
	struct sc_profile prof = {0};
	struct sc_cached c = {0};
	uint8_t key[32];
	char *text = NULL;
	size_t len;
	int rc;

	if (strcmp(spec, "default") == 0) {
		rc = default_profile_key(ctx, &prof, key, err);
		if (rc < 0)
			return rc;
	} else {
		rc = read_file(spec, "seccomp profile", &text, &len, MAX_PROFILE, err);
		if (rc < 0)
			return rc;
		cache_key("json", text, len, ctx, key);
	}
	rc = sc_cache_get(key, &c);
	if (debug())
		fprintf(stderr, "cloister: debug: seccomp cache %s\n",
		        rc == 0 ? "hit" : rc == -EBADMSG ? "corrupt, rebuilding" : "miss");
	if (rc == 0) {
		warn_unknown(spec, c.warning);
		free(c.warning);
		free(text);
		sc_profile_free(&prof);
		return to_program(&c, out);
	}
	/* A miss on the build-id key: the rules are built only now. */
	if (!text && prof.n_rules == 0) {
		rc = sc_profile_default_raw(ctx, &prof, err);
		if (rc < 0)
			return rc;
	}
	if (text) {
		rc = sc_profile_from_json(text, len, spec, ctx, &prof, err);
		free(text);
		if (rc < 0)
			return rc;
	}
	rc = sc_compile(&prof, &c.filter, &c.len, err);
	if (rc == 0 && !text && strcmp(spec, "default") == 0)
		rc = sc_profile_default_check(c.filter, c.len, ctx, err);
	if (rc == 0) {
		c.flags = kernel_flags(prof.flags);
		c.warning = prof.unknown;
		warn_unknown(spec, c.warning);
		sc_cache_put(key, &c);
		c.warning = NULL;
		to_program(&c, out);
	}
	sc_profile_free(&prof);
	if (rc < 0)
		free(c.filter);
	return rc < 0 ? cl_wrap(err, "compiling seccomp profile %s", spec) : 0;
}

int sc_prepare(const struct cl_policy *p, struct sc_program *out, cl_error *err)
{
	struct sc_context ctx = {.caps = p->caps_keep, .allow_nested = p->allow_nested};

	out->filter = NULL;
	out->len = 0;
	out->flags = 0;
	switch (p->seccomp) {
	case CL_SC_UNCONFINED:
		return 0;
	case CL_SC_BPF:
		return sc_bpf_read(p->seccomp_path, out, err);
	case CL_SC_DEFAULT:
		return sc_build("default", &ctx, out, err);
	case CL_SC_PROFILE:
		return sc_build(p->seccomp_path, &ctx, out, err);
	}
	return cl_fail(err, 0, "unknown seccomp mode");
}
