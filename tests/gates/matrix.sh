#!/bin/bash
# The build matrix: the tree builds warning-free (WERROR=-Werror) with gcc
# at -O0 and -O3 and with Debian's clang (the main build is gcc -O2), and the unit tests pass in
# each build. Each build has its own object tree under build/matrix/. Root
# pass only (the unprivileged pass runs on a copy without the sources).
source "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || exit 0
# make check-asan (CLOISTER_BUILD=build-asan) reruns the suites that drive
# the binary; this one does not depend on which binary runs it.
[ "${CLOISTER_BUILD:-build}" = build ] || exit 0
M=$TOP/build/matrix
UNITS=$(cd "$TOP" && ls tests/unit/test_*.c | sed 's|tests/unit/||; s|\.c$||')

build_and_unit() {  # name cc cflags
	local name=$1 cc=$2 cflags=$3 b=$M/$1 u
	command -v "$cc" >/dev/null || fail "$cc is not installed (tests/deps.sh installs it)"
	# (env -u: a make -jN around us must not add its own warning to the log)
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP" -j2 B="$b" CC="$cc" CFLAGS="$cflags" WERROR=-Werror \
		"$b/cloister" $(for u in $UNITS; do echo "$b/tests/$u"; done) >"$T_TMP/build.log" 2>&1 ||
		fail "$name build: $(grep -E 'error|warning' "$T_TMP/build.log" | head -3)"
	! grep -q 'warning:' "$T_TMP/build.log" || fail "$name warnings: $(grep warning: "$T_TMP/build.log" | head -3)"
	"$b/cloister" version >/dev/null || fail "$name: the binary does not run"
	for u in $UNITS; do
		(cd "$TOP" && "$b/tests/$u") >"$T_TMP/unit.log" 2>&1 || fail "$name $u: $(grep FAIL "$T_TMP/unit.log" | head -3)"
	done
}

t_gcc_O0() { build_and_unit gcc-O0 gcc "-O0 -g"; }
t_gcc_O3() { build_and_unit gcc-O3 gcc "-O3 -g"; }
t_clang_O2() { build_and_unit clang-O2 clang "-O2 -g"; }

run_tests
