/* Capability handling for the command: every set cleared except the caps the
 * policy keeps (--cap-add), with libcap. */
#ifndef NS_CAPS_H
#define NS_CAPS_H

#include <stdint.h>

#include "src/error.h"

/* Bounding, ambient, inheritable, permitted, effective: only `keep` stays.
 * Kept caps are raised in ambient so they survive exec as a non-root uid. */
int ns_caps_drop(uint64_t keep, cl_error *err);
/* Its two halves, for bwrap run by root (which does one, both or neither):
 * the bounding set; then the current sets, ambient included. */
int ns_caps_drop_bounding(uint64_t keep, cl_error *err);
int ns_caps_set_current(uint64_t keep, cl_error *err);
/* Capability name ("CAP_NET_ADMIN", "net_admin", "ALL") -> bitmask. */
int ns_caps_parse(const char *name, uint64_t *mask);
/* Highest capability number this kernel knows. */
unsigned ns_caps_last(void);

#endif
