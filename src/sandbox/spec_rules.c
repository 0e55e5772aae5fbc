/* The pure pattern rules of the spec (variable names, memory and cpu
 * limits as Smithers' regular expressions) and lexical path handling. */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "src/sandbox/spec.h"

bool sb_env_name_ok(const char *k)
{
	if (!k || !(isalpha((unsigned char)k[0]) || k[0] == '_'))
		return false;
	for (const char *c = k + 1; *c; c++)
		if (!(isalnum((unsigned char)*c) || *c == '_'))
			return false;
	return true;
}

static bool all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* ^[1-9][0-9]*[bkmgBKMG]?$ */
bool sb_memory_limit_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n && strchr("bkmgBKMG", s[n - 1]))
		n--;
	return n > 0 && s[0] >= '1' && s[0] <= '9' && all_digits(s, n);
}

/* ^([1-9][0-9]*(\.[0-9]+)?|0?\.[0-9]+)$ */
bool sb_cpu_limit_ok(const char *s)
{
	const char *dot = s ? strchr(s, '.') : NULL;
	size_t ilen = dot ? (size_t)(dot - s) : (s ? strlen(s) : 0);

	if (!s || !*s)
		return false;
	if (dot && (dot[1] == '\0' || !all_digits(dot + 1, strlen(dot + 1))))
		return false;
	if (ilen == 0)
		return dot != NULL;
	if (ilen == 1 && s[0] == '0')
		return dot != NULL;
	return s[0] >= '1' && s[0] <= '9' && all_digits(s, ilen);
}

int sb_path_normalize(const char *in, char *out, size_t outlen)
{
	size_t o = 0;
	const char *p = in;

	if (!in || in[0] != '/' || outlen < 2)
		return -EINVAL;
	while (*p) {
		const char *seg;
		size_t len;
		while (*p == '/')
			p++;
		seg = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - seg);
		if (len == 0 || (len == 1 && seg[0] == '.'))
			continue;
		if (len == 2 && seg[0] == '.' && seg[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			continue;
		}
		if (o + 1 + len + 1 > outlen)
			return -ENAMETOOLONG;
		out[o++] = '/';
		memcpy(out + o, seg, len);
		o += len;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

bool sb_path_within(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

size_t sb_js_length(const char *s, size_t bytes)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + bytes;
	size_t n = 0;

	while (p < end) {
		unsigned c = *p;
		size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
		if ((size_t)(end - p) < len)
			len = 1;
		/* Four-byte sequences are outside the BMP: a surrogate pair. */
		n += len == 4 ? 2 : 1;
		p += len;
	}
	return n;
}

size_t sb_json_js_length(const json_t *v)
{
	return sb_js_length(json_string_value(v), json_string_length(v));
}
