/* Codeplane's workspace API: configuration from the environment and one
 * JSON request with 429 retry and token redaction. */
#ifndef CL_CP_API_H
#define CL_CP_API_H

#include <jansson.h>
#include <stdbool.h>

#include "src/util/error.h"

struct cp_config {
	char base[512];          /* CODEPLANE_API_URL, no trailing '/' */
	char token[512];         /* CODEPLANE_API_KEY or CODEPLANE_TOKEN */
	char repo[256];          /* CODEPLANE_REPO: owner/repo */
	const char *snapshot;    /* CODEPLANE_SNAPSHOT_ID or NULL */
	const char *identity;    /* CODEPLANE_SSH_IDENTITY or NULL */
	const char *known_hosts; /* CODEPLANE_SSH_KNOWN_HOSTS or NULL */
	const char *workdir;     /* CODEPLANE_WORKDIR, default /workspace */
	const char *result_dir;  /* CODEPLANE_RESULT_DIR (sandbox specs), default /result */
	const char *name;        /* CODEPLANE_WORKSPACE_NAME or NULL (a random one) */
	int start_timeout_s;     /* CODEPLANE_START_TIMEOUT, default 300 */
	bool sticky;             /* CODEPLANE_PERSISTENCE=sticky: suspend, not delete */
};

#define CP_DEFAULT_URL "https://api.codeplane.app"

/* Reads the configuration; an error says what is missing or malformed. */
int cp_config_load(struct cp_config *c, cl_error *err);
/* METHOD /api/repos/{owner}/{repo}PATH. *status is the final HTTP status
 * (after up to CP_MAX_TRIES on 429, honouring Retry-After up to
 * CP_MAX_RETRY_AFTER_S); *out the JSON body or NULL. Errors never contain
 * the token. */
#define CP_MAX_TRIES 5
#define CP_MAX_RETRY_AFTER_S 30
int cp_call(const struct cp_config *c, const char *method, const char *path, json_t *body,
            int *status, json_t **out, cl_error *err);
/* "message (resource.field: code, ...)" of an error body. */
void cp_describe(const json_t *body, char *buf, size_t len);
/* Replaces every copy of the token in err's message. */
void cp_redact(const struct cp_config *c, cl_error *err);

#endif
