/* `cloister gc [--cgroup-parent PATH]`: what dead runs left behind. */
#ifndef CL_GC_H
#define CL_GC_H

/* argv[0] is "gc". Returns the exit code. */
int cl_gc_main(int argc, char **argv);

#endif
