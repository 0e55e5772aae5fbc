#!/bin/bash
# The libFuzzer targets (tests/fuzz/, `make fuzz`): built with clang, ASan
# and UBSan, each replays its committed corpus and regression inputs and
# then fuzzes for FUZZ_SECONDS (default 20 here). Root pass only: the
# unprivileged pass runs on a copy without the sources to build from (the
# parsers do not depend on who runs them).
source "$(dirname "$0")/../lib.sh"
# Not part of make check-asan (CLOISTER_BUILD=build-asan): nothing here
# depends on which cloister binary the suites run.
[ "${CLOISTER_BUILD:-build}" = build ] || exit 0
FUZZ_SECONDS=${FUZZ_SECONDS:-20}

if is_root; then
	t_build_targets() {
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP" -j2 fuzz-build >"$T_TMP/build.log" 2>&1 ||
			fail "make fuzz-build: $(grep -E 'error|warning' "$T_TMP/build.log" | head -3)"
	}
	fuzz_one() {  # target
		FUZZ_SECONDS=$FUZZ_SECONDS "$TOP/tests/fuzz/run.sh" "$1" >"$T_TMP/run.log" 2>&1 ||
			fail "$(grep FAIL "$T_TMP/run.log" | head -2)"
		grep -q "^replayed" "$T_TMP/run.log" || fail "nothing replayed: $(tail -2 "$T_TMP/run.log")"
		[ "$FUZZ_SECONDS" = 0 ] || grep -q "^fuzzed $1 " "$T_TMP/run.log" || fail "did not fuzz: $(tail -2 "$T_TMP/run.log")"
	}
	for t in $(cd "$TOP/tests/fuzz" && ls fuzz_*.c | sed 's/\.c$//'); do
		eval "t_${t}() { fuzz_one $t; }"
	done
fi

run_tests
