/* `cloister check [--json]`: what this host allows, and why not. */
#ifndef CL_CHECK_H
#define CL_CHECK_H

int cl_check_main(int argc, char **argv);

#endif
