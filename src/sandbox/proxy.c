/* Proxy URL parsing and the relay plan that lets a sandbox without a
 * network reach a host proxy through cloister's --forward-out relay. */
#define _GNU_SOURCE
#include "src/sandbox/proxy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/policy/parse.h"

int sb_proxy_parse(const char *url, struct sb_proxy_url *u)
{
	const char *sep = strstr(url, "://"), *auth, *end, *at, *hp, *colon;
	char port[8];
	uint64_t n;

	memset(u, 0, sizeof(*u));
	if (sep) {
		if ((size_t)(sep - url) >= sizeof(u->scheme) || sep == url)
			return -EINVAL;
		snprintf(u->scheme, sizeof(u->scheme), "%.*s", (int)(sep - url), url);
		auth = sep + 3;
	} else {
		snprintf(u->scheme, sizeof(u->scheme), "http");
		auth = url;
	}
	end = auth + strcspn(auth, "/?#");
	if (snprintf(u->rest, sizeof(u->rest), "%s", end) >= (int)sizeof(u->rest))
		return -EINVAL;
	/* The last '@' of the authority ends the userinfo (passwords may
	 * contain '@' only percent-encoded, but be lenient). */
	at = NULL;
	for (const char *c = auth; c < end; c++)
		if (*c == '@')
			at = c;
	if (at && (size_t)(at - auth) >= sizeof(u->userinfo))
		return -EINVAL;
	if (at)
		snprintf(u->userinfo, sizeof(u->userinfo), "%.*s", (int)(at - auth), auth);
	hp = at ? at + 1 : auth;
	if (*hp == '[') {
		const char *close = memchr(hp, ']', (size_t)(end - hp));
		if (!close || (size_t)(close - hp - 1) >= sizeof(u->host) || close == hp + 1)
			return -EINVAL;
		snprintf(u->host, sizeof(u->host), "%.*s", (int)(close - hp - 1), hp + 1);
		colon = close + 1 < end && close[1] == ':' ? close + 1 : NULL;
		if (!colon && close + 1 != end)
			return -EINVAL;
	} else {
		colon = memchr(hp, ':', (size_t)(end - hp));
		size_t hl = colon ? (size_t)(colon - hp) : (size_t)(end - hp);
		if (hl == 0 || hl >= sizeof(u->host))
			return -EINVAL;
		snprintf(u->host, sizeof(u->host), "%.*s", (int)hl, hp);
	}
	if (colon) {
		if ((size_t)(end - colon - 1) >= sizeof(port) || end == colon + 1)
			return -EINVAL;
		snprintf(port, sizeof(port), "%.*s", (int)(end - colon - 1), colon + 1);
		if (cl_parse_u64(port, 1, 65535, &n) < 0)
			return -EINVAL;
		u->port = (uint16_t)n;
	} else {
		u->port = strcmp(u->scheme, "https") == 0 ? 443 : 80;
	}
	return 0;
}

char *sb_proxy_inside_url(const struct sb_proxy_url *u, uint16_t inside_port)
{
	char *out = NULL;

	if (asprintf(&out, "%s://%s%s127.0.0.1:%u%s", u->scheme, u->userinfo, u->userinfo[0] ? "@" : "",
	             inside_port, u->rest) < 0)
		return NULL;
	return out;
}

static int plan_one(const char *url, const char *field, struct sb_proxy_plan *pl, char **out,
                    struct sb_error *e)
{
	struct sb_proxy_url u;
	uint16_t inside;
	int i;

	if (sb_proxy_parse(url, &u) < 0)
		return sb_invalid(e, field, "%s must be a proxy URL like http://host:port.", field);
	for (i = 0; i < pl->n_fw; i++)
		if (strcmp(pl->fw[i].host, u.host) == 0 && pl->fw[i].host_port == u.port)
			break;
	if (i == pl->n_fw) {
		/* Inside, the proxy keeps its port unless the other relay has it. */
		inside = u.port;
		if (pl->n_fw == 1 && pl->fw[0].inside_port == inside)
			inside = inside == 65535 ? 65534 : (uint16_t)(inside + 1);
		pl->fw[i].inside_port = inside;
		snprintf(pl->fw[i].host, sizeof(pl->fw[i].host), "%s", u.host);
		pl->fw[i].host_port = u.port;
		pl->n_fw++;
	}
	*out = sb_proxy_inside_url(&u, pl->fw[i].inside_port);
	return *out ? 0 : sb_fail(e, SB_PROCESS_SPAWN_FAILED, ENOMEM, NULL, "rewriting %s", field);
}

int sb_proxy_plan(const char *http, const char *https, bool allow_network,
                  struct sb_proxy_plan *pl, struct sb_error *e)
{
	int rc;

	memset(pl, 0, sizeof(*pl));
	if (allow_network) {
		pl->http = http ? strdup(http) : NULL;
		pl->https = https ? strdup(https) : NULL;
		return (http && !pl->http) || (https && !pl->https)
		       ? sb_fail(e, SB_PROCESS_SPAWN_FAILED, ENOMEM, NULL, "egress") : 0;
	}
	if (http && (rc = plan_one(http, "egress.httpProxy", pl, &pl->http, e)) < 0)
		return rc;
	if (https && (rc = plan_one(https, "egress.httpsProxy", pl, &pl->https, e)) < 0)
		return rc;
	return 0;
}

void sb_proxy_plan_free(struct sb_proxy_plan *pl)
{
	free(pl->http);
	free(pl->https);
	memset(pl, 0, sizeof(*pl));
}
