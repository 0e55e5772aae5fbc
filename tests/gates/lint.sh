#!/bin/bash
# Static analysis and valgrind: `make lint` (cppcheck and clang-tidy with
# the committed configuration) finds nothing, and every unit test runs
# clean under valgrind's memcheck (`make check-valgrind`). lint needs the
# sources: root pass only (the unprivileged pass runs on a copy without
# them); valgrind runs in both.
# clang-tidy over the tree takes about two minutes on a quiet 2-core box,
# over five with both CPUs busy (CI under load killed lint_clean at lib.sh's
# 300 s, which this line did not override until lib.sh applied its default
# only when the tests run).
T_LIMIT=${T_LIMIT:-1200}
source "$(dirname "$0")/../lib.sh"
# Not part of make check-asan (CLOISTER_BUILD=build-asan): nothing here
# depends on which cloister binary the suites run.
[ "${CLOISTER_BUILD:-build}" = build ] || exit 0

if is_root; then
	# The layer order holds (no include goes up a layer or closes a folder
	# cycle), and the check can fail: its self-test plants arrows.
	t_layers_clean() {
		"$TOP/tests/lint/layers.py" >"$T_TMP/layers.log" 2>&1 ||
			fail "$(head -4 "$T_TMP/layers.log" | tr '\n' ' ')"
	}
	t_layers_selftest_catches_planted_arrows() {
		"$TOP/tests/lint/layers_selftest.sh" >"$T_TMP/lsel.log" 2>&1 ||
			fail "$(head -3 "$T_TMP/lsel.log" | tr '\n' ' ')"
	}
	t_lint_clean() {
		"$TOP/tests/lint/lint.sh" >"$T_TMP/lint.log" 2>&1 ||
			fail "$(grep -v '^lint: clean' "$T_TMP/lint.log" | grep -m4 -E 'error|warning|lint:' | tr '\n' ' ')"
		grep -q '^lint: clean' "$T_TMP/lint.log" || fail "lint did not report clean: $(tail -2 "$T_TMP/lint.log")"
	}
fi

t_unit_tests_under_valgrind() {
	local units
	units=$(ls "$TOP"/build/tests/test_* 2>/dev/null)
	[ -n "$units" ] || fail "no unit test binaries in $TOP/build/tests"
	# shellcheck disable=SC2086
	(cd "$TOP" && tests/lint/valgrind.sh $units) >"$T_TMP/vg.log" 2>&1 ||
		fail "$(grep -m3 FAIL "$T_TMP/vg.log" | tr '\n' ' ')"
	[ "$(grep -c '^PASS valgrind' "$T_TMP/vg.log")" = "$(echo "$units" | wc -l)" ] ||
		fail "not every unit test ran: $(cat "$T_TMP/vg.log")"
}

run_tests
