/* Secret hygiene: the values that must never appear in anything cloister
 * writes, and the redacted copies of a spec that may be stored. */
#ifndef SB_REDACT_H
#define SB_REDACT_H

#include <jansson.h>
#include <stdbool.h>

struct sb_secrets {
	char **v;        /* raw values and their JSON-escaped forms */
	size_t n;
};

/* Adds value (and its JSON-escaped form); empty values are ignored. */
int sb_secrets_add(struct sb_secrets *s, const char *value);
void sb_secrets_free(struct sb_secrets *s);
/* A copy of text with every secret replaced by "[redacted]"; NULL on ENOMEM. */
char *sb_scrub(const struct sb_secrets *s, const char *text);
/* Serialises j compactly and scrubs it; caller frees. */
char *sb_dumps_scrubbed(const struct sb_secrets *s, const json_t *j);
/* True for key names Smithers treats as secret (token, password, ...). */
bool sb_key_is_secret(const char *key);
/* Deep copy of v with the values of secret-looking keys replaced. */
json_t *sb_redact_keys(const json_t *v);

#endif
