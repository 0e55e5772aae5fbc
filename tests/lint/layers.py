#!/usr/bin/env python3
"""`make layers`: every #include "..." in the product's sources points down a
layer or sideways within its own folder, and no two folders of one layer
include each other (directly or round a loop), and no files of one folder
include each other round a loop (a file circle; foo.c and foo.h count as one
node). No exceptions list: a finding is fixed by moving the shared piece down
or into a file of its own (docs/architecture.md).

usage: layers.py [--file-cycles] [ROOT]   (ROOT: the tree to check, default
the repository; --file-cycles adds the file-circle check, not yet part of
`make layers` while circles remain open: issue 30 item 2)
Prints FILE:LINE: why for each finding; exit 1 if any, 0 if none."""
import os
import re
import sys

# Layers, top first. A folder may include its own files, any folder of a
# lower layer, and a folder of its own layer that is listed AFTER it (the
# order within a layer is part of the rule: no cycle can form).
LAYERS = [
    ("cli", ["src/cli", "src/cli/bwrap"]),
    ("features", ["src/session", "src/executors", "src/state", "src/sandbox", "src/workspace"]),
    ("kernel", ["ns", "seccomp/gen", "seccomp", "cgroups"]),
    ("policy", ["src/policy"]),
    ("util", ["src/util"]),
]
SOURCE_DIRS = ["src", "ns", "seccomp", "cgroups"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def rank_table():
    rank = {}
    for li, (name, folders) in enumerate(LAYERS):
        for fi, folder in enumerate(folders):
            rank[folder] = (li, fi, name)
    return rank


def sources(root):
    for top in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    path = os.path.join(dirpath, f)
                    yield os.path.relpath(path, root).replace(os.sep, "/")


def check_include(rank, src, line_no, target):
    """One finding as a string, or None when the include is allowed."""
    here = os.path.dirname(src)
    if "/" not in target:
        return None   # a same-folder include ("foo.h" next to foo.c)
    there = os.path.dirname(target)
    if here == there:
        return None
    if here not in rank:
        return f"{src}:{line_no}: folder {here}/ is in no layer (tests/lint/layers.py)"
    if there not in rank:
        return f"{src}:{line_no}: includes {target}: folder {there}/ is in no layer"
    (hl, hf, hname), (tl, tf, tname) = rank[here], rank[there]
    if tl < hl:
        return (f"{src}:{line_no}: includes {target}: goes up from the {hname} layer "
                f"to the {tname} layer")
    if tl == hl and tf < hf:
        return (f"{src}:{line_no}: includes {target}: {here}/ may not include {there}/ "
                f"(same {hname} layer, {there}/ is above it: would close a folder cycle)")
    return None


def node_of(path):
    """foo.c and foo.h are one node: a .c file includes its own header."""
    return path[:-2] if path.endswith((".c", ".h")) else path


def resolve(src, target):
    """The repository path an #include "target" in src names, or None when it
    leaves src's folder (folder arrows are check_include's business)."""
    here = os.path.dirname(src)
    path = target if "/" in target else f"{here}/{target}"
    return path if os.path.dirname(path) == here else None


def strong_components(graph):
    """Tarjan's algorithm, iterative: the components of more than one node."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def file_cycles(edges):
    """edges: (src, line, target path) within one folder. One finding per
    circle, naming the first include that closes it."""
    graph, where = {}, {}
    for src, n, path in edges:
        a, b = node_of(src), node_of(path)
        if a == b:
            continue
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
        where.setdefault((a, b), f"{src}:{n}")
    findings = []
    for comp in strong_components(graph):
        members = set(comp)
        first = sorted(w for (a, b), w in where.items() if a in members and b in members)[0]
        names = ", ".join(os.path.basename(c) for c in comp)
        findings.append(f"{first}: file circle in {os.path.dirname(comp[0])}/: "
                        f"{names} include each other (move the shared half to its own file)")
    return findings


def main(argv):
    args = argv[1:]
    want_cycles = "--file-cycles" in args
    args = [a for a in args if a != "--file-cycles"]
    root = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "..")
    rank = rank_table()
    findings, edges = [], []
    for src in sources(root):
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if m:
                    why = check_include(rank, src, n, m.group(1))
                    if why:
                        findings.append(why)
                    same = resolve(src, m.group(1))
                    if same:
                        edges.append((src, n, same))
    if want_cycles:
        findings += file_cycles(edges)
    for why in findings:
        print(why)
    if findings:
        print(f"layers: {len(findings)} finding(s) against the layer order or "
              "file circles (docs/architecture.md, Layers)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
