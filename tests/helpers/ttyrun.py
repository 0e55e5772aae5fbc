#!/usr/bin/env python3
# Runs a command on a fresh pty, as a terminal emulator would, for the
# terminal tests. Usage:
#   ttyrun.py [--size ROWSxCOLS] [--expect TEXT | --send TEXT | --resize RxC]... -- CMD...
# Steps run in order: --expect waits (120 s at most) until TEXT has appeared
# in the output since the previous --expect, --send types TEXT (Python
# escapes: \r, \x03), --resize changes the window size, --signal NAME sends
# a signal to the terminal's foreground process group. All output goes to
# stdout; the exit status is the command's (128+N for a signal), 124 when a
# step or the command times out.
import codecs, fcntl, os, pty, select, signal, struct, sys, termios, time

DEADLINE = 120.0

def winsz(fd, spec):
    rows, cols = (int(x) for x in spec.split("x"))
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

def main():
    args = sys.argv[1:]
    steps, size = [], "24x80"
    while args and args[0] != "--":
        opt, val = args[0], args[1]
        args = args[2:]
        if opt == "--size":
            size = val
        else:
            steps.append((opt, val))
    cmd = args[1:]
    pid, fd = pty.fork()
    if pid == 0:
        # Sized before the command runs: a size set by the parent could
        # come after the command first looks at it.
        winsz(0, size)
        os.execvp(cmd[0], cmd)
    out, seen, status = b"", 0, None
    end = time.monotonic() + DEADLINE

    def pump(timeout):
        nonlocal out
        r, _, _ = select.select([fd], [], [], timeout)
        if not r:
            return True
        try:
            data = os.read(fd, 65536)
        except OSError:   # EIO: every slave is closed
            data = b""
        if not data:
            return False
        out += data
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return True

    alive = True
    for opt, val in steps:
        if opt == "--expect":
            want = codecs.decode(val, "unicode_escape").encode()
            while alive and want not in out[seen:]:
                if time.monotonic() > end:
                    print(f"\nttyrun: timed out waiting for {val!r}", file=sys.stderr)
                    os.kill(pid, 9)
                    sys.exit(124)
                alive = pump(1.0)
            if want not in out[seen:]:
                print(f"\nttyrun: output ended before {val!r}", file=sys.stderr)
                break
            seen = out.index(want, seen) + len(want)
        elif opt == "--send":
            os.write(fd, codecs.decode(val, "unicode_escape").encode())
        elif opt == "--resize":
            winsz(fd, val)
        elif opt == "--signal":
            os.killpg(os.tcgetpgrp(fd), getattr(signal, "SIG" + val))
    while alive and time.monotonic() < end:
        alive = pump(1.0)
    if alive:
        print("\nttyrun: command timed out", file=sys.stderr)
        os.kill(pid, 9)
        sys.exit(124)
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status) if status & 0x7f == 0 else 128 + (status & 0x7f))

main()
