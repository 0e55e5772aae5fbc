/* git's C quoting of path names (quote.c's quote_c_style with
 * core.quotePath on): what `git diff` prints for a name with a control
 * character, a quote, a backslash or a byte >= 0x80, and its inverse. */
#define _GNU_SOURCE
#include "src/workspace/pathq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/workspace/patch.h"

static bool git_quotes(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\' || c >= 0x7f;
}

static const char *short_escape(unsigned char c)
{
	switch (c) {
	case '\a': return "\\a";
	case '\b': return "\\b";
	case '\t': return "\\t";
	case '\n': return "\\n";
	case '\v': return "\\v";
	case '\f': return "\\f";
	case '\r': return "\\r";
	case '"': return "\\\"";
	case '\\': return "\\\\";
	default: return NULL;
	}
}

/* "..." around a and b (either may be ""), each byte escaped as git does. */
static char *c_quote(const char *a, const char *b)
{
	/* A byte takes 4 at most (\ooo), plus the quotes and the NUL. */
	size_t n = strlen(a) + strlen(b), cap = 4 * n + 3;
	char *out = malloc(cap), *o = out;
	const char *parts[2] = {a, b};

	if (!out)
		return NULL;
	*o++ = '"';
	for (size_t k = 0; k < 2; k++)
		for (const unsigned char *c = (const unsigned char *)parts[k]; *c; c++) {
			const char *e = short_escape(*c);
			if (e) {
				memcpy(o, e, 2);   /* every short escape is two bytes */
				o += 2;
			} else if (git_quotes(*c)) {
				o += snprintf(o, cap - (size_t)(o - out), "\\%03o", *c);
			} else {
				*o++ = (char)*c;
			}
		}
	*o++ = '"';
	*o = '\0';
	return out;
}

static bool needs_git_quote(const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		if (git_quotes(*c))
			return true;
	return false;
}

char *ws_git_name(const char *prefix, const char *name)
{
	char *out;

	if (needs_git_quote(name))
		return c_quote(prefix, name);
	if (asprintf(&out, "%s%s", prefix, name) < 0)
		return NULL;
	return out;
}

static bool json_plain(const char *name)
{
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return false;
	return name[0] != '"' && ws_utf8_valid(name, strlen(name));
}

char *ws_path_encode(const char *name)
{
	return json_plain(name) ? strdup(name) : c_quote("", name);
}

/* One escape after the backslash at *s: its byte, or -1. */
static int unescape(const char **s)
{
	static const char from[] = "abtnvfr\"\\", to[] = "\a\b\t\n\v\f\r\"\\";
	const char *hit = **s ? strchr(from, **s) : NULL;
	int v = 0;

	if (hit) {
		(*s)++;
		return (unsigned char)to[hit - from];
	}
	for (int k = 0; k < 3; k++, (*s)++) {
		if ((*s)[0] < '0' || (*s)[0] > '7')
			return -1;
		v = v * 8 + ((*s)[0] - '0');
	}
	return v > 0 && v < 256 ? v : -1;
}

char *ws_path_decode(const char *path)
{
	size_t n = strlen(path);
	char *out, *o, *again;
	const char *s = path + 1;

	if (path[0] != '"')
		return json_plain(path) ? strdup(path) : NULL;
	if (n < 3 || path[n - 1] != '"' || !(out = o = malloc(n)))
		return NULL;
	while (s < path + n - 1) {
		int c = -1;
		if (*s == '\\') {
			s++;
			c = unescape(&s);
		} else if (*s != '"') {
			c = (unsigned char)*s++;
		}
		if (c < 0) {
			free(out);
			return NULL;
		}
		*o++ = (char)c;
	}
	*o = '\0';
	/* One form per name: a quoted form the encoder would not write (a
	 * plain name in quotes, an octal escape for a printable byte) is
	 * refused, so that two spellings never name one file. */
	again = ws_path_encode(out);
	if (!again || strcmp(again, path)) {
		free(again);
		free(out);
		return NULL;
	}
	free(again);
	return out;
}
