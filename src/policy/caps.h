/* Capability names: "CAP_NET_ADMIN", "net_admin" or "ALL" to bits, as this
 * kernel knows them (libcap; native builds only). */
#ifndef CL_CAPS_H
#define CL_CAPS_H

#include <stdint.h>

/* Capability name ("CAP_NET_ADMIN", "net_admin", "ALL") -> bitmask; 0 or
 * -EINVAL. */
int cl_caps_parse(const char *name, uint64_t *mask);
/* Highest capability number this kernel knows. */
unsigned cl_caps_last(void);

#endif
