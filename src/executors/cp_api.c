/* Requests to the Codeplane API over libcurl (loaded on first use): JSON in
 * and out, `Authorization: token <t>`, a bounded retry on 429 as
 * Retry-After says. The token never reaches an error, event or log. */
#define _GNU_SOURCE
#include "src/executors/cp_api.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "src/executors/curl_dl.h"

#define CP_MAX_BODY (4u << 20)

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && v[0] ? v : def;
}

static bool valid_repo(const char *r)
{
	const char *slash = strchr(r, '/');

	if (!slash || slash == r || !slash[1] || strchr(slash + 1, '/'))
		return false;
	for (const char *p = r; *p; p++)
		if (!(*p == '/' || *p == '-' || *p == '_' || *p == '.' ||
		      (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			return false;
	return true;
}

static bool plain_dir(const char *d)
{
	if (d[0] != '/' || strcmp(d, "/") == 0 || strstr(d, "//") || d[strlen(d) - 1] == '/')
		return false;
	for (const char *c = d + 1; c; c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL) {
		size_t n = strcspn(c, "/");
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
	}
	return true;
}

int cp_config_load(struct cp_config *c, cl_error *err)
{
	const char *base = env_or("CODEPLANE_API_URL", CP_DEFAULT_URL);
	const char *tok = env_or("CODEPLANE_API_KEY", env_or("CODEPLANE_TOKEN", NULL));
	const char *repo = env_or("CODEPLANE_REPO", NULL);
	const char *to = env_or("CODEPLANE_START_TIMEOUT", "300");
	char *end;
	long t;

	memset(c, 0, sizeof(*c));
	if (!tok || !repo)
		return cl_fail(err, 0, "codeplane is not configured: set CODEPLANE_API_KEY (or "
		               "CODEPLANE_TOKEN) and CODEPLANE_REPO=owner/repo");
	if (!valid_repo(repo) || strlen(repo) >= sizeof(c->repo))
		return cl_fail(err, 0, "CODEPLANE_REPO '%.100s': expected owner/repo", repo);
	if ((strncmp(base, "https://", 8) != 0 && strncmp(base, "http://", 7) != 0) ||
	    strlen(base) >= sizeof(c->base))
		return cl_fail(err, 0, "CODEPLANE_API_URL '%.100s': expected an http(s):// URL", base);
	if (strlen(tok) >= sizeof(c->token) || strpbrk(tok, "\r\n"))
		return cl_fail(err, 0, "the codeplane token is malformed (too long or has a newline)");
	t = strtol(to, &end, 10);
	if (*end || t < 1 || t > 86400)
		return cl_fail(err, 0, "CODEPLANE_START_TIMEOUT '%.20s': expected seconds, 1-86400", to);
	snprintf(c->base, sizeof(c->base), "%s", base);
	while (strlen(c->base) > 8 && c->base[strlen(c->base) - 1] == '/')
		c->base[strlen(c->base) - 1] = '\0';
	snprintf(c->token, sizeof(c->token), "%s", tok);
	snprintf(c->repo, sizeof(c->repo), "%s", repo);
	c->snapshot = env_or("CODEPLANE_SNAPSHOT_ID", NULL);
	c->identity = env_or("CODEPLANE_SSH_IDENTITY", NULL);
	c->known_hosts = env_or("CODEPLANE_SSH_KNOWN_HOSTS", NULL);
	c->workdir = env_or("CODEPLANE_WORKDIR", "/workspace");
	c->result_dir = env_or("CODEPLANE_RESULT_DIR", "/result");
	c->name = env_or("CODEPLANE_WORKSPACE_NAME", NULL);
	/* A spec run empties both remotely: never "/", never a climb. */
	if (!plain_dir(c->workdir) || !plain_dir(c->result_dir) || strcmp(c->workdir, c->result_dir) == 0)
		return cl_fail(err, 0, "CODEPLANE_WORKDIR '%.100s' and CODEPLANE_RESULT_DIR '%.100s' must be "
		               "two different absolute directories other than / (no '.' or '..' parts)",
		               c->workdir, c->result_dir);
	c->start_timeout_s = (int)t;
	c->sticky = strcmp(env_or("CODEPLANE_PERSISTENCE", "ephemeral"), "sticky") == 0;
	return 0;
}

void cp_redact(const struct cp_config *c, cl_error *err)
{
	size_t tl = strlen(c->token);
	char *hit;

	if (tl < 4)
		return;
	while ((hit = strstr(err->msg, c->token))) {
		static const char mark[] = "[redacted]";
		size_t rest = strlen(hit + tl);
		memmove(hit + sizeof(mark) - 1, hit + tl, rest + 1);
		memcpy(hit, mark, sizeof(mark) - 1);
	}
}

void cp_describe(const json_t *body, char *buf, size_t len)
{
	const char *m = json_string_value(json_object_get(body, "message"));
	json_t *errs = json_object_get(body, "errors"), *e;
	size_t i, n;

	n = (size_t)snprintf(buf, len, "%s", m ? m : "no message");
	json_array_foreach(errs, i, e) {
		if (n >= len)
			break;
		n += (size_t)snprintf(buf + n, len - n, "%s%s.%s: %s", i ? ", " : " (",
		                      json_string_value(json_object_get(e, "resource")) ?: "?",
		                      json_string_value(json_object_get(e, "field")) ?: "?",
		                      json_string_value(json_object_get(e, "code")) ?: "?");
	}
	if (json_array_size(errs) && n < len)
		snprintf(buf + n, len - n, ")");
}

struct sink {
	char *buf;
	size_t len;
	bool overflow;
	long retry_after;   /* seconds, -1 = none */
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	struct sink *s = ud;
	size_t add = sz * n;
	char *nb;

	if (s->len + add > CP_MAX_BODY) {
		s->overflow = true;
		return 0;
	}
	nb = realloc(s->buf, s->len + add + 1);
	if (!nb)
		return 0;
	memcpy(nb + s->len, p, add);
	s->buf = nb;
	s->len += add;
	s->buf[s->len] = '\0';
	return add;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
	struct sink *s = ud;
	size_t len = sz * n;

	if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
		char tmp[32];
		size_t l = len - 12 < sizeof(tmp) - 1 ? len - 12 : sizeof(tmp) - 1;
		memcpy(tmp, p + 12, l);
		tmp[l] = '\0';
		s->retry_after = strtol(tmp, NULL, 10);
	}
	return len;
}

static int perform(const struct cp_config *c, const char *method, const char *url,
                   const char *body, struct sink *s, long *status, cl_error *err)
{
	char auth[600];
	struct curl_slist *h = NULL;
	CURL *k = cl_curl.easy_init();
	CURLcode rc;

	if (!k)
		return cl_fail(err, ENOMEM, "codeplane: starting a request");
	snprintf(auth, sizeof(auth), "Authorization: token %s", c->token);
	h = cl_curl.slist_append(h, auth);
	h = cl_curl.slist_append(h, "Accept: application/json");
	if (body)
		h = cl_curl.slist_append(h, "Content-Type: application/json");
	cl_curl.easy_setopt(k, CURLOPT_URL, url);
	cl_curl.easy_setopt(k, CURLOPT_CUSTOMREQUEST, method);
	cl_curl.easy_setopt(k, CURLOPT_HTTPHEADER, h);
	if (body)
		cl_curl.easy_setopt(k, CURLOPT_POSTFIELDS, body);
	cl_curl.easy_setopt(k, CURLOPT_WRITEFUNCTION, on_body);
	cl_curl.easy_setopt(k, CURLOPT_WRITEDATA, s);
	cl_curl.easy_setopt(k, CURLOPT_HEADERFUNCTION, on_header);
	cl_curl.easy_setopt(k, CURLOPT_HEADERDATA, s);
	cl_curl.easy_setopt(k, CURLOPT_TIMEOUT, 60L);
	cl_curl.easy_setopt(k, CURLOPT_CONNECTTIMEOUT, 10L);
	cl_curl.easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
	/* Never follow a redirect: it would carry the token elsewhere. */
	cl_curl.easy_setopt(k, CURLOPT_FOLLOWLOCATION, 0L);
	cl_curl.easy_setopt(k, CURLOPT_PROTOCOLS_STR, "http,https");
	rc = cl_curl.easy_perform(k);
	if (rc == CURLE_OK)
		cl_curl.easy_getinfo(k, CURLINFO_RESPONSE_CODE, status);
	cl_curl.easy_cleanup(k);
	cl_curl.slist_free_all(h);
	if (rc != CURLE_OK)
		return cl_fail(err, 0, "codeplane: %s %s: %s", method, url,
		               s->overflow ? "answer too large" : cl_curl.easy_strerror(rc));
	return 0;
}

static void pause_s(long s)
{
	struct timespec ts = {.tv_sec = s};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int cp_call(const struct cp_config *c, const char *method, const char *path, json_t *body,
            int *status, json_t **out, cl_error *err)
{
	char url[1024], *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	long st = 0;
	int rc = cl_curl_load(err);

	*out = NULL;
	snprintf(url, sizeof(url), "%s/api/repos/%s%s", c->base, c->repo, path);
	for (int tries = 0; rc == 0; tries++) {
		struct sink s = {.retry_after = -1};
		rc = perform(c, method, url, text, &s, &st, err);
		if (rc == 0 && st == 429 && tries + 1 < CP_MAX_TRIES) {
			/* Honour Retry-After, bounded: a hostile or broken server
			 * cannot park us for hours. No header: one second. */
			long wait = s.retry_after < 0 ? 1 : s.retry_after;
			free(s.buf);
			pause_s(wait > CP_MAX_RETRY_AFTER_S ? CP_MAX_RETRY_AFTER_S : wait);
			continue;
		}
		if (rc == 0 && s.len)
			*out = json_loadb(s.buf, s.len, 0, NULL);
		free(s.buf);
		break;
	}
	free(text);
	*status = (int)st;
	cp_redact(c, err);
	return rc;
}
