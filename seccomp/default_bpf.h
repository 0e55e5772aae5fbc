/* The built-in default seccomp profile, compiled at build time by
 * seccomp/gen/default_bpf_gen.c: no compile and no cache at launch. */
#ifndef SC_DEFAULT_BPF_H
#define SC_DEFAULT_BPF_H

#include <linux/filter.h>

struct sc_builtin {
	const struct sock_filter *filter;
	unsigned short len;
};

/* The default profile, without and with --allow-nested. The profile does
 * not depend on capabilities or on the running kernel, so these two are
 * all there is; both passed sc_profile_default_check at build time. */
extern const struct sc_builtin sc_default_bpf;
extern const struct sc_builtin sc_default_bpf_nested;

#endif
