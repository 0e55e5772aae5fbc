/* The resolved seccomp profile: what the default table and the JSON loader
 * produce and what the compiler turns into BPF. Parent side only. */
#ifndef SC_PROFILE_H
#define SC_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/util/error.h"

#define SC_MAX_ARGS 6

/* One comparison on a syscall argument. op is a libseccomp enum
 * scmp_compare; for MASKED_EQ, v is the mask and v2 the expected value. */
struct sc_cond {
	unsigned arg;
	int op;
	uint64_t v, v2;
};

/* One libseccomp rule: a syscall name, an action and ANDed conditions.
 * Several rules for one name are ORed. */
struct sc_rule {
	char *name;
	uint32_t action;           /* libseccomp SCMP_ACT_* value */
	unsigned n_conds;
	struct sc_cond conds[SC_MAX_ARGS];
	const char *reason;        /* default profile only (static), else NULL */
};

enum {
	SC_FLAG_LOG = 1 << 0,        /* SECCOMP_FILTER_FLAG_LOG */
	SC_FLAG_SPEC_ALLOW = 1 << 1, /* SECCOMP_FILTER_FLAG_SPEC_ALLOW */
	SC_FLAG_TSYNC = 1 << 2,      /* SECCOMP_FILTER_FLAG_TSYNC */
};

struct sc_profile {
	uint32_t default_action;
	uint32_t badarch_action;
	uint32_t *arches;          /* SCMP_ARCH_* tokens; empty = native only */
	size_t n_arches;
	struct sc_rule *rules;
	size_t n_rules;
	unsigned flags;            /* SC_FLAG_* passed to seccomp(2) at load */
	char *unknown;             /* space-separated names libseccomp lacks */
};

/* What a profile is resolved against: the sandbox's capabilities (its
 * bounding set) and whether nested namespaces are allowed. */
struct cl_policy;
struct sc_context {
	uint64_t caps;
	bool allow_nested;
	/* Non-NULL: the profile file was named by a trusted config and must
	 * pass its checks (src/policy/trust.h) against this sandbox's binds. */
	const struct cl_policy *checked_for;
};

int sc_profile_add(struct sc_profile *p, const char *name, uint32_t action,
                   const struct sc_cond *conds, unsigned n_conds, const char *reason);
int sc_profile_add_arch(struct sc_profile *p, uint32_t arch);
void sc_profile_note_unknown(struct sc_profile *p, const char *name);
void sc_profile_free(struct sc_profile *p);

/* Built-in default profile (seccomp/profile_default.c). It depends on
 * ctx->allow_nested only: the build compiles both variants into the binary
 * (seccomp/default_bpf.h). */
int sc_profile_default(const struct sc_context *ctx, struct sc_profile *out, cl_error *err);
/* Runs the compiled default program through the interpreter on the calls
 * the hardening is about; an error if any decision is not the intended one. */
struct sock_filter;
int sc_profile_default_check(const struct sock_filter *f, size_t len,
                             const struct sc_context *ctx, cl_error *err);

/* Docker/OCI JSON (seccomp/profile_json.c); src names the input in errors. */
int sc_profile_from_json(const char *text, size_t len, const char *src,
                         const struct sc_context *ctx, struct sc_profile *out, cl_error *err);

/* The profile in Docker's seccomp JSON shape (it loads back as the same
 * profile); NULL when out of memory. seccomp/profile_export.c. */
typedef struct json_t json_t;
json_t *sc_profile_to_json(const struct sc_profile *p);

/* Names for show and errors (seccomp/names.c). */
const char *sc_action_name(uint32_t action, char *buf, size_t len);
int sc_action_parse(const char *name, uint32_t errno_ret, bool have_errno, uint32_t *out);
const char *sc_op_name(int op);
int sc_op_parse(const char *name, int *op);
const char *sc_arch_name(uint32_t arch);
int sc_arch_parse(const char *name, uint32_t *arch);
/* Does an "arches" entry ("amd64", "x86_64", "SCMP_ARCH_X86_64") name the native arch? */
bool sc_arch_is_native(const char *name);

/* Compile to raw cBPF (seccomp/compile.c). *filter is malloc'd. */
struct sock_filter;
int sc_compile(const struct sc_profile *p, struct sock_filter **filter, size_t *len,
               cl_error *err);
/* A libseccomp context (scmp_filter_ctx) built by the caller, exported to
 * raw cBPF the same way (at most the kernel's 4096 instructions). */
int sc_export(void *ctx, struct sock_filter **filter, size_t *len, cl_error *err);

/* Parent-side entry points (seccomp/prepare.c). spec is "default" or a
 * JSON file. sc_profile_load resolves without compiling (for `show`);
 * sc_build returns the built-in program for "default" and compiles a file
 * (no cache), printing the loader's warning. */
struct sc_program;
int sc_profile_load(const char *spec, const struct sc_context *ctx, struct sc_profile *out,
                    cl_error *err);
int sc_build(const char *spec, const struct sc_context *ctx, struct sc_program *out,
             cl_error *err);
/* A raw cBPF file (bwrap --seccomp format): whole instructions, 1..4096. */
int sc_bpf_read(const char *path, struct sc_program *out, cl_error *err);

#endif
