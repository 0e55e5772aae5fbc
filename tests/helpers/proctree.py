#!/usr/bin/env python3
"""Process-tree helpers for tests: find what a launch started, kill its
root, and wait (on pidfds, with a deadline) until every one of those
processes is gone. Scoped to the tree: other tests' processes never count.

  proctree.py kill_and_wait ROOTPID [TIMEOUT_S]   exit 0 if all gone, 1 if not;
      with PT_KILL_BY=<CLOCK_REALTIME ns> in the environment, exit 2 if the
      kill came later than that (a test that needs it inside a window)
  proctree.py wait_child PID [TIMEOUT_S]          print the first child's pid
"""
import os, select, signal, sys, time


def children():
    """ppid -> [pid] for every process we can see."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
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
    os.kill(root, signal.SIGKILL)
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


def wait_child(pid, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        k = children().get(pid)
        if k:
            print(k[0])
            return 0
        time.sleep(0.01)
    return 1


if __name__ == "__main__":
    f, args = sys.argv[1], sys.argv[2:]
    sys.exit({"kill_and_wait": kill_and_wait, "wait_child": wait_child}[f](
        int(args[0]), *(float(a) for a in args[1:])))
