/* Shared pieces of the libFuzzer targets: turning the fuzzer's bytes into
 * an argv (NUL-separated words) that the target owns and frees. */
#ifndef CL_FUZZ_H
#define CL_FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Bounded so a single input cannot make the parsers' quadratic paths
 * (repeated options) look like a hang. */
#define FZ_MAX_WORDS 256

/* argv[0] = prog, then each NUL-separated word of data[0..len) (a last
 * word without NUL counts). NULL-terminated; *argc set. NULL on ENOMEM. */
static inline char **fz_argv(const char *prog, const uint8_t *data, size_t len, int *argc)
{
	char **v = calloc(FZ_MAX_WORDS + 2, sizeof(char *));
	size_t i = 0;
	int n = 0;

	if (!v)
		return NULL;
	v[n++] = strdup(prog);
	while (i < len && n <= FZ_MAX_WORDS) {
		size_t k = strnlen((const char *)data + i, len - i);
		v[n++] = strndup((const char *)data + i, k);
		i += k + 1;
	}
	*argc = n;
	return v;
}

static inline void fz_argv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* The same bytes as one NUL-terminated string (parsers given char*). */
static inline char *fz_str(const uint8_t *data, size_t len)
{
	char *s = malloc(len + 1);

	if (s) {
		memcpy(s, data, len);
		s[len] = '\0';
	}
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);
int LLVMFuzzerInitialize(int *argc, char ***argv);
#endif
