/* The two clocks cloister reads: monotonic milliseconds for durations and
 * deadlines, wall-clock milliseconds for timestamps others compare. */
#ifndef CL_CLOCK_H
#define CL_CLOCK_H

#include <stdint.h>

double cl_mono_ms(void);
int64_t cl_wall_ms(void);

#endif
