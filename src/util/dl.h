/* Libraries loaded on first use (dlopen), so a launch that never needs
 * them never pays ld.so for them: SQLite, libcurl, libgit2. */
#ifndef CL_DL_H
#define CL_DL_H

#include <stddef.h>

#include "src/util/error.h"

/* Opens lib and fills slots[i] with names[i], all or nothing; pkg names
 * the Debian package to install when lib is missing. */
int cl_dl_table(const char *lib, const char *pkg, const char *const *names, size_t n,
                void **slots, cl_error *err);

#endif
