/* Odd file names in a bundle: git's C-quoted form in the diff headers
 * (core.quotePath's default) and one JSON form per name that round-trips. */
#ifndef WS_PATHQ_H
#define WS_PATHQ_H

#include <stdbool.h>

/* The name as the JSON "path" carries it: the bytes themselves when they
 * are UTF-8 with no control character and do not start with '"', else
 * git's C-quoted form ("\"a\\nb\""). malloc'd, NULL when out of memory. */
char *ws_path_encode(const char *name);
/* The inverse: the name's bytes, or NULL for a quoted form that is
 * damaged, holds a NUL (\000) or is not the one ws_path_encode gives. */
char *ws_path_decode(const char *path);
/* prefix + name as `git diff` writes it in its headers: quoted (with
 * octal escapes for bytes >= 0x80) when any byte needs it. malloc'd. */
char *ws_git_name(const char *prefix, const char *name);

#endif
