/* A tiny unit-test harness: each CHECK prints one PASS or FAIL line that
 * tests/run.sh counts; main returns non-zero if anything failed. */
#ifndef CL_UNIT_H
#define CL_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_failed;

#define CHECK(name, cond)                                                          \
	do {                                                                       \
		if (cond) {                                                        \
			printf("PASS %s: %s\n", unit_base(__FILE__), name);                \
		} else {                                                           \
			printf("FAIL %s: %s (%s:%d: %s)\n", unit_base(__FILE__), name,     \
			       __FILE__, __LINE__, #cond);                         \
			unit_failed = 1;                                           \
		}                                                                  \
	} while (0)

static inline const char *unit_base(const char *file)
{
	const char *s = strrchr(file, '/');
	return s ? s + 1 : file;
}

#define UNIT_MAIN_END return unit_failed ? 1 : 0

#endif
