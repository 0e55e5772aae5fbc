/* Egress proxies for network-less sandboxes: a host proxy URL becomes a
 * --forward-out relay and an inside URL on 127.0.0.1. Pure. */
#ifndef SB_PROXY_H
#define SB_PROXY_H

#include <stdbool.h>
#include <stdint.h>

#include "src/sandbox/sberror.h"

struct sb_proxy_url {
	char scheme[16];
	char userinfo[512];   /* "" = none (kept as is: may carry credentials) */
	char host[256];       /* without [] for IPv6 */
	uint16_t port;
	char rest[1024];      /* path/query from the first '/', '?' or '#' */
};

/* "http://u:p@host:3128/x" (scheme optional, default port by scheme). */
int sb_proxy_parse(const char *url, struct sb_proxy_url *out);
/* The URL with host replaced by 127.0.0.1 and port by inside_port; caller frees. */
char *sb_proxy_inside_url(const struct sb_proxy_url *u, uint16_t inside_port);

struct sb_proxy_plan {
	char *http, *https;           /* URLs the sandbox gets (owned) */
	struct {
		uint16_t inside_port;
		char host[256];
		uint16_t host_port;
	} fw[2];
	int n_fw;
};

/* allow_network: the URLs as given. Otherwise one relay per distinct
 * proxy endpoint and the URLs rewritten to reach it. */
int sb_proxy_plan(const char *http, const char *https, bool allow_network,
                  struct sb_proxy_plan *pl, struct sb_error *e);
void sb_proxy_plan_free(struct sb_proxy_plan *pl);

#endif
