#ifndef CL_VERSION_H
#define CL_VERSION_H
/* The release version, printed by `cloister version`. */
#define CL_VERSION "0.1.0"
#endif
