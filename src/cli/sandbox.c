/* Front-ends of the sandbox lifecycle: read the spec, run it, print the
 * result JSON on stdout or one error (JSON with --json) on stderr. */
#define _GNU_SOURCE
#include "src/cli/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/util/cleanup.h"
#include "src/util/fdio.h"
#include "src/policy/parse.h"
#include "src/sandbox/bundle.h"
#include "src/sandbox/run.h"
#include "src/sandbox/spec.h"
#include "src/state/store.h"

#define SPEC_MAX (16u * 1024 * 1024)

static void print_error(const struct sb_error *e, bool json, const struct sb_secrets *secrets)
{
	json_t *j = sb_error_to_json(e);
	cl_autofree char *text = NULL;

	if (json) {
		text = sb_dumps_scrubbed(secrets, j);
		fprintf(stderr, "%s\n", text ? text : "{\"code\":\"SANDBOX_EXECUTION_FAILED\"}");
	} else {
		char line[CL_ERROR_MSG_MAX + 160];
		cl_error_format(&e->base, line, sizeof(line));
		text = sb_scrub(secrets, line);
		fprintf(stderr, "cloister: %s: %s\n", sb_code_name(e->code), text ? text : "");
	}
	json_decref(j);
}

/* The result on stdout, with write(2) (not stdio: a failure is reported
 * here, once, and nothing is left buffered for exit to retry); -errno when
 * it could not all be written (the caller then has no result, and must
 * not be told the run succeeded). */
static int print_json(const json_t *j, const struct sb_secrets *secrets)
{
	cl_autofree char *text = sb_dumps_scrubbed(secrets, j);
	int rc;

	if (!text)
		return -ENOMEM;
	fflush(stdout);   /* anything stdio holds goes first */
	rc = cl_write_all(STDOUT_FILENO, text, strlen(text));
	return rc < 0 ? rc : cl_write_all(STDOUT_FILENO, "\n", 1);
}

static void sandbox_usage(FILE *f)
{
	fputs("usage: cloister sandbox run --spec FILE|- [--json] [--progress-fd N] [--dry-run]\n"
	      "                            [--runtime auto|native|docker|codeplane] [--host-root]\n"
	      "  Runs a Smithers-shaped sandbox spec (see docs/spec.md); the result JSON goes to\n"
	      "  stdout, errors to stderr (one JSON line with --json). A root caller's sandbox\n"
	      "  runs as an unprivileged host id unless --host-root (docs/security.md).\n", f);
}

static int read_spec(const char *path, char **text, size_t *len, struct sb_error *e)
{
	cl_autoclose int fd = strcmp(path, "-") == 0 ? dup(0) : open(path, O_RDONLY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return sb_fail(e, SB_INVALID_INPUT, errno, NULL, "reading the spec %s", path);
	rc = cl_read_all(fd, SPEC_MAX, text, len);
	if (rc < 0)
		return sb_fail(e, SB_INVALID_INPUT, -rc, NULL, "reading the spec %s", path);
	return 0;
}

static int sandbox_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"spec", required_argument, NULL, 's'}, {"json", no_argument, NULL, 'j'},
		{"progress-fd", required_argument, NULL, 'p'}, {"dry-run", no_argument, NULL, 'n'},
		{"runtime", required_argument, NULL, 'r'}, {"host-root", no_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
	};
	const char *runtime = NULL;
	bool host_root = false;
	struct sb_run_opts o = {.progress_fd = -1};
	struct sb_secrets secrets = {0};
	struct sb_error e = {0};
	struct sb_spec s;
	struct st_store *store = NULL;
	struct sb_store hooks;
	const char *spec_path = NULL;
	cl_autofree char *text = NULL;
	json_t *result = NULL;
	bool json = false;
	size_t len;
	int c, rc, r, code = 125;
	uint64_t fd;

	opterr = 0;
	/* 0, not 1: glibc then drops all of a previous call's state, including
	 * its place inside a bundle of short options ("-wX"), which otherwise
	 * points into that call's argv (a use after free when it is gone). */
	optind = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 's': spec_path = optarg; break;
		case 'j': json = true; break;
		case 'n': o.dry_run = true; break;
		case 'r': runtime = optarg; break;
		case 'R': host_root = true; break;
		case 'p':
			if (cl_parse_u64(optarg, 0, 1 << 20, &fd) < 0) {
				fprintf(stderr, "cloister: --progress-fd '%s': expected a file descriptor number\n", optarg);
				return 125;
			}
			o.progress_fd = (int)fd;
			break;
		case 'h': sandbox_usage(stdout); return 0;
		default:
			fprintf(stderr, "cloister: sandbox run: unknown option '%s' (see cloister sandbox run --help)\n",
			        argv[optind - 1]);
			return 125;
		}
	}
	if (!spec_path || optind != argc) {
		sandbox_usage(stderr);
		return 125;
	}
	rc = read_spec(spec_path, &text, &len, &e);
	if (rc == 0)
		rc = sb_spec_parse(text, len, &s, &e);
	if (rc == 0)
		s.host_root = host_root;
	if (rc == 0 && runtime && sb_spec_set_runtime(&s, runtime) < 0) {
		rc = sb_fail(&e, SB_INVALID_INPUT, 0, json_pack("{s:s}", "runtime", runtime),
		             "Unsupported sandbox runtime: %s", runtime);
		sb_spec_free(&s);
	}
	if (rc < 0) {
		print_error(&e, json, NULL);
		sb_error_clear(&e);
		return 125;
	}
	if (!o.dry_run && st_store_open(s.root_dir, &store, &e) < 0) {
		sb_collect_secrets(&s, &secrets);
		print_error(&e, json, &secrets);
		goto out;
	}
	if (store) {
		st_store_hooks(store, &hooks);
		o.store = &hooks;
	}
	rc = sb_run(&s, &o, &secrets, &result, &code, &e);
	if (result && (r = print_json(result, &secrets)) < 0 && rc == 0) {
		/* The run is over and recorded; only its report was lost. */
		rc = sb_fail(&e, SB_EXECUTION_FAILED, -r, NULL, "writing the result JSON to stdout");
		if (code == 0)
			code = 1;
	}
	if (rc < 0)
		print_error(&e, json, &secrets);
out:
	if (result)
		json_decref(result);
	st_store_close(store);
	sb_spec_free(&s);
	sb_secrets_free(&secrets);
	sb_error_clear(&e);
	return code;
}

int sb_cli_sandbox_main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "run") == 0)
		return sandbox_run(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		sandbox_usage(stdout);
		return 0;
	}
	sandbox_usage(stderr);
	return 125;
}

int sb_cli_bundle_main(int argc, char **argv)
{
	struct sb_error e = {0};
	struct sb_bundle b;
	const char *dir = NULL;
	bool json = false;
	char abs[4096];
	int rc;

	if (argc < 2 || strcmp(argv[1], "validate") != 0) {
		fputs("usage: cloister bundle validate DIR [--json]\n", argc < 2 ? stderr : stdout);
		return argc >= 2 && strcmp(argv[1], "--help") == 0 ? 0 : 125;
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (!dir && argv[i][0] != '-')
			dir = argv[i];
		else {
			fprintf(stderr, "cloister: bundle validate: unexpected argument '%s'\n", argv[i]);
			return 125;
		}
	}
	if (!dir) {
		fputs("usage: cloister bundle validate DIR [--json]\n", stderr);
		return 125;
	}
	/* Relative names are taken from the current directory, lexically. */
	if (dir[0] != '/') {
		char cwd[2048];
		if (!getcwd(cwd, sizeof(cwd))) {
			perror("cloister: bundle validate: getcwd");
			return 125;
		}
		snprintf(abs, sizeof(abs), "%s/%s", cwd, dir);
	} else {
		snprintf(abs, sizeof(abs), "%s", dir);
	}
	{
		char norm[4096];
		if (sb_path_normalize(abs, norm, sizeof(norm)) == 0)
			memcpy(abs, norm, sizeof(abs));
	}
	rc = sb_bundle_validate(abs, &b, &e);
	if (rc < 0) {
		print_error(&e, json, NULL);
		sb_error_clear(&e);
		return 125;
	}
	if (json) {
		json_t *j = sb_bundle_to_json(&b, abs);
		print_json(j, NULL);
		json_decref(j);
	} else {
		printf("%s: valid bundle, status %s, %llu bytes, %zu patch file(s)%s\n", abs, b.status,
		       (unsigned long long)b.size_bytes, b.n_patch_files, b.has_logs ? ", stream log" : "");
	}
	sb_bundle_free(&b);
	return 0;
}
