/* Redaction: scrub known secret values out of text, and replace the values
 * of secret-looking keys, as Smithers' provider kit does. */
#define _GNU_SOURCE
#include "src/sandbox/redact.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int push(struct sb_secrets *s, const char *v)
{
	char **nv;

	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i], v) == 0)
			return 0;
	nv = realloc(s->v, (s->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	s->v = nv;
	if (!(s->v[s->n] = strdup(v)))
		return -ENOMEM;
	s->n++;
	return 0;
}

int sb_secrets_add(struct sb_secrets *s, const char *value)
{
	json_t *j;
	char *esc;
	int rc;

	if (!value || !*value)
		return 0;
	rc = push(s, value);
	if (rc < 0)
		return rc;
	/* The same value as it appears inside a serialised JSON string. */
	j = json_string(value);
	esc = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	json_decref(j);
	if (!esc)
		return -ENOMEM;
	esc[strlen(esc) - 1] = '\0';
	if (strlen(esc + 1) > 0)
		rc = push(s, esc + 1);
	free(esc);
	return rc;
}

void sb_secrets_free(struct sb_secrets *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

static char *replace_all(const char *text, const char *needle)
{
	static const char mark[] = "[redacted]";
	size_t nlen = strlen(needle), count = 0, len = strlen(text);
	const char *p;
	char *out, *w;

	for (p = text; (p = strstr(p, needle)); p += nlen)
		count++;
	out = malloc(len + count * sizeof(mark) + 1);
	if (!out)
		return NULL;
	w = out;
	for (p = text;;) {
		const char *hit = strstr(p, needle);
		size_t chunk = hit ? (size_t)(hit - p) : strlen(p);
		memcpy(w, p, chunk);
		w += chunk;
		if (!hit)
			break;
		memcpy(w, mark, sizeof(mark) - 1);
		w += sizeof(mark) - 1;
		p = hit + nlen;
	}
	*w = '\0';
	return out;
}

char *sb_scrub(const struct sb_secrets *s, const char *text)
{
	char *cur = strdup(text ? text : "");

	/* Longest first would be kinder to overlapping values; the escaped
	 * forms are never shorter than the raw ones, so order is by insertion. */
	for (size_t i = 0; cur && s && i < s->n; i++) {
		char *next;
		if (!strstr(cur, s->v[i]))
			continue;
		next = replace_all(cur, s->v[i]);
		free(cur);
		cur = next;
	}
	return cur;
}

char *sb_dumps_scrubbed(const struct sb_secrets *s, const json_t *j)
{
	char *raw = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	char *out;

	if (!raw)
		return NULL;
	out = sb_scrub(s, raw);
	free(raw);
	return out;
}

bool sb_key_is_secret(const char *key)
{
	static const char *const words[] = {"token", "secret", "key", "password", "credential",
	                                    "authorization", "passwd", "apikey"};

	for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++)
		if (strcasestr(key, words[i]))
			return true;
	return false;
}

json_t *sb_redact_keys(const json_t *v)
{
	const char *k;
	json_t *val, *out;
	size_t i;

	if (json_is_array(v)) {
		out = json_array();
		json_array_foreach(v, i, val)
			json_array_append_new(out, sb_redact_keys(val));
		return out;
	}
	if (!json_is_object(v))
		return json_deep_copy(v);
	out = json_object();
	json_object_foreach((json_t *)v, k, val)
		json_object_set_new(out, k, sb_key_is_secret(k) ? json_string("[redacted]")
		                                                 : sb_redact_keys(val));
	return out;
}
