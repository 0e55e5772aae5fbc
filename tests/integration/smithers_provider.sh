#!/bin/bash
# bindings/smithers: Smithers' own provider contract suite
# (createSandboxProviderContractSuite, bun:test), the provider's end-to-end
# test and a real Smithers workflow (runWorkflow with a <Sandbox>), all over
# real cloister sessions. bun and the pinned Smithers packages come from npm
# into build/smithers/ (bindings/smithers/test-deps.json); tests/prepare.sh
# installs them before both passes, the user pass uses the copy tests/run.sh makes.
# runWorkflow starts Smithers' engine per case, and the first test also
# installs the packages: more than lib.sh's default. Before lib.sh, which
# keeps a T_LIMIT already set.
T_LIMIT=${T_LIMIT:-600}
. "$(dirname "$0")/../lib.sh"
DEPS=$TOP/build/smithers
BUN=$DEPS/node_modules/.bin/bun
# The package under test; make mutate points SRC_TOP at its mutated copy.
PKG=${SRC_TOP:-$TOP}/bindings/smithers

# Installs once (cached by the pinned list's content).
deps() {
	local want; want=$(sha256sum <"$TOP/bindings/smithers/test-deps.json")
	[ -x "$BUN" ] && [ "$(cat "$DEPS/.pinned" 2>/dev/null)" = "$want" ] && return 0
	command -v npm >/dev/null || fail "npm is missing (tests/deps.sh install)"
	mkdir -p "$DEPS" || fail "cannot create $DEPS (tests/prepare.sh installs it as root)"
	# From nothing: a lock file left by another list would keep its
	# resolutions (an override added later would not apply).
	rm -rf "$DEPS/node_modules" "$DEPS/package-lock.json" "$DEPS/.pinned"
	cp "$TOP/bindings/smithers/test-deps.json" "$DEPS/package.json"
	# ~800 packages (smithers-orchestrator's tree): a few minutes at most.
	(cd "$DEPS" && timeout 1200 npm install --no-audit --no-fund --loglevel=error >"$DEPS/npm.log" 2>&1) ||
		fail "npm install of the pinned Smithers packages failed: $(tail -3 "$DEPS/npm.log")"
	echo "$want" >"$DEPS/.pinned"
}
# CLOISTER_PREPARE=1 (tests/prepare.sh): only the install, before both
# passes start (the user pass runs on a hard-linked copy of it).
if [ "${CLOISTER_PREPARE:-0}" = 1 ]; then
	(deps)
	exit
fi

# The package as published (src, test, package.json) beside the installed
# dependencies, so the tests resolve them as a user's install would.
bun_test() {  # test-file -> OUT, RC
	deps
	mkdir -p "$T_TMP/pkg" "$T_TMP/tmp"
	cp -r "$PKG/src" "$PKG/test" "$PKG/package.json" "$T_TMP/pkg/"
	ln -s "$DEPS/node_modules" "$T_TMP/node_modules"
	# TMPDIR of the test's own: what the provider leaves there is seen.
	OUT=$(cd "$T_TMP/pkg" && CLOISTER=$CL CLOISTER_RUNTIME_DIR=$T_TMP/run HOME=$T_TMP TMPDIR=$T_TMP/tmp \
		WF_MARK=${WF_MARK:-} CL_LIMITS=$(is_root && echo 1) "$BUN" test "$1" 2>&1); RC=$?
}
no_sessions_left() {
	assert_eq "[]" "$(CLOISTER_RUNTIME_DIR=$T_TMP/run "$CL" ls --json)" "sessions left behind"
}

t_smithers_contract_suite() {
	bun_test test/contract.test.js
	assert_eq 0 "$RC" "contract suite: $(printf '%s' "$OUT" | tail -15)"
	assert_contains "$OUT" " 0 fail"
	# the suite's own test count (16 in 0.32.0): all of them ran
	local n; n=$(printf '%s' "$OUT" | sed -n 's/^ *\([0-9]*\) pass$/\1/p')
	[ "${n:-0}" -ge 16 ] || fail "only ${n:-0} contract tests passed: $OUT"
	no_sessions_left
}

t_provider_end_to_end() {
	bun_test test/provider.test.js
	assert_eq 0 "$RC" "provider test: $(printf '%s' "$OUT" | tail -15)"
	assert_contains "$OUT" " 0 fail"
	no_sessions_left
}

# runWorkflow of a <Sandbox provider={createCloisterSandboxProvider()}>:
# OOM under <Sandbox memoryLimit> (root; as the user on a host where the
# limit cannot be applied, the run must fail naming it), network denied and
# allowed, Smithers' task timeout and the provider's, and cleanup. The
# commands carry a marker: none of them may be left running.
t_smithers_workflow_end_to_end() {
	WF_MARK=$(marker wf) bun_test test/workflow.test.js
	assert_eq 0 "$RC" "workflow test: $(printf '%s' "$OUT" | tail -25)"
	assert_contains "$OUT" " 0 fail"
	local n; n=$(printf '%s' "$OUT" | sed -n 's/^ *\([0-9]*\) pass$/\1/p')
	[ "${n:-0}" -ge 6 ] || fail "only ${n:-0} workflow tests passed: $OUT"
	no_sessions_left
	assert_gone "$(marker wf)"
}

run_tests
