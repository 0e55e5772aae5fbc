/* Pure parsers and converters for command-line values: sizes, cpu counts,
 * integers, durations, ports, uid-map lines. No side effects, unit-tested. */
#ifndef CL_PARSE_H
#define CL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* "512m" -> bytes. Digits without leading zero, optional b/k/m/g suffix. */
int cl_parse_size(const char *s, uint64_t *out);
/* Decimal unsigned integer in [min, max], no sign, no junk. */
int cl_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* "1.5" cpus -> quota/period for cpu.max (period 100000 us). */
int cl_parse_cpus(const char *s, uint64_t *quota_us, uint64_t *period_us);
/* "2.5" seconds -> milliseconds (> 0). */
int cl_parse_seconds(const char *s, uint64_t *ms);
/* TCP/UDP port 1..65535. */
int cl_parse_port(const char *s, uint16_t *out);
struct cl_port;
struct cl_forward;
/* "[HOST_IP:]HOST_PORT:SANDBOX_PORT[/tcp|/udp]"; HOST_IP may be [v6]. */
int cl_parse_publish(const char *s, struct cl_port *out);
/* "SANDBOX_PORT:HOST:HOST_PORT"; HOST may be [v6]. */
int cl_parse_forward(const char *s, struct cl_forward *out);
/* Writes "inside outside 1\n" into buf; returns length or -1 if too small. */
int cl_format_idmap(char *buf, size_t len, unsigned inside, unsigned outside);
/* Wait status -> the exit code cloister returns (code, or 128+signal). */
int cl_exit_code_of_status(int wstatus);
/* exec errno -> 126 or 127 as a shell would. */
int cl_exit_code_of_exec_errno(int errnum);

#endif
