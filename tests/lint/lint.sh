#!/bin/bash
# `make lint`: the layer check (tests/lint/layers.py), cppcheck and
# clang-tidy (Debian's 2.10 and 14) over the product's sources (src/ ns/
# seccomp/ cgroups/). Clean means no finding
# at all: the configuration is committed (.clang-tidy, tests/lint/) and
# every check or site left out says why. Prints each finding; exits 1 if
# there is any. LINT_JOBS (default 2) clang-tidy processes in parallel.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
JOBS=${LINT_JOBS:-2}
for tool in cppcheck clang-tidy; do
	command -v $tool >/dev/null || { echo "lint: $tool is not installed (tests/deps.sh installs it)"; exit 1; }
done
# LINT_FILES: a subset (while fixing a finding); default all sources.
SRC=${LINT_FILES:-$(ls src/*/*.c src/cli/bwrap/*.c ns/*.c seccomp/*.c cgroups/*.c)}
log=$(mktemp /tmp/cloister-lint.XXXXXX)
trap 'rm -f "$log"' EXIT
rc=0

# The layer order (make layers): its self-test, then the tree.
if ! tests/lint/layers_selftest.sh >"$log" 2>&1 || ! tests/lint/layers.py >>"$log" 2>&1; then
	echo "lint: layer findings:"; cat "$log"; rc=1
fi
# cppcheck: the bug classes (warning), plus portability and performance;
# style is left out (scope and const suggestions, not defects).
if ! cppcheck -q -j"$JOBS" --std=c11 --enable=warning,portability,performance \
     --library=tests/lint/jansson.cfg --suppressions-list=tests/lint/cppcheck.supp \
     --inline-suppr --error-exitcode=1 -D_GNU_SOURCE -DCL_NATIVE=1 -I. $SRC >"$log" 2>&1; then
	echo "lint: cppcheck findings:"; cat "$log"; rc=1
fi
# clang-tidy: the checks of .clang-tidy; compiled as the build does (the
# native build: CL_NATIVE=1, as the Makefile's default NATIVE).
: >"$log"
printf '%s\n' $SRC | xargs -P"$JOBS" -I{} clang-tidy --quiet {} -- -std=gnu17 -D_GNU_SOURCE -DCL_NATIVE=1 -I. \
	$(pkg-config --cflags jansson libcap libmnl libseccomp sqlite3 libgit2 2>/dev/null) >>"$log" 2>&1
if grep -qE '(warning|error): ' "$log"; then
	echo "lint: clang-tidy findings:"; grep -E -A3 '(warning|error): ' "$log"; rc=1
fi
[ $rc = 0 ] && echo "lint: clean ($(echo "$SRC" | wc -l) files: layers, cppcheck, clang-tidy)"
exit $rc
