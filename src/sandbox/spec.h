/* The sandbox spec (`cloister sandbox run --spec`): a Smithers-shaped JSON
 * document, validated strictly into plain data. Pure: no file system. */
#ifndef SB_SPEC_H
#define SB_SPEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/sandbox/sberror.h"

#define SB_ID_MAX 256
#define SB_PATH_MAX 1024
#define SB_ENV_KEY_MAX 128
#define SB_STRING_MAX (64 * 1024)
#define SB_DEFAULT_OUTPUT_BYTES (5u * 1024 * 1024)
#define SB_DEFAULT_TIMEOUT_MS (10u * 60 * 1000)
#define SB_DEFAULT_COMMAND "smithers up bundle.tsx"
#define SB_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

struct sb_volume {
	const char *host;
	char *container;      /* normalised (no //, ., ..) */
	bool readonly;        /* default true */
};

struct sb_port {
	uint16_t host;
	uint16_t container;
};

/* Egress settings, already normalised (noProxy joined by commas). */
struct sb_egress {
	bool present;
	const char *http_proxy, *https_proxy, *no_proxy_str, *ca_pem, *ca_path;
	char *no_proxy;       /* owned */
	json_t *env;          /* borrowed object of strings, or NULL */
	json_t *secret_bindings;
};

struct sb_workspace {
	bool present;
	char *name;           /* trimmed, owned */
	char *snapshot_id;    /* trimmed, owned, or NULL */
	int64_t idle_timeout_secs;   /* -1 = unset */
	const char *persistence;     /* NULL, "ephemeral" or "sticky" */
	bool ignore_none;            /* "ignore": "none" (default "git") */
};

/* Strings are borrowed from root unless marked owned. */
struct sb_spec {
	json_t *root;
	const char *run_id, *sandbox_id, *root_dir, *runtime, *command, *request_bundle, *image;
	int runtime_req;      /* enum cl_runtime the spec asked for */
	bool host_root;       /* not in the JSON: --host-root (a root caller's sandbox is host root) */
	bool allow_network, review_diffs, auto_accept_diffs, allow_nested;
	json_t *env;          /* object of strings (validated), or NULL */
	struct sb_egress egress;
	struct sb_port *ports;
	size_t n_ports;
	struct sb_volume *volumes;
	size_t n_volumes;
	const char *memory_limit, *cpu_limit;
	uint64_t memory_bytes, cpu_quota_us, cpu_period_us;
	struct sb_workspace workspace;
	uint64_t max_output_bytes, tool_timeout_ms;
	json_t *config, *input;   /* borrowed, may be NULL */
};

/* Sets the runtime asked for (auto, native, docker, codeplane; the
 * --runtime option overrides the spec's); -1 for any other name. */
int sb_spec_set_runtime(struct sb_spec *s, const char *name);
/* Parses text (a JSON object) into s. On failure s is freed and e says why. */
int sb_spec_parse(const char *text, size_t len, struct sb_spec *s, struct sb_error *e);
/* Validates root (borrowed reference kept) into s. */
int sb_spec_from_json(json_t *root, struct sb_spec *s, struct sb_error *e);
void sb_spec_free(struct sb_spec *s);

/* Pure rules, exported for the unit tests and the bundle validator. */
bool sb_env_name_ok(const char *key);
bool sb_memory_limit_ok(const char *s);
bool sb_cpu_limit_ok(const char *s);
/* Length as JavaScript counts it (UTF-16 code units), which is what the
 * Smithers limits are written in; invalid UTF-8 bytes count one each. */
size_t sb_js_length(const char *s, size_t bytes);
/* sb_js_length of a JSON string value. */
size_t sb_json_js_length(const json_t *v);
/* A JSON string value holding a NUL byte (invalid in every field). */
bool sb_json_has_nul(const json_t *v);
/* Fails naming the first member of obj not in known (NULL-terminated),
 * as "Unknown sandbox spec field: <prefix><name>.". */
int sb_check_known(json_t *obj, const char *const *known, const char *prefix,
                   struct sb_error *e);
/* Collapses "//", "." and ".." of an absolute path into out (lexically). */
int sb_path_normalize(const char *in, char *out, size_t outlen);
/* True if normalised absolute path p is the same as or below dir. */
bool sb_path_within(const char *p, const char *dir);

/* Egress (src/sandbox/egress.c). */
int sb_egress_parse(json_t *v, struct sb_egress *eg, struct sb_error *e);
void sb_egress_free(struct sb_egress *eg);

#endif
