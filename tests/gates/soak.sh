#!/bin/bash
# A short fault-injection soak (tests/soak/soak.sh; `make soak` is the long
# one): SIGKILLs and strace-injected failures at random points of
# `cloister run`, then nothing may be left (processes, ports, mounts,
# cgroups after gc, temp/state files), and each injected error either is
# tolerated or ends in one "cloister: " line and exit 125. SOAK_RUNS
# (default 60) and SOAK_SEED (default: random, printed) as there. Then a
# short one of sandbox mode.
source "$(dirname "$0")/../lib.sh"

t_short_soak() {
	SOAK_RUNS=${SOAK_RUNS:-60} CLOISTER="$CL" "$TOP/tests/soak/soak.sh" >"$T_TMP/soak.log" 2>&1 ||
		fail "$(grep -m3 FAIL "$T_TMP/soak.log" | cut -c1-300 | tr '\n' ' ') $(tail -1 "$T_TMP/soak.log")"
	grep -q ' 0 failures$' "$T_TMP/soak.log" || fail "no summary: $(tail -2 "$T_TMP/soak.log")"
}

# The same for `cloister sandbox run` (tests/soak/soak_sandbox.sh): then
# the state database passes its integrity check, every row is final with
# its final event, and no request/ or tmp/ is left after gc.
t_short_sandbox_soak() {
	SOAK_RUNS=${SOAK_RUNS:-40} CLOISTER="$CL" "$TOP/tests/soak/soak_sandbox.sh" >"$T_TMP/soak.log" 2>&1 ||
		fail "$(grep -m3 FAIL "$T_TMP/soak.log" | cut -c1-300 | tr '\n' ' ') $(tail -1 "$T_TMP/soak.log")"
	grep -q ' 0 failures$' "$T_TMP/soak.log" || fail "no summary: $(tail -2 "$T_TMP/soak.log")"
}

run_tests
