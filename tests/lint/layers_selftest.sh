#!/bin/bash
# The layer check can fail: on a small tree it passes clean, then fails,
# naming file:line, on one planted upward include, one planted include that
# would close a folder cycle, and one folder outside every layer.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/cloister-layers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
rc=0
mk() { mkdir -p "$tmp/$(dirname "$1")"; printf '%s\n' "${@:2}" >"$tmp/$1"; }
expect() {   # expect WANT(pass|FILE:LINE) DESCRIPTION
	local out
	out=$(python3 "$HERE/layers.py" "$tmp" 2>&1); local got=$?
	if [ "$1" = pass ]; then
		[ $got = 0 ] || { echo "layers self-test: $2: failed on a clean tree: $out"; rc=1; }
	elif [ $got = 0 ] || ! grep -q "^$1: " <<<"$out"; then
		echo "layers self-test: $2: not caught at $1 (exit $got): $out"; rc=1
	fi
}
mk src/util/error.h '/* x */'
mk src/policy/policy.h '#include "src/util/error.h"'
mk src/sandbox/run.c '#include "src/sandbox/run.h"' '#include "src/policy/policy.h"' '#include "src/util/error.h"'
mk src/sandbox/run.h '#include <stdio.h>'
mk src/cli/main.c '#include "src/sandbox/run.h"' '#include "src/cli/bwrap/bwrap.h"'
mk src/cli/bwrap/bwrap.h '#include "src/policy/policy.h"'
mk ns/init.c '#include "ns/init.h"' '#include "seccomp/seccomp.h"'
expect pass "clean tree"
mk src/util/fdio.c '#include "src/util/error.h"' '#include "src/cli/cli.h"'
expect src/util/fdio.c:2 "upward include (util -> cli)"
rm "$tmp/src/util/fdio.c"
mk seccomp/load.c '#include "ns/init.h"'
expect seccomp/load.c:1 "folder cycle (seccomp -> ns, ns -> seccomp)"
rm "$tmp/seccomp/load.c"
mk src/newfolder/x.c '#include "src/util/error.h"'
expect src/newfolder/x.c:1 "a folder in no layer"
rm -r "$tmp/src/newfolder"
expect pass "clean tree again"
# A file circle: a.c -> b.h, b.c -> a.h in one folder (--file-cycles).
mk src/sandbox/a.c '#include "src/sandbox/a.h"' '#include "src/sandbox/b.h"'
mk src/sandbox/a.h '/* a */'
mk src/sandbox/b.c '#include "src/sandbox/b.h"'
mk src/sandbox/b.h '#include "src/sandbox/a.h"'
out=$(python3 "$HERE/layers.py" --file-cycles "$tmp" 2>&1)
grep -q '^src/sandbox/a.c:2: file circle' <<<"$out" ||
	{ echo "layers self-test: file circle a<->b not caught: $out"; rc=1; }
rm "$tmp/src/sandbox/b.h"; mk src/sandbox/b.h '/* b */'
python3 "$HERE/layers.py" --file-cycles "$tmp" >/dev/null 2>&1 ||
	{ echo "layers self-test: own-header include (foo.c+foo.h) taken for a circle"; rc=1; }
[ $rc = 0 ] && echo "layers self-test: ok (a clean tree passes, 3 planted arrows and a file circle caught)"
exit $rc
