/* Egress: the environment a sandbox gets from its spec's egress settings,
 * and the redacted form that may be stored or shown. */
#ifndef SB_EGRESS_H
#define SB_EGRESS_H

#include <jansson.h>

struct sb_egress;

#define SB_EGRESS_CA_RELATIVE ".smithers/egress/ca.crt"
#define SB_EGRESS_CA_INSIDE "/workspace/.smithers/egress/ca.crt"

/* egress.env + proxy variables (both cases) + CA variables; the proxy URLs
 * are passed in because the caller may rewrite them to a relay. */
json_t *sb_egress_env(const struct sb_egress *eg, const char *http_proxy,
                      const char *https_proxy);
json_t *sb_egress_redacted(const struct sb_egress *eg);

#endif
