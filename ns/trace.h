/* CLOISTER_TRACE: optional launch-step timestamps for bench/breakdown.sh.
 * Off (the default), each call site costs one predictable branch. */
#ifndef NS_TRACE_H
#define NS_TRACE_H

#include <stdbool.h>

/* True when CLOISTER_TRACE is set to anything but "" or "0". Read once by
 * the parent; the child gets the answer in struct ns_child. */
bool ns_trace_enabled(void);

/* Writes "cloister-trace: <CLOCK_MONOTONIC ns> <who> <step>" to stderr,
 * marking the end of <step>. Async-signal-safe: usable between fork/clone
 * and exec. */
void ns_trace_stamp(const char *who, const char *step);

static inline void ns_trace(bool on, const char *who, const char *step)
{
	if (__builtin_expect(on, 0))
		ns_trace_stamp(who, step);
}

#endif
