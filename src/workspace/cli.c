/* `cloister diff apply BUNDLE TARGET [--check]` and `cloister diff show
 * BUNDLE [--stat]`: the reviewer's and the integrator's side of a bundle.
 * Exit codes: 0 done, 1 conflicts, 125 bad input or a host failure. */
#define _GNU_SOURCE
#include "src/workspace/cli.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "src/error.h"
#include "src/workspace/apply.h"
#include "src/workspace/patch.h"

#define EXIT_SETUP 125

static void usage(FILE *f)
{
	fputs("usage: cloister diff apply BUNDLE TARGET [--check]\n"
	      "       cloister diff show BUNDLE [--stat]\n", f);
}

static int cmd_apply(int argc, char **argv)
{
	const char *files[2] = {NULL, NULL};
	bool check = false;
	int n = 0;
	cl_error err = {0};
	json_t *b;
	enum ws_apply_result r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--check"))
			check = true;
		else if (argv[i][0] == '-' && argv[i][1])
			return fprintf(stderr, "cloister: diff apply: unknown option '%s'\n", argv[i]), EXIT_SETUP;
		else if (n < 2)
			files[n++] = argv[i];
		else
			return usage(stderr), EXIT_SETUP;
	}
	if (n != 2)
		return usage(stderr), EXIT_SETUP;
	if (!(b = ws_bundle_load(files[0], &err))) {
		cl_wrap(&err, "diff apply");
		cl_error_print(&err);
		return EXIT_SETUP;
	}
	r = ws_apply(b, files[1], check, stderr, &err);
	if (r == WS_APPLIED)
		printf("%s %zu patch%s %s %s\n", check ? "checked:" : "applied", json_array_size(json_object_get(b, "patches")),
		       json_array_size(json_object_get(b, "patches")) == 1 ? "" : "es",
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
	json_decref(b);
	return r == WS_APPLIED ? 0 : r == WS_CONFLICT ? 1 : EXIT_SETUP;
}

struct colors {
	const char *meta, *frag, *old, *new_, *reset;
	bool tty;
};

static void show_diff(const char *d, const struct colors *c)
{
	for (const char *l = d; *l;) {
		size_t n = strcspn(l, "\n");
		const char *col = "";
		if (!strncmp(l, "diff --git", 10) || !strncmp(l, "index ", 6) || !strncmp(l, "--- ", 4) ||
		    !strncmp(l, "+++ ", 4) || !strncmp(l, "new file", 8) || !strncmp(l, "deleted file", 12) ||
		    !strncmp(l, "old mode", 8) || !strncmp(l, "new mode", 8))
			col = c->meta;
		else if (*l == '@')
			col = c->frag;
		else if (*l == '-')
			col = c->old;
		else if (*l == '+')
			col = c->new_;
		fputs(col, stdout);
		/* The sandbox wrote this text: on a terminal no control byte
		 * (escape sequences) reaches it raw. */
		for (size_t k = 0; k < n; k++)
			putchar(c->tty && ((unsigned char)l[k] < 0x20 || l[k] == 0x7f) && l[k] != '\t' ? '?' : l[k]);
		printf("%s\n", *col ? c->reset : "");
		l += n + (l[n] == '\n');
	}
}

/* Lines added and removed, counted from the hunks. */
static void count(const char *d, long *add, long *del)
{
	bool in_hunks = false;

	*add = *del = 0;
	for (const char *l = d; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n')) {
		if (*l == '@')
			in_hunks = true;
		else if (in_hunks && *l == '+')
			(*add)++;
		else if (in_hunks && *l == '-')
			(*del)++;
	}
}

static void show_stat(const json_t *patches, const struct colors *c)
{
	long files = 0, ins = 0, dels = 0;
	size_t i, width = 0;
	json_t *p;

	json_array_foreach(patches, i, p)
		if (strlen(json_string_value(json_object_get(p, "path"))) > width)
			width = strlen(json_string_value(json_object_get(p, "path")));
	json_array_foreach(patches, i, p) {
		const char *path = json_string_value(json_object_get(p, "path"));
		const char *bc = json_string_value(json_object_get(p, "binaryContent"));
		const char *diff = json_string_value(json_object_get(p, "diff"));
		long a, d;
		files++;
		if (bc || strstr(diff, "\nBinary files ")) {
			size_t len = bc ? strlen(bc) / 4 * 3 - (strlen(bc) && bc[strlen(bc) - 1] == '=') -
			                  (strlen(bc) > 1 && bc[strlen(bc) - 2] == '=') : 0;
			printf(" %-*s | Bin %s%zu bytes\n", (int)width, path,
			       !strcmp(json_string_value(json_object_get(p, "operation")), "delete") ? "-> " : "",
			       len);
			continue;
		}
		count(diff, &a, &d);
		ins += a;
		dels += d;
		printf(" %-*s | %ld %s", (int)width, path, a + d, c->new_);
		for (long k = 0; k < a && k < 50; k++)
			putchar('+');
		printf("%s%s", c->reset, c->old);
		for (long k = 0; k < d && k < 50; k++)
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
	json_t *b, *p;
	size_t i;
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
	if (!(b = ws_bundle_load(file, &err))) {
		cl_wrap(&err, "diff show");
		cl_error_print(&err);
		return EXIT_SETUP;
	}
	const struct colors *c = isatty(1) ? &tty : &plain;
	if (stat)
		show_stat(json_object_get(b, "patches"), c);
	else
		json_array_foreach(json_object_get(b, "patches"), i, p)
			show_diff(json_string_value(json_object_get(p, "diff")), c);
	json_decref(b);
	return 0;
}

int ws_cli_diff_main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "apply"))
		return cmd_apply(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "show"))
		return cmd_show(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return usage(stdout), 0;
	usage(stderr);
	return EXIT_SETUP;
}
