/* Unit tests for the seccomp profile model: the Docker/OCI JSON loader on
 * small inline profiles, the default profile's shape, the compiler and the
 * program built into the binary. */
#include <errno.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>

#include "seccomp/bpf_sim.h"
#include "seccomp/default_bpf.h"
#include "seccomp/profile.h"
#include "unit.h"

static const struct sc_context none = {.caps = 0, .allow_nested = false};

static int load(const char *json, const struct sc_context *ctx, struct sc_profile *p,
                cl_error *err)
{
	memset(err, 0, sizeof(*err));
	return sc_profile_from_json(json, strlen(json), "t.json", ctx, p, err);
}

static size_t count(const struct sc_profile *p, const char *name)
{
	size_t n = 0;
	for (size_t i = 0; i < p->n_rules; i++)
		n += strcmp(p->rules[i].name, name) == 0;
	return n;
}

static const struct sc_rule *find(const struct sc_profile *p, const char *name)
{
	for (size_t i = 0; i < p->n_rules; i++)
		if (strcmp(p->rules[i].name, name) == 0)
			return &p->rules[i];
	return NULL;
}

/* Bad inputs: the error names the place. */
static const struct { const char *json, *msg; } bad[] = {
	{"{\"defaultAction\": }", "t.json: line 1, column 19: unexpected token"},
	{"[]", "expected a JSON object"},
	{"{}", "defaultAction is missing"},
	{"{\"defaultAction\":\"SCMP_ACT_NOPE\"}", "unknown action 'SCMP_ACT_NOPE'"},
	{"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"bogus\":1}", "unknown key \"bogus\""},
	{"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"x86_64\"]}",
	 "architectures[0]: unknown architecture x86_64"},
	{"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"archMap\":[{\"architecture\":\"SCMP_ARCH_X86_64\","
	 "\"subArchitectures\":[\"SCMP_ARCH_PDP11\"]}]}", "unknown architecture SCMP_ARCH_PDP11"},
	{"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[],\"archMap\":[]}", "both set"},
	{"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],"
	 "\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":-1,\"op\":\"SCMP_CMP_EQ\"}]}]}",
	 "syscalls[0].args[0]: index"},
	{"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],"
	 "\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":0,\"op\":\"EQ\"}]}]}",
	 "unknown operator EQ"},
	{"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],"
	 "\"action\":\"SCMP_ACT_ERRNO\",\"includes\":{\"minKernel\":\"four\"}}]}", "minKernel"},
	{"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],"
	 "\"action\":\"SCMP_ACT_ERRNO\",\"excludes\":{\"caps\":[\"CAP_FLY\"]}}]}",
	 "unknown capability CAP_FLY"},
	{"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],"
	 "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":\"x\"}]}", "errnoRet"},
	{"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[],\"name\":\"\","
	 "\"action\":\"SCMP_ACT_ERRNO\"}]}", "syscalls[0]"},
	{"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"/run/x.sock\"}", "listenerPath"},
	{"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"defaultAction\":\"SCMP_ACT_ALLOW\"}", "duplicate"},
	/* An entry that is filtered out is still validated. */
	{"{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"read\"],"
	 "\"action\":\"SCMP_ACT_BAD\",\"includes\":{\"arches\":[\"s390x\"]}}]}", "unknown action"},
};

static void test_bad(void)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct sc_profile p;
		cl_error err;
		char name[96];
		int rc = load(bad[i].json, &none, &p, &err);
		snprintf(name, sizeof(name), "bad profile %zu: %s", i, bad[i].msg);
		CHECK(name, rc < 0 && strstr(err.msg, bad[i].msg) && err.errnum == 0);
		if (rc < 0 && !strstr(err.msg, bad[i].msg))
			printf("    got: %s\n", err.msg);
		if (rc == 0)
			sc_profile_free(&p);
	}
}

static void test_basic(void)
{
	struct sc_profile p;
	cl_error err;
	const struct sc_rule *r;
	int rc = load("{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":38,"
	              "\"syscalls\":["
	              "{\"names\":[\"read\",\"write\"],\"action\":\"SCMP_ACT_ALLOW\"},"
	              "{\"name\":\"close\",\"action\":\"SCMP_ACT_ALLOW\"},"
	              "{\"names\":[\"mkdir\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":38},"
	              "{\"names\":[\"rmdir\"],\"action\":\"SCMP_ACT_ERRNO\"},"
	              "{\"names\":[\"kill\"],\"action\":\"SCMP_ACT_KILL\"},"
	              "{\"names\":[\"tkill\"],\"action\":\"SCMP_ACT_TRACE\",\"errnoRet\":7},"
	              "{\"names\":[\"nope1\",\"nope2\",\"nope1\"],\"action\":\"SCMP_ACT_ALLOW\"}"
	              "]}", &none, &p, &err);

	CHECK("basic profile loads", rc == 0);
	if (rc < 0) {
		printf("    %s\n", err.msg);
		return;
	}
	CHECK("defaultErrnoRet", p.default_action == SCMP_ACT_ERRNO(38));
	CHECK("names expand to rules", count(&p, "read") == 1 && count(&p, "write") == 1);
	CHECK("legacy name", count(&p, "close") == 1);
	CHECK("rule equal to the default is skipped", count(&p, "mkdir") == 0);
	CHECK("errnoRet defaults to EPERM", (r = find(&p, "rmdir")) && r->action == SCMP_ACT_ERRNO(EPERM));
	CHECK("SCMP_ACT_KILL is kill-thread", (r = find(&p, "kill")) && r->action == SCMP_ACT_KILL_THREAD);
	CHECK("TRACE takes errnoRet", (r = find(&p, "tkill")) && r->action == SCMP_ACT_TRACE(7));
	CHECK("unknown names listed once", p.unknown && strcmp(p.unknown, "nope1 nope2") == 0);
	CHECK("no arches = native only", p.n_arches == 0);
	CHECK("foreign ABIs killed", p.badarch_action == SCMP_ACT_KILL_PROCESS);
	sc_profile_free(&p);
}

static void test_args(void)
{
	struct sc_profile p;
	cl_error err;
	const struct sc_rule *r;
	int rc = load("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
	              "{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":["
	              "{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_EQ\"},"
	              "{\"index\":0,\"value\":2,\"op\":\"SCMP_CMP_EQ\"}]},"
	              "{\"names\":[\"ioctl\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":["
	              "{\"index\":0,\"value\":3,\"op\":\"SCMP_CMP_GT\"},"
	              "{\"index\":1,\"value\":4294967295,\"valueTwo\":21522,\"op\":\"SCMP_CMP_MASKED_EQ\"}]}"
	              "]}", &none, &p, &err);

	CHECK("args profile loads", rc == 0);
	if (rc < 0)
		return;
	CHECK("same arg twice: one rule per condition (OR)", count(&p, "socket") == 2 &&
	      find(&p, "socket")->n_conds == 1);
	r = find(&p, "ioctl");
	CHECK("distinct args: one rule (AND)", count(&p, "ioctl") == 1 && r->n_conds == 2);
	CHECK("MASKED_EQ: value is the mask, valueTwo the expected value",
	      r->conds[1].op == SCMP_CMP_MASKED_EQ && r->conds[1].arg == 1 &&
	      r->conds[1].v == 0xffffffffULL && r->conds[1].v2 == 21522);
	CHECK("GT", r->conds[0].op == SCMP_CMP_GT && r->conds[0].v == 3);
	sc_profile_free(&p);
}

static void test_filters(void)
{
	static const char *json = "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
		"{\"names\":[\"mount\"],\"action\":\"SCMP_ACT_ERRNO\",\"includes\":{\"caps\":[\"CAP_SYS_ADMIN\"]}},"
		"{\"names\":[\"chroot\"],\"action\":\"SCMP_ACT_ERRNO\",\"excludes\":{\"caps\":[\"CAP_SYS_ADMIN\"]}},"
		"{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ERRNO\",\"includes\":{\"arches\":[\"amd64\",\"arm64\"]}},"
		"{\"names\":[\"write\"],\"action\":\"SCMP_ACT_ERRNO\",\"includes\":{\"arches\":[\"s390x\"]}},"
		"{\"names\":[\"close\"],\"action\":\"SCMP_ACT_ERRNO\",\"excludes\":{\"arches\":[\"amd64\"]}},"
		"{\"names\":[\"open\"],\"action\":\"SCMP_ACT_ERRNO\",\"includes\":{\"minKernel\":\"2.6\"}},"
		"{\"names\":[\"openat\"],\"action\":\"SCMP_ACT_ERRNO\",\"includes\":{\"minKernel\":\"99.0\"}},"
		"{\"names\":[\"bpf\"],\"action\":\"SCMP_ACT_ERRNO\",\"includes\":{\"caps\":[\"CAP_SYS_ADMIN\",\"CAP_BPF\"]}}"
		"]}";
	struct sc_context admin = {.caps = 1ULL << 21 /* CAP_SYS_ADMIN */};
	struct sc_profile p;
	cl_error err;

	if (load(json, &none, &p, &err) < 0) {
		CHECK("filters profile loads", 0);
		return;
	}
	CHECK("includes.caps without the cap: skipped", count(&p, "mount") == 0);
	CHECK("excludes.caps without the cap: kept", count(&p, "chroot") == 1);
	CHECK("includes.arches with native: kept", count(&p, "read") == 1);
	CHECK("includes.arches without native: skipped", count(&p, "write") == 0);
	CHECK("excludes.arches with native: skipped", count(&p, "close") == 0);
	CHECK("minKernel met: kept", count(&p, "open") == 1);
	CHECK("minKernel not met: skipped", count(&p, "openat") == 0);
	sc_profile_free(&p);
	if (load(json, &admin, &p, &err) < 0)
		return;
	CHECK("includes.caps with the cap: kept", count(&p, "mount") == 1);
	CHECK("excludes.caps with the cap: skipped", count(&p, "chroot") == 0);
	CHECK("includes.caps needs all listed caps", count(&p, "bpf") == 0);
	sc_profile_free(&p);
}

static void test_arches(void)
{
	struct sc_profile p;
	cl_error err;

	if (load("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"archMap\":["
	         "{\"architecture\":\"SCMP_ARCH_AARCH64\",\"subArchitectures\":[\"SCMP_ARCH_ARM\"]},"
	         "{\"architecture\":\"SCMP_ARCH_X86_64\",\"subArchitectures\":[\"SCMP_ARCH_X86\",\"SCMP_ARCH_X32\"]},"
	         "{\"architecture\":\"SCMP_ARCH_LOONGARCH64\",\"subArchitectures\":null}]}",
	         &none, &p, &err) == 0) {
		CHECK("archMap: native entry and its sub-architectures only",
		      p.n_arches == 3 && p.arches[0] == SCMP_ARCH_X86_64 &&
		      p.arches[1] == SCMP_ARCH_X86 && p.arches[2] == SCMP_ARCH_X32);
		sc_profile_free(&p);
	} else {
		CHECK("archMap loads", 0);
	}
	if (load("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"SCMP_ARCH_X86_64\","
	         "\"SCMP_ARCH_AARCH64\"]}", &none, &p, &err) == 0) {
		CHECK("architectures used as given", p.n_arches == 2 && p.arches[1] == SCMP_ARCH_AARCH64);
		sc_profile_free(&p);
	}
	if (load("{\"ociVersion\":\"1.0.2\",\"linux\":{\"seccomp\":{\"defaultAction\":\"SCMP_ACT_LOG\","
	         "\"flags\":[\"SECCOMP_FILTER_FLAG_SPEC_ALLOW\"]}}}", &none, &p, &err) == 0) {
		CHECK("OCI config.json: linux.seccomp", p.default_action == SCMP_ACT_LOG &&
		      p.flags == SC_FLAG_SPEC_ALLOW);
		sc_profile_free(&p);
	} else {
		CHECK("OCI config.json loads", 0);
	}
}

static void test_default(void)
{
	struct sc_profile p;
	struct sc_context nested = {.allow_nested = true};
	cl_error err = {0};
	const struct sc_rule *r;
	struct sock_filter *f = NULL;
	size_t len = 0;

	if (sc_profile_default(&none, &p, &err) < 0) {
		CHECK("default profile builds", 0);
		return;
	}
	CHECK("default: unlisted calls get ENOSYS", p.default_action == SCMP_ACT_ERRNO(ENOSYS));
	CHECK("default: every rule has a reason", ({
		bool all = true;
		for (size_t i = 0; i < p.n_rules; i++)
			all &= p.rules[i].reason && *p.rules[i].reason;
		all; }));
	CHECK("default: unshare denied", (r = find(&p, "unshare")) && r->action == SCMP_ACT_ERRNO(EPERM));
	CHECK("default: clone3 ENOSYS", (r = find(&p, "clone3")) && r->action == SCMP_ACT_ERRNO(ENOSYS));
	CHECK("default: mount denied", (r = find(&p, "mount")) && r->action == SCMP_ACT_ERRNO(EPERM));
	CHECK("default: TIOCSTI on the low 32 bits", (r = find(&p, "ioctl")) &&
	      r->conds[0].op == SCMP_CMP_MASKED_EQ && r->conds[0].v == 0xffffffffULL);
	CHECK("default: ptrace allowed", (r = find(&p, "ptrace")) && r->action == SCMP_ACT_ALLOW);
	CHECK("default compiles", sc_compile(&p, &f, &len, &err) == 0 && len > 100 && len < 4096);
	free(f);
	sc_profile_free(&p);
	if (sc_profile_default(&nested, &p, &err) < 0)
		return;
	CHECK("allow_nested: unshare, clone3 allowed",
	      find(&p, "unshare")->action == SCMP_ACT_ALLOW &&
	      find(&p, "clone3")->action == SCMP_ACT_ALLOW && count(&p, "clone") == 1);
	sc_profile_free(&p);
}

/* Every rule of the resolved default profile, run through the compiled
 * program: unconditional rules must decide exactly their action. */
static void test_default_program(bool nested)
{
	struct sc_context ctx = {.allow_nested = nested};
	struct sc_profile p;
	cl_error err = {0};
	struct sock_filter *f = NULL;
	size_t len = 0, wrong = 0, checked = 0;
	char name[64];

	if (sc_profile_default(&ctx, &p, &err) < 0 || sc_compile(&p, &f, &len, &err) < 0) {
		CHECK("default compiles for the interpreter", 0);
		sc_profile_free(&p);
		return;
	}
	for (size_t i = 0; i < p.n_rules; i++) {
		struct seccomp_data d = {.nr = seccomp_syscall_resolve_name(p.rules[i].name),
		                         .arch = seccomp_arch_native()};
		uint32_t got;
		if (p.rules[i].n_conds)
			continue;
		checked++;
		if (sc_bpf_run(f, len, &d, &got) < 0 || got != p.rules[i].action) {
			printf("    %s: 0x%08x, rule says 0x%08x\n", p.rules[i].name, got, p.rules[i].action);
			wrong++;
		}
	}
	snprintf(name, sizeof(name), "compiled default decides each plain rule (%zu)%s", checked,
	         nested ? ", allow_nested" : "");
	CHECK(name, wrong == 0 && checked > 300);
	CHECK("self-check passes", sc_profile_default_check(f, len, &ctx, &err) == 0);
	{
		/* The program compiled into the binary at build time is this one. */
		const struct sc_builtin *b = nested ? &sc_default_bpf_nested : &sc_default_bpf;
		CHECK(nested ? "built-in program (allow_nested) = compiled table"
		             : "built-in program = compiled table",
		      b->len == len && memcmp(b->filter, f, len * sizeof(*f)) == 0);
	}
	/* A program that allows everything must fail the self-check. */
	{
		struct sock_filter all[1] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
		CHECK("self-check rejects an allow-all program",
		      sc_profile_default_check(all, 1, &ctx, &err) < 0 && strstr(err.msg, "wrongly"));
	}
	free(f);
	sc_profile_free(&p);
}

static void test_docker_program(void)
{
	FILE *fp = fopen("tests/fixtures/docker-default-seccomp.json", "r");
	static char buf[1 << 20];
	size_t n = fp ? fread(buf, 1, sizeof(buf), fp) : 0;
	struct sc_profile p;
	cl_error err = {0};
	struct sock_filter *f = NULL;
	size_t len = 0;
	static const struct { const char *name; uint64_t a0; uint32_t arch, want; } rows[] = {
		{"unshare", 0, SCMP_ARCH_X86_64, SECCOMP_RET_ERRNO | EPERM},
		{"clone3", 0, SCMP_ARCH_X86_64, SECCOMP_RET_ERRNO | ENOSYS},
		{"socket", 40, SCMP_ARCH_X86_64, SECCOMP_RET_ERRNO | EPERM},
		{"socket", 1, SCMP_ARCH_X86_64, SECCOMP_RET_ALLOW},
		{"personality", 0x0040000, SCMP_ARCH_X86_64, SECCOMP_RET_ERRNO | EPERM},
		{"read", 0, SCMP_ARCH_X86_64, SECCOMP_RET_ALLOW},
		{"mount", 0, SCMP_ARCH_X86_64, SECCOMP_RET_ERRNO | EPERM},
		{"getpid", 0, SCMP_ARCH_X86, SECCOMP_RET_ALLOW},  /* archMap: i386 allowed */
	};

	if (fp)
		fclose(fp);
	if (!n || sc_profile_from_json(buf, n, "docker", &none, &p, &err) < 0 ||
	    sc_compile(&p, &f, &len, &err) < 0) {
		CHECK("Docker's profile loads and compiles", 0);
		printf("    %s\n", err.msg);
		return;
	}
	CHECK("Docker's profile loads and compiles", len > 100);
	for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
		struct seccomp_data d = {.arch = rows[i].arch, .args = {rows[i].a0}};
		uint32_t got = 0;
		char name[96];
		d.nr = seccomp_syscall_resolve_name_arch(rows[i].arch, rows[i].name);
		snprintf(name, sizeof(name), "Docker's profile: %s(0x%llx)", rows[i].name,
		         (unsigned long long)rows[i].a0);
		CHECK(name, sc_bpf_run(f, len, &d, &got) == 0 && got == rows[i].want);
	}
	free(f);
	sc_profile_free(&p);
}

/* valgrind does not implement seccomp(2), so under it libseccomp's probe
 * of the kernel's API level fails and it refuses actions the kernel has
 * (KILL_PROCESS). tests/lint/valgrind.sh asks for the level outside
 * valgrind (--api-level) and passes it in CL_TEST_SECCOMP_API. */
static int api_level(int argc, char **argv)
{
	const char *api = getenv("CL_TEST_SECCOMP_API");

	if (argc > 1 && strcmp(argv[1], "--api-level") == 0) {
		printf("%u\n", seccomp_api_get());
		return 1;
	}
	if (api)
		CHECK("libseccomp takes CL_TEST_SECCOMP_API",
		      seccomp_api_set((unsigned)strtoul(api, NULL, 10)) == 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (api_level(argc, argv))
		return 0;
	test_bad();
	test_basic();
	test_args();
	test_filters();
	test_arches();
	test_default();
	test_default_program(false);
	test_default_program(true);
	test_docker_program();
	UNIT_MAIN_END;
}
