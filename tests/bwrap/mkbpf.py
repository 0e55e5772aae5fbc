#!/usr/bin/env python3
# Writes a raw seccomp cBPF program (as bwrap --seccomp FD reads it) to
# stdout: on x86_64, the syscall numbers given fail with errno; all else runs.
#   mkbpf.py ERRNO NR [NR...]
import struct
import sys

LD_ABS, JEQ, RET = 0x20, 0x15, 0x06
ALLOW, ERRNO = 0x7FFF0000, 0x00050000
errno, nrs = int(sys.argv[1]), [int(a) for a in sys.argv[2:]]
prog = [(LD_ABS, 0, 0, 4), (JEQ, 1, 0, 0xC000003E), (RET, 0, 0, ALLOW), (LD_ABS, 0, 0, 0)]
for i, nr in enumerate(nrs):
    # jump to the final "deny" on a match
    prog.append((JEQ, len(nrs) - i, 0, nr))
prog += [(RET, 0, 0, ALLOW), (RET, 0, 0, ERRNO | errno)]
sys.stdout.buffer.write(b"".join(struct.pack("=HBBI", *ins) for ins in prog))
