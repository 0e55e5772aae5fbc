#!/usr/bin/env python3
# Reads CLOISTER_TRACE stamps of many runs (bench/tstamp driving cloister)
# on stdin and prints the median duration of each launch phase as markdown.
import sys

# Each phase runs from the first stamp to the second; "who step" names.
PHASES = [
    ("driver spawn", "parent start", "cloister process start: exec, ld.so, main, option parsing"),
    ("parent start", "parent prepare", "parent: prepare (seccomp program, cgroup, signalfd, argv)"),
    ("parent prepare", "child start", "clone3: new user/mnt/pid/net/ipc/uts/cgroup namespaces"),
    ("child start", "child die-with-parent", "child: die-with-parent"),
    ("child die-with-parent", "child uid/gid maps", "child: setgroups deny, uid_map, gid_map"),
    ("child uid/gid maps", "child cgroup placement", "child: cgroup placement (wait for go)"),
    ("child cgroup placement", "child mounts", "child: mounts (root tmpfs, binds, proc, dev, tmp, pivot_root)"),
    ("child mounts", "child network", "child: loopback up (netlink)"),
    ("child network", "child hostname", "child: hostname"),
    ("child hostname", "init fork", "init: fork of the command"),
    ("init fork", "command pre-exec", "command: setsid, chdir, close_range, caps drop, no_new_privs, seccomp"),
    ("command pre-exec", "init command reaped", "command: execve + run + exit, init reaps it"),
    ("init command reaped", "parent supervise", "init exit: namespace teardown, parent wakes on pidfd"),
    ("parent supervise", "parent release", "parent: reap init, collect, release"),
    ("parent release", "driver reaped", "cloister process exit (status print, exit, unmap)"),
]


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if not n:
        return None
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


runs, cur = [], None
for line in sys.stdin:
    parts = line.split()
    if len(parts) < 4 or parts[0] != "cloister-trace:":
        continue
    t, key = int(parts[1]), " ".join(parts[2:])
    if key == "driver spawn":
        cur = {}
        runs.append(cur)
    if cur is not None:
        cur.setdefault(key, t)

total = median([r["driver reaped"] - r["driver spawn"] for r in runs
                if "driver reaped" in r and "driver spawn" in r])
print(f"{len(runs)} traced launches; median total {total / 1e6:.3f} ms\n")
print("| phase | median ms | share |")
print("|---|---|---|")
covered = 0.0
for a, b, label in PHASES:
    d = [r[b] - r[a] for r in runs if a in r and b in r]
    m = median(d)
    if m is None:
        print(f"| {label} | n/a | |")
        continue
    covered += m
    print(f"| {label} | {m / 1e6:.3f} | {100 * m / total:.0f}% |")
print(f"| (sum of phase medians) | {covered / 1e6:.3f} | {100 * covered / total:.0f}% |")
