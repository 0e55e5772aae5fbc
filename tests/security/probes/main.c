/* Escape probe runner: `escprobe list` names every probe with its family
 * and control; `escprobe NAME [key=value...]` runs one attack. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "probe.h"

static const struct family *const families[] = {
	&fam_term, &fam_proc, &fam_files, &fam_state,
	&fam_kernel, &fam_priv, &fam_net, &fam_res, &fam_term_helper,
};
static const char *const ctl_names[] = {"host", "root", "info", "none"};

static int verdict(int code, const char *tag, const char *fmt, va_list ap)
{
	fputs(tag, stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	return code;
}
int blocked(const char *fmt, ...)
{
	va_list ap; va_start(ap, fmt);
	int r = verdict(P_BLOCKED, "blocked: ", fmt, ap);
	va_end(ap); return r;
}
int escaped(const char *fmt, ...)
{
	va_list ap; va_start(ap, fmt);
	int r = verdict(P_ESCAPED, "ESCAPED: ", fmt, ap);
	va_end(ap); return r;
}
int broken(const char *fmt, ...)
{
	va_list ap; va_start(ap, fmt);
	int r = verdict(P_BROKEN, "probe error: ", fmt, ap);
	va_end(ap); return r;
}
const char *ename(int e)
{
	const char *n = e ? strerrorname_np(e) : "OK";
	return n ? n : "?";
}
int gate(const char *what, long rc, int err, const char *denied)
{
	char list[128];
	if (rc >= 0)
		return escaped("%s succeeded", what);
	snprintf(list, sizeof(list), ",%s,", denied);
	char want[40];
	snprintf(want, sizeof(want), ",%s,", ename(err));
	if (strstr(list, want))
		return blocked("%s: %s", what, ename(err));
	return escaped("%s got past the permission check (%s)", what, ename(err));
}

static int parse_ctx(struct ctx *c, int argc, char **argv)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	for (int i = 0; i < argc; i++) {
		char *v = strchr(argv[i], '=');
		if (!v) return -1;
		*v++ = 0;
		const char *k = argv[i];
		if (!strcmp(k, "pid")) c->pid = atoi(v);
		else if (!strcmp(k, "port")) c->port = atoi(v);
		else if (!strcmp(k, "abs")) c->abs = v;
		else if (!strcmp(k, "upath")) c->upath = v;
		else if (!strcmp(k, "secret")) c->secret = v;
		else if (!strcmp(k, "exe")) c->exe = v;
		else if (!strcmp(k, "statedir")) c->statedir = v;
		else if (!strcmp(k, "fd")) c->fd = atoi(v);
		else return -1;
	}
	return 0;
}

static const struct probe *find(const char *name)
{
	for (size_t f = 0; f < ARRAY_LEN(families); f++)
		for (size_t i = 0; i < families[f]->n; i++)
			if (!strcmp(families[f]->p[i].name, name))
				return &families[f]->p[i];
	return NULL;
}

int main(int argc, char **argv)
{
	struct ctx c;
	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (size_t f = 0; f < ARRAY_LEN(families); f++)
			for (size_t i = 0; i < families[f]->n; i++) {
				const struct probe *p = &families[f]->p[i];
				if (families[f] == &fam_term_helper) continue;
				printf("%s\t%s\t%s\t%s\n", p->name, p->family, ctl_names[p->ctl], p->note);
			}
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "swap"))
		return swap_loop(argv[2], argv[3]);
	const struct probe *p = argc >= 2 ? find(argv[1]) : NULL;
	if (!p) {
		fprintf(stderr, "usage: escprobe list | NAME [key=value...] | swap DIR LINK\n");
		return P_BROKEN;
	}
	if (parse_ctx(&c, argc - 2, argv + 2) < 0)
		return broken("bad argument (expected key=value)");
	return p->run(&c);
}
