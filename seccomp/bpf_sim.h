/* A small classic-BPF interpreter for seccomp programs: lets the parent and
 * the unit tests check what a compiled filter decides, without loading it. */
#ifndef SC_BPF_SIM_H
#define SC_BPF_SIM_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

/* Runs prog on d. Returns 0 and the SECCOMP_RET_* value in *ret, or
 * -EINVAL for a program the kernel would not accept or run. */
int sc_bpf_run(const struct sock_filter *prog, size_t len, const struct seccomp_data *d,
               uint32_t *ret);

#endif
