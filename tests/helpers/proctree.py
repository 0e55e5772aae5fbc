#!/usr/bin/env python3
"""Process-tree helpers for tests: find what a launch started, kill its
root, and wait (on pidfds, with a deadline) until every one of those
processes is gone. Scoped to the tree: other tests' processes never count.

  proctree.py kill_and_wait ROOTPID [TIMEOUT_S]   exit 0 if all gone, 1 if not;
      with PT_KILL_BY=<CLOCK_REALTIME ns> in the environment, exit 2 if the
      kill came later than that (a test that needs it inside a window)
  proctree.py wait_child PID [PROG]               print the first child's pid
      (with PROG, the first whose argv[0] is PROG); 60 s deadline
"""
import os, select, signal, sys, time


def children():
    """ppid -> [pid] for every process we can see."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:   # bytes: a comm need not be valid UTF-8
            with open(f"/proc/{d}/stat", "rb") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue   # gone meanwhile
        kids.setdefault(ppid, []).append(int(d))
    return kids


def tree(root):
    kids, out, todo = children(), [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def kill_and_wait(root, timeout=60.0):
    # pidfds first: they keep naming these very processes even if a pid
    # number is reused later.
    fds = {}
    for p in tree(root):
        try:
            fds[os.pidfd_open(p)] = p
        except OSError:
            pass   # already gone
    print("tree:", " ".join(f"{p}({cmdline(p)})" for p in fds.values()), file=sys.stderr)
    late = time.time_ns() > int(os.environ.get("PT_KILL_BY", "0") or 0) > 0
    try:
        os.kill(root, signal.SIGKILL)
    except ProcessLookupError:
        # Not what a caller asked for: it meant to kill a live root.
        print(f"{root} was gone before the kill (tree: {' '.join(map(str, fds.values()))})")
        return 3
    poll, deadline = select.poll(), time.monotonic() + timeout
    for fd in fds:
        poll.register(fd, select.POLLIN)
    left = dict(fds)
    while left and time.monotonic() < deadline:
        for fd, _ in poll.poll(max(1, int((deadline - time.monotonic()) * 1000))):
            poll.unregister(fd)
            left.pop(fd, None)
    if left:
        print("left behind:", " ".join(f"{p}({cmdline(p)})" for p in left.values()))
        for p in left.values():   # do not leak them into later tests
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        return 1
    if late:
        print("the kill came after PT_KILL_BY: the window was missed (slow machine?)")
        return 2
    return 0


def argv0(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return None


def wait_child(pid, prog=None, timeout=60.0):
    """The first child of PID; with PROG, the first whose argv[0] is PROG
    (strace, for one, forks short-lived probe children before the tracee:
    a bare "first child" can name one that is already gone)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for k in sorted(children().get(pid, [])):
            if prog is None or argv0(k) == prog:
                print(k)
                return 0
        time.sleep(0.01)
    return 1


def main():
    f, args = sys.argv[1], sys.argv[2:]
    try:
        if f == "kill_and_wait":
            return kill_and_wait(int(args[0]), *map(float, args[1:]))
        if f == "wait_child":
            return wait_child(int(args[0]), *args[1:])
        raise ValueError("no such command")
    except Exception as e:   # on stdout: the caller's failure names it
        print(f"proctree {f}: {type(e).__name__}: {e}")
        return 4


if __name__ == "__main__":
    sys.exit(main())
