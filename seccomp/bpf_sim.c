/* Interprets seccomp cBPF the way the kernel does (loads from seccomp_data,
 * forward jumps only), so compiled profiles can be checked before use. */
#include "seccomp/bpf_sim.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

int sc_bpf_run(const struct sock_filter *prog, size_t len, const struct seccomp_data *d,
               uint32_t *ret)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0}, k;
	const uint8_t *data = (const uint8_t *)d;

	for (size_t pc = 0; pc < len; pc++) {
		const struct sock_filter *i = &prog[pc];
		uint32_t src;

		k = i->k;
		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
		case BPF_LDX: {
			uint32_t v;
			if (BPF_MODE(i->code) == BPF_ABS && BPF_SIZE(i->code) == BPF_W &&
			    BPF_CLASS(i->code) == BPF_LD) {
				if (k % 4 || k + 4 > sizeof(*d))
					return -EINVAL;
				memcpy(&v, data + k, 4);
			} else if (BPF_MODE(i->code) == BPF_IMM) {
				v = k;
			} else if (BPF_MODE(i->code) == BPF_MEM && k < BPF_MEMWORDS) {
				v = mem[k];
			} else if (BPF_MODE(i->code) == BPF_LEN) {
				v = sizeof(*d);
			} else {
				return -EINVAL;
			}
			if (BPF_CLASS(i->code) == BPF_LD)
				a = v;
			else
				x = v;
			break;
		}
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_MEMWORDS)
				return -EINVAL;
			mem[k] = BPF_CLASS(i->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			src = BPF_SRC(i->code) == BPF_X ? x : k;
			switch (BPF_OP(i->code)) {
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_MUL: a *= src; break;
			case BPF_DIV: if (!src) return -EINVAL; a /= src; break;
			case BPF_MOD: if (!src) return -EINVAL; a %= src; break;
			case BPF_AND: a &= src; break;
			case BPF_OR: a |= src; break;
			case BPF_XOR: a ^= src; break;
			case BPF_LSH: a = src < 32 ? a << src : 0; break;
			case BPF_RSH: a = src < 32 ? a >> src : 0; break;
			case BPF_NEG: a = -a; break;
			default: return -EINVAL;
			}
			break;
		case BPF_JMP: {
			bool t;
			src = BPF_SRC(i->code) == BPF_X ? x : k;
			if (BPF_OP(i->code) == BPF_JA) {
				pc += k;
				break;
			}
			switch (BPF_OP(i->code)) {
			case BPF_JEQ: t = a == src; break;
			case BPF_JGT: t = a > src; break;
			case BPF_JGE: t = a >= src; break;
			case BPF_JSET: t = (a & src) != 0; break;
			default: return -EINVAL;
			}
			pc += t ? i->jt : i->jf;
			break;
		}
		case BPF_RET:
			*ret = BPF_RVAL(i->code) == BPF_A ? a : k;
			return 0;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			return -EINVAL;
		}
	}
	return -EINVAL;  /* fell off the end: the kernel refuses such programs */
}
