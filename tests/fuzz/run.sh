#!/bin/bash
# Runs the libFuzzer targets built by `make fuzz-build` (build-fuzz/fuzz/):
# first every committed input (tests/fuzz/corpus/<target>/ and
# tests/fuzz/regress/<target>/) once, then FUZZ_SECONDS of fuzzing per
# target from the corpus. New inputs go to a scratch corpus under
# build-fuzz/, never into the committed one; a crash input is saved in
# build-fuzz/artifacts/ and the run fails naming it.
#   tests/fuzz/run.sh [TARGET...]    (default: all; FUZZ_SECONDS=0: replay only)
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BF=${BUILD_FUZZ:-$TOP/build-fuzz}
SECS=${FUZZ_SECONDS:-60}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Leaks inside libseccomp itself are suppressed (tests/fuzz/lsan.supp says why).
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$TOP/tests/fuzz/lsan.supp:print_suppressions=0}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=($(cd "$TOP/tests/fuzz" && ls fuzz_*.c | sed 's/\.c$//'))
mkdir -p "$BF/artifacts" "$BF/logs"
failed=0
# A stray fd the targets did not open, as a fuzzer's parent may leave
# one: a fifo held read-write at fd 16, so a read from it blocks forever.
# An input that names it must be skipped by the target (fuzz_bwrap_argv
# once read it through --args and hung); the replay below includes one.
stray=$BF/stray.fifo
rm -f "$stray"
mkfifo -m 600 "$stray" && exec 16<>"$stray" || { echo "FAIL fuzz: cannot hold a stray fd at 16 ($stray)"; exit 1; }
rm -f "$stray"

one() {  # target
	local t=$1 bin=$BF/fuzz/$1 log=$BF/logs/$1.log files scratch
	[ -x "$bin" ] || { echo "FAIL $t: $bin is not built (make fuzz-build)"; return 1; }
	files=$(find "$TOP/tests/fuzz/corpus/$t" "$TOP/tests/fuzz/regress/$t" -type f 2>/dev/null)
	[ -n "$files" ] || { echo "FAIL $t: no seed corpus in tests/fuzz/corpus/$t"; return 1; }
	# Replay: each committed input once (a fixed crash stays fixed).
	# shellcheck disable=SC2086
	if ! "$bin" -runs=1 -timeout=10 $files </dev/null >"$log" 2>&1; then
		echo "FAIL $t: a committed input fails: $(grep -m1 -E 'ERROR: |runtime error' "$log") in $(grep 'Running:' "$log" | tail -1 | cut -d' ' -f2) (log $log)"
		return 1
	fi
	echo "replayed $(echo "$files" | wc -l) inputs of $t"
	[ "$SECS" -gt 0 ] || return 0
	scratch=$BF/corpus/$t
	mkdir -p "$scratch"
	# -timeout: one input taking 10 s is a hang; -rss_limit_mb bounds a
	# memory blow-up; -max_len: argv, profiles and specs are small.
	if ! "$bin" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
	     -print_final_stats=1 -print_funcs=0 -artifact_prefix="$BF/artifacts/$t-" \
	     "$scratch" "$TOP/tests/fuzz/corpus/$t" </dev/null >>"$log" 2>&1; then
		echo "FAIL $t: crash after fuzzing: $(grep -m1 -E 'ERROR: |runtime error' "$log") input: $(grep -o "$BF/artifacts/$t-[^ ]*" "$log" | tail -1) (log $log)"
		return 1
	fi
	echo "fuzzed $t for ${SECS}s: $(grep -m1 -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$') runs, $(grep -c . "$scratch"/* 2>/dev/null | wc -l) corpus inputs"
}

for t in "${targets[@]}"; do one "$t" || failed=1; done
exit $failed
