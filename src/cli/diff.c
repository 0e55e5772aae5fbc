/* `cloister diff apply BUNDLE TARGET [--check]`, `cloister diff show
 * BUNDLE [--stat]` (the reviewer's and the integrator's side of a bundle)
 * and `cloister diff capture KEPT FILE` (after a failed capture).
 * Exit codes: 0 done, 1 conflicts, 125 bad input or a host failure. */
#define _GNU_SOURCE
#include "src/cli/workspace.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/util/error.h"
#include "src/workspace/apply.h"
#include "src/workspace/hunk.h"
#include "src/workspace/patch.h"
#include "src/workspace/run.h"

#define EXIT_SETUP 125

static void usage(FILE *f)
{
	fputs("usage: cloister diff apply BUNDLE TARGET [--check] [--refuse-outside-links]\n"
	      "       cloister diff show BUNDLE [--stat]\n"
	      "       cloister diff capture KEPT FILE\n", f);
}

static int cmd_apply(int argc, char **argv)
{
	const char *files[2] = {NULL, NULL};
	bool check = false, no_outside = false;
	int n = 0;
	cl_error err = {0};
	struct ws_bundle b;
	enum ws_apply_result r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--check"))
			check = true;
		else if (!strcmp(argv[i], "--refuse-outside-links"))
			no_outside = true;
		else if (argv[i][0] == '-' && argv[i][1])
			return fprintf(stderr, "cloister: diff apply: unknown option '%s'\n", argv[i]), EXIT_SETUP;
		else if (n < 2)
			files[n++] = argv[i];
		else
			return usage(stderr), EXIT_SETUP;
	}
	if (n != 2)
		return usage(stderr), EXIT_SETUP;
	if (ws_bundle_load(files[0], &b, &err) < 0) {
		cl_wrap(&err, "diff apply");
		cl_error_print(&err);
		return EXIT_SETUP;
	}
	r = ws_apply_links(&b, files[1], check, no_outside, stderr, &err);
	if (r == WS_APPLIED)
		printf("%s %zu patch%s %s %s\n", check ? "checked:" : "applied", b.n, b.n == 1 ? "" : "es",
		       check ? "apply cleanly to" : "to", files[1]);
	else if (r == WS_CONFLICT)
		fprintf(stderr, "cloister: diff apply: %s does not match the bundle's base for the paths above; "
		        "nothing was written\n", files[1]);
	else {
		cl_wrap(&err, "diff apply");
		cl_error_print(&err);
		if (r == WS_IO_FAILED)
			fputs("cloister: diff apply: every change made was undone\n", stderr);
	}
	ws_bundle_free(&b);
	return r == WS_APPLIED ? 0 : r == WS_CONFLICT ? 1 : EXIT_SETUP;
}

struct colors {
	const char *meta, *frag, *old, *new_, *reset;
	bool tty;
};

/* Rendered from the parsed patch, line by line: the bytes apply works
 * from, nothing the parser did not account for. */
static void show_patch(const struct ws_patch *p, const struct colors *c)
{
	for (size_t i = 0; i < p->n_lines; i++) {
		const struct ws_line *l = &p->lines[i];
		const char *col = l->kind == WS_L_META ? c->meta : l->kind == WS_L_HUNK ? c->frag :
		                  l->kind == WS_L_DEL ? c->old : l->kind == WS_L_ADD ? c->new_ : "";
		fputs(col, stdout);
		/* The sandbox wrote this text: on a terminal no control byte
		 * (escape sequences) reaches it raw. */
		for (size_t k = 0; k < l->n; k++)
			putchar(c->tty && ((unsigned char)l->s[k] < 0x20 || l->s[k] == 0x7f) && l->s[k] != '\t' ? '?'
			                                                                                  : l->s[k]);
		printf("%s\n", *col ? c->reset : "");
	}
}

/* A symlink pointing out of the tree is carried (git does) but flagged,
 * on stderr so that the patch text stays what apply reads. */
static void flag_outside_link(const struct ws_patch *p)
{
	char *t = NULL, why[256];
	size_t n = 0;

	if (p->op != WS_OP_ADD || !p->new_link || ws_patch_result(p, "", 0, &t, &n, why, sizeof(why)) != 0)
		return;
	/* The target is the sandbox's text: no control byte reaches a terminal. */
	for (size_t k = 0; k < n; k++)
		if ((unsigned char)t[k] < 0x20 || t[k] == 0x7f)
			t[k] = '?';
	if (ws_link_leaves_tree(p->name, t, n))
		fprintf(stderr, "cloister: diff show: %s is a symlink that points out of the tree (to %.*s); "
		        "`diff apply --refuse-outside-links` refuses it\n", p->path, (int)n, t);
	free(t);
}

static void show_stat(const struct ws_bundle *b, const struct colors *c)
{
	long files = 0, ins = 0, dels = 0;
	size_t width = 0;

	for (size_t i = 0; i < b->n; i++)
		if (strlen(b->patches[i].path) > width)
			width = strlen(b->patches[i].path);
	for (size_t i = 0; i < b->n; i++) {
		const struct ws_patch *p = &b->patches[i];
		files++;
		if (p->binary) {
			printf(" %-*s | Bin %s%zu bytes\n", (int)width, p->path, p->op == WS_OP_DELETE ? "-> " : "",
			       p->bin_len);
			continue;
		}
		ins += p->added;
		dels += p->removed;
		printf(" %-*s | %ld %s", (int)width, p->path, p->added + p->removed, c->new_);
		for (long k = 0; k < p->added && k < 50; k++)
			putchar('+');
		printf("%s%s", c->reset, c->old);
		for (long k = 0; k < p->removed && k < 50; k++)
			putchar('-');
		printf("%s\n", c->reset);
	}
	printf(" %ld file%s changed, %ld insertion%s(+), %ld deletion%s(-)\n", files, files == 1 ? "" : "s", ins,
	       ins == 1 ? "" : "s", dels, dels == 1 ? "" : "s");
}

static int cmd_show(int argc, char **argv)
{
	const char *file = NULL;
	bool stat = false;
	cl_error err = {0};
	struct ws_bundle b;
	struct colors plain = {"", "", "", "", "", false};
	struct colors tty = {"\033[1m", "\033[36m", "\033[31m", "\033[32m", "\033[m", true};

	for (int k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "--stat"))
			stat = true;
		else if (!file && (argv[k][0] != '-' || !argv[k][1]))
			file = argv[k];
		else
			return usage(stderr), EXIT_SETUP;
	}
	if (!file)
		return usage(stderr), EXIT_SETUP;
	if (ws_bundle_load(file, &b, &err) < 0) {
		cl_wrap(&err, "diff show");
		cl_error_print(&err);
		return EXIT_SETUP;
	}
	const struct colors *c = isatty(1) ? &tty : &plain;
	if (stat)
		show_stat(&b, c);
	else
		for (size_t i = 0; i < b.n; i++)
			show_patch(&b.patches[i], c);
	for (size_t i = 0; i < b.n; i++)
		flag_outside_link(&b.patches[i]);
	ws_bundle_free(&b);
	return 0;
}

/* The changes a failed capture kept (named in its error) into FILE. */
static int cmd_capture(int argc, char **argv)
{
	cl_error err = {0};

	if (argc != 3 || argv[1][0] == '-' || argv[2][0] == '-')
		return usage(stderr), EXIT_SETUP;
	if (ws_kept_capture(argv[1], argv[2], &err) < 0) {
		cl_wrap(&err, "diff capture");
		cl_error_print(&err);
		return EXIT_SETUP;
	}
	printf("captured %s into %s\n", argv[1], argv[2]);
	return 0;
}

int ws_cli_diff_main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "capture"))
		return cmd_capture(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "apply"))
		return cmd_apply(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "show"))
		return cmd_show(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return usage(stdout), 0;
	usage(stderr);
	return EXIT_SETUP;
}
