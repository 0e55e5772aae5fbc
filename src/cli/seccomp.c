/* `cloister seccomp compile PROFILE -o FILE.bpf` and `seccomp show PROFILE`:
 * compile a profile to raw cBPF (bwrap --seccomp format) or print it resolved. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/policy/caps.h"
#include "src/cli/seccomp.h"
#include "seccomp/profile.h"
#include "seccomp/seccomp.h"

#define EXIT_SETUP 125

static void usage(FILE *f)
{
	fputs("usage: cloister seccomp compile PROFILE -o FILE.bpf [--allow-nested] [--cap-add CAP]\n"
	      "       cloister seccomp show PROFILE [--json] [--allow-nested] [--cap-add CAP]\n"
	      "PROFILE is `default` or a Docker/OCI seccomp JSON file. The program is\n"
	      "resolved for a sandbox with the given options (as `cloister run` would).\n", f);
}

struct opts {
	const char *profile, *out;
	bool json;
	struct sc_context ctx;
};

static int parse(int argc, char **argv, bool compile, struct opts *o, cl_error *err)
{
	static const struct option lo[] = {
		{"output", required_argument, NULL, 'o'}, {"json", no_argument, NULL, 'j'},
		{"allow-nested", no_argument, NULL, 'n'}, {"cap-add", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	uint64_t m;
	int c;

	/* 0, not 1: glibc then drops all of a previous call's state, including
	 * its place inside a bundle of short options ("-wX"), which otherwise
	 * points into that call's argv (a use after free when it is gone). */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!compile)
				return cl_fail(err, 0, "seccomp show: -o is for `seccomp compile`");
			o->out = optarg;
			break;
		case 'j':
			if (compile)
				return cl_fail(err, 0, "seccomp compile: --json is for `seccomp show`");
			o->json = true;
			break;
		case 'n': o->ctx.allow_nested = true; break;
		case 'c':
			if (cl_caps_parse(optarg, &m) < 0)
				return cl_fail(err, 0, "--cap-add '%s': unknown capability", optarg);
			o->ctx.caps |= m;
			break;
		case 'h': return 1;
		default:
			return cl_fail(err, 0, "seccomp %s: unknown or incomplete option '%s'",
			               argv[0], argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return cl_fail(err, 0, "seccomp %s: expected one PROFILE (default or FILE.json)",
		               argv[0]);
	o->profile = argv[optind];
	if (compile && !o->out)
		return cl_fail(err, 0, "seccomp compile: -o FILE.bpf is required");
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int compile(const struct opts *o, cl_error *err)
{
	struct sc_program prog = {0};
	size_t len;
	int fd, rc;

	if (strcmp(o->profile, "unconfined") == 0)
		return cl_fail(err, 0, "seccomp compile: `unconfined` has no program to compile");
	rc = sc_build(o->profile, &o->ctx, &prog, err);
	if (rc < 0)
		return rc;
	if (prog.flags)
		fprintf(stderr, "cloister: warning: %s: the profile's flags cannot be stored in a "
		        "raw BPF file; they are dropped\n", o->profile);
	len = prog.len * sizeof(*prog.filter);
	fd = strcmp(o->out, "-") == 0 ? dup(1)
	     : open(o->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = cl_fail_errno(err, "seccomp compile: opening %s", o->out);
	} else {
		rc = write_all(fd, prog.filter, len) < 0 ? cl_fail_errno(err, "writing %s", o->out) : 0;
		if (close(fd) < 0 && rc == 0)
			rc = cl_fail_errno(err, "writing %s", o->out);
		if (rc < 0 && strcmp(o->out, "-"))
			unlink(o->out);
	}
	sc_program_free(&prog);
	return rc;
}

/* Prints a condition the way a reader thinks of it. */
static void cond_text(const struct sc_cond *c, char *buf, size_t len)
{
	static const char *const sym[] = {"", "!=", "<", "<=", "==", ">=", ">", ""};
	const char *name = sc_op_name(c->op);

	/* The catch-all "otherwise" test of the default profile. */
	if (c->op == SCMP_CMP_GE && c->v == 0)
		snprintf(buf, len, "otherwise (arg%u >= 0)", c->arg);
	else if (strcmp(name, "SCMP_CMP_MASKED_EQ") == 0)
		snprintf(buf, len, "arg%u & 0x%llx == 0x%llx", c->arg, (unsigned long long)c->v,
		         (unsigned long long)c->v2);
	else
		snprintf(buf, len, "arg%u %s 0x%llx", c->arg, c->op > 0 && c->op < 7 ? sym[c->op] : "?",
		         (unsigned long long)c->v);
}

static void show_text(const char *spec, const struct sc_profile *p)
{
	char ab[64], cb[96];

	printf("profile: %s\n", spec);
	printf("default action: %s\n", sc_action_name(p->default_action, ab, sizeof(ab)));
	printf("other architectures (i386, x32, ...): %s\n",
	       sc_action_name(p->badarch_action, ab, sizeof(ab)));
	printf("architectures: %s", p->n_arches ? "" : "native only");
	for (size_t i = 0; i < p->n_arches; i++)
		printf("%s%s", i ? " " : "", sc_arch_name(p->arches[i]));
	printf("\nflags:%s%s%s%s\n", p->flags ? "" : " none",
	       p->flags & SC_FLAG_LOG ? " SECCOMP_FILTER_FLAG_LOG" : "",
	       p->flags & SC_FLAG_SPEC_ALLOW ? " SECCOMP_FILTER_FLAG_SPEC_ALLOW" : "",
	       p->flags & SC_FLAG_TSYNC ? " SECCOMP_FILTER_FLAG_TSYNC" : "");
	printf("rules: %zu\n", p->n_rules);
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct sc_rule *r = &p->rules[i];
		printf("  %-22s %-28s", r->name, sc_action_name(r->action, ab, sizeof(ab)));
		for (unsigned c = 0; c < r->n_conds; c++) {
			cond_text(&r->conds[c], cb, sizeof(cb));
			printf("%s%s", c ? " and " : strncmp(cb, "otherwise", 9) ? " if " : " ", cb);
		}
		if (r->reason)
			printf("  # %s", r->reason);
		putchar('\n');
	}
	if (p->unknown)
		printf("skipped (unknown to libseccomp): %s\n", p->unknown);
}

static int show_json(const struct sc_profile *p)
{
	json_t *o = sc_profile_to_json(p);
	char *s = o ? json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;

	json_decref(o);
	if (!s)
		return -ENOMEM;
	puts(s);
	free(s);
	return 0;
}

static int show(const struct opts *o, cl_error *err)
{
	struct sc_profile p = {.default_action = SCMP_ACT_ALLOW, .badarch_action = SCMP_ACT_ALLOW};
	int rc = 0;

	/* unconfined: no filter, shown as the profile that allows everything. */
	if (strcmp(o->profile, "unconfined") != 0)
		rc = sc_profile_load(o->profile, &o->ctx, &p, err);
	if (rc < 0)
		return rc;
	if (p.unknown && o->json)
		fprintf(stderr, "cloister: warning: %s: skipping syscalls unknown to libseccomp: %s\n",
		        o->profile, p.unknown);
	if (o->json)
		rc = show_json(&p) < 0 ? cl_fail(err, ENOMEM, "printing the profile") : 0;
	else
		show_text(o->profile, &p);
	sc_profile_free(&p);
	return rc;
}

int sc_cli_main(int argc, char **argv)
{
	struct opts o = {0};
	cl_error err = {0};
	bool is_compile;
	int rc;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_SETUP : 0;
	}
	if (strcmp(argv[1], "compile") && strcmp(argv[1], "show")) {
		fprintf(stderr, "cloister: seccomp: unknown command '%s' (expected compile or show)\n",
		        argv[1]);
		return EXIT_SETUP;
	}
	is_compile = argv[1][0] == 'c';
	rc = parse(argc - 1, argv + 1, is_compile, &o, &err);
	if (rc > 0) {
		usage(stdout);
		return 0;
	}
	if (rc == 0)
		rc = is_compile ? compile(&o, &err) : show(&o, &err);
	if (rc < 0) {
		cl_error_print(&err);
		return EXIT_SETUP;
	}
	return 0;
}
