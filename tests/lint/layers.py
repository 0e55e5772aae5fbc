#!/usr/bin/env python3
"""`make layers`: every #include "..." in the product's sources points down a
layer or sideways within its own folder, and no two folders of one layer
include each other (directly or round a loop). No exceptions list: a finding
is fixed by moving the shared piece down (docs/architecture.md).

usage: layers.py [ROOT]   (ROOT: the tree to check, default the repository)
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


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    rank = rank_table()
    findings = []
    for src in sources(root):
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if m:
                    why = check_include(rank, src, n, m.group(1))
                    if why:
                        findings.append(why)
    for why in findings:
        print(why)
    if findings:
        print(f"layers: {len(findings)} include(s) against the layer order "
              "(docs/architecture.md, Layers)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
