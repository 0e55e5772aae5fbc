/* Millisecond clocks (see clock.h): one place for the timespec arithmetic
 * the supervisor, the sandbox mode and the state store all need. */
#include "src/util/clock.h"

#include <time.h>

double cl_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int64_t cl_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
