#!/bin/bash
# bench/run.sh's deadlines (issue 38 item 2): a planted row whose server is
# never reached (blast sink on an ephemeral port no client knows) must be
# reported `timeout` with its command, the bench must write its whole
# report and end, exit non-zero, and leave the checkout clean (item 6).
# About 8 s a pass (CMD_S 2; the two passes run side by side).
source "$(dirname "$0")/../lib.sh"

t_bench_planted_hang_reported_timeout() {
	local res="$T_TMP/res" rc=0
	# Control: the planted command really hangs (it is killed by timeout).
	timeout 1 "$TOP/build/bench/blast" sink 0 1 >/dev/null; rc=$?
	assert_eq 124 "$rc" "planted server hangs without the bench"
	rc=0
	CLOISTER_BENCH_RESULTS=$res CLOISTER_BENCH_ONLY=PLANT CLOISTER_BENCH_CMD_S=2 \
		CLOISTER_BENCH_PLANT="plant.never|server no client reaches|@BIN@/blast sink 0 1" \
		timeout 120 "$TOP/bench/run.sh" --quick >"$T_TMP/out" 2>&1 || rc=$?
	[ $rc = 124 ] && fail "bench did not end: $(tail -5 "$T_TMP/out")"
	[ $rc != 0 ] || fail "bench exited 0 with a timed-out row"
	[ -f "$res/quick.md" ] && [ -f "$res/quick.json" ] && [ -f "$res/quick.svg" ] ||
		fail "report not written: $(tail -5 "$T_TMP/out")"
	assert_contains "$(grep plant.never "$res/quick.md")" "| timeout |" "row reported timeout"
	assert_contains "$(grep plant.never "$res/quick.md")" "blast sink 0 1" "timeout row names its command"
	assert_contains "$(cat "$T_TMP/out")" "1 group(s) timed out" "bench says it timed out"
	assert_eq "" "$(git -C "$TOP" status --porcelain -- bench/results docs/performance.md 2>/dev/null)" \
		"bench left tracked results untouched"
}

run_tests
