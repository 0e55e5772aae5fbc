/* Name tables for seccomp actions, comparison ops and architectures, as
 * Docker/OCI profiles spell them; used by the JSON loader and `show`. */
#define _GNU_SOURCE
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "seccomp/profile.h"

#define ACT_ERRNO_BASE 0x00050000U
#define ACT_TRACE_BASE 0x7ff00000U

const char *sc_action_name(uint32_t a, char *buf, size_t len)
{
	switch (a & 0xffff0000U) {
	case SCMP_ACT_KILL_PROCESS: return "SCMP_ACT_KILL_PROCESS";
	case SCMP_ACT_KILL_THREAD: return "SCMP_ACT_KILL_THREAD";
	case SCMP_ACT_TRAP: return "SCMP_ACT_TRAP";
	case SCMP_ACT_LOG: return "SCMP_ACT_LOG";
	case SCMP_ACT_ALLOW: return "SCMP_ACT_ALLOW";
	case SCMP_ACT_NOTIFY: return "SCMP_ACT_NOTIFY";
	case ACT_ERRNO_BASE:
		snprintf(buf, len, "SCMP_ACT_ERRNO(%s)", strerrorname_np((int)(a & 0xffff)) ?
		         strerrorname_np((int)(a & 0xffff)) : "?");
		return buf;
	case ACT_TRACE_BASE:
		snprintf(buf, len, "SCMP_ACT_TRACE(%u)", a & 0xffff);
		return buf;
	}
	snprintf(buf, len, "0x%08x", a);
	return buf;
}

/* errno_ret: the profile's errnoRet (EPERM when absent, as Docker does). */
int sc_action_parse(const char *name, uint32_t errno_ret, bool have_errno, uint32_t *out)
{
	uint32_t e = have_errno ? errno_ret : EPERM;

	if (e > 0xffff)
		return -ERANGE;
	if (!strcmp(name, "SCMP_ACT_ALLOW"))
		*out = SCMP_ACT_ALLOW;
	else if (!strcmp(name, "SCMP_ACT_ERRNO"))
		*out = SCMP_ACT_ERRNO(e);
	else if (!strcmp(name, "SCMP_ACT_KILL") || !strcmp(name, "SCMP_ACT_KILL_THREAD"))
		*out = SCMP_ACT_KILL_THREAD;
	else if (!strcmp(name, "SCMP_ACT_KILL_PROCESS"))
		*out = SCMP_ACT_KILL_PROCESS;
	else if (!strcmp(name, "SCMP_ACT_TRAP"))
		*out = SCMP_ACT_TRAP;
	else if (!strcmp(name, "SCMP_ACT_TRACE"))
		*out = SCMP_ACT_TRACE(e);
	else if (!strcmp(name, "SCMP_ACT_LOG"))
		*out = SCMP_ACT_LOG;
	else if (!strcmp(name, "SCMP_ACT_NOTIFY"))
		return -EOPNOTSUPP;
	else
		return -EINVAL;
	return 0;
}

static const struct { const char *name; int op; } ops[] = {
	{"SCMP_CMP_NE", SCMP_CMP_NE}, {"SCMP_CMP_LT", SCMP_CMP_LT},
	{"SCMP_CMP_LE", SCMP_CMP_LE}, {"SCMP_CMP_EQ", SCMP_CMP_EQ},
	{"SCMP_CMP_GE", SCMP_CMP_GE}, {"SCMP_CMP_GT", SCMP_CMP_GT},
	{"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ},
};

const char *sc_op_name(int op)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++)
		if (ops[i].op == op)
			return ops[i].name;
	return "?";
}

int sc_op_parse(const char *name, int *op)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++)
		if (!strcmp(ops[i].name, name)) {
			*op = ops[i].op;
			return 0;
		}
	return -EINVAL;
}

#ifndef SCMP_ARCH_LOONGARCH64
/* Newer than this libseccomp; known by name so Docker's archMap loads. */
#define SCMP_ARCH_LOONGARCH64 0xc0000102U
#endif

/* name: SCMP_ARCH_*; go: Docker's runtime.GOARCH spelling in "arches". */
static const struct { const char *name, *go; uint32_t arch; } arches[] = {
	{"SCMP_ARCH_X86", "x86", SCMP_ARCH_X86},
	{"SCMP_ARCH_X86_64", "amd64", SCMP_ARCH_X86_64},
	{"SCMP_ARCH_X32", "x32", SCMP_ARCH_X32},
	{"SCMP_ARCH_ARM", "arm", SCMP_ARCH_ARM},
	{"SCMP_ARCH_AARCH64", "arm64", SCMP_ARCH_AARCH64},
	{"SCMP_ARCH_MIPS", "mips", SCMP_ARCH_MIPS},
	{"SCMP_ARCH_MIPS64", "mips64", SCMP_ARCH_MIPS64},
	{"SCMP_ARCH_MIPS64N32", "mips64n32", SCMP_ARCH_MIPS64N32},
	{"SCMP_ARCH_MIPSEL", "mipsle", SCMP_ARCH_MIPSEL},
	{"SCMP_ARCH_MIPSEL64", "mips64le", SCMP_ARCH_MIPSEL64},
	{"SCMP_ARCH_MIPSEL64N32", "mips64n32le", SCMP_ARCH_MIPSEL64N32},
	{"SCMP_ARCH_PPC", "ppc", SCMP_ARCH_PPC},
	{"SCMP_ARCH_PPC64", "ppc64", SCMP_ARCH_PPC64},
	{"SCMP_ARCH_PPC64LE", "ppc64le", SCMP_ARCH_PPC64LE},
	{"SCMP_ARCH_S390", "s390", SCMP_ARCH_S390},
	{"SCMP_ARCH_S390X", "s390x", SCMP_ARCH_S390X},
	{"SCMP_ARCH_PARISC", "parisc", SCMP_ARCH_PARISC},
	{"SCMP_ARCH_PARISC64", "parisc64", SCMP_ARCH_PARISC64},
	{"SCMP_ARCH_RISCV64", "riscv64", SCMP_ARCH_RISCV64},
	{"SCMP_ARCH_LOONGARCH64", "loong64", SCMP_ARCH_LOONGARCH64},
};

const char *sc_arch_name(uint32_t arch)
{
	for (size_t i = 0; i < sizeof(arches) / sizeof(*arches); i++)
		if (arches[i].arch == arch)
			return arches[i].name;
	return "?";
}

int sc_arch_parse(const char *name, uint32_t *arch)
{
	for (size_t i = 0; i < sizeof(arches) / sizeof(*arches); i++)
		if (!strcmp(arches[i].name, name)) {
			*arch = arches[i].arch;
			return 0;
		}
	return -EINVAL;
}

bool sc_arch_is_native(const char *name)
{
	uint32_t native = seccomp_arch_native();

	for (size_t i = 0; i < sizeof(arches) / sizeof(*arches); i++)
		if (arches[i].arch == native)
			return !strcmp(name, arches[i].go) || !strcmp(name, arches[i].name) ||
			       !strcasecmp(name, arches[i].name + strlen("SCMP_ARCH_"));
	return false;
}
