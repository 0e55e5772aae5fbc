#!/bin/bash
# Runs the whole suite and ends with "N passed, N failed, N skipped".
# As root it runs everything twice: as root and, beside it, as the
# unprivileged test user (CLOISTER_TEST_USER, default cloister-test) on a
# copy of the build under /tmp (CLOISTER_USER_PASS=after: one after the
# other). tests/prepare.sh makes what both need first. Under CI=true a skip
# counts as a failure, and so does a missing test user.
#   tests/run.sh [--unit-only] [--as-user-pass] [--gates-lane] [FILTER]
# As root the gates (tests/gates/ but the guest's vm-v2) run in a lane of
# their own, after the user pass and beside the rest of the root pass
# (--gates-lane: that lane's own run; it prints its lines, the caller
# counts them).
# FILTER is an extended regular expression on the test paths (a plain
# name such as "sandbox" still selects the files holding it); `make check
# SUITES=REGEX` passes it. Suites: tests/integration, security, bwrap (the
# product), then tests/gates (matrix, lint, valgrind, fuzz, ASan relay
# stress, soak, the QEMU guest): a filter naming only product suites
# builds no matrix and boots no guest.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
# The suites run with the system's PATH, as the user pass always has: a
# version manager's shims first in the caller's PATH (pyenv's python3 is a
# bash script costing 0.3 s a call, against 0.04 s for Debian's) made the
# root pass several times slower than the same suites as the user.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
UNIT_ONLY=0; USER_PASS=0; GATES_LANE=0; FILTER=""
for a in "$@"; do
	case $a in
	--unit-only) UNIT_ONLY=1 ;;
	--as-user-pass) USER_PASS=1 ;;
	--gates-lane) USER_PASS=1; GATES_LANE=1 ;;
	*) FILTER=$a ;;
	esac
done
TEST_USER=${CLOISTER_TEST_USER:-cloister-test}
# The tree cloister and the unit tests come from: build, or build-asan for
# `make check-asan` (tests/lib.sh reads the same variable).
UB=${CLOISTER_BUILD:-build}
case $UB in /*|*..*|"") echo "CLOISTER_BUILD must be a directory under the tree: '$UB'"; exit 2 ;; esac
export CLOISTER_BUILD=$UB
LOG=$(mktemp /tmp/cloister-tests.XXXXXX)
chmod 644 "$LOG"

who=$( [ "$(id -u)" = 0 ] && echo root || echo "$(id -un)" )
# A group (unit binary or test file) that exits non-zero without having
# reported a FAIL (it crashed, or died before run_tests) is a failure too:
# counting only the lines it printed would call that green.
TIMES=$(mktemp /tmp/cloister-times.XXXXXX)
CLOISTER_TEST_TIMES=$(mktemp /tmp/cloister-ttimes.XXXXXX); chmod 666 "$CLOISTER_TEST_TIMES"
export CLOISTER_TEST_TIMES
run_group() {  # label, command...
	local label=$1 rc fails t0=$SECONDS; shift
	fails=$(grep -c '\] FAIL ' "$LOG")
	"$@" 2>&1 | while IFS= read -r line; do
		case $line in
		PASS*|FAIL*|SKIP*) echo "[$who] $line" ;;
		*) echo "    $line" ;;
		esac
	done | tee -a "$LOG"
	rc=${PIPESTATUS[0]}
	if [ "$rc" != 0 ] && [ "$(grep -c '\] FAIL ' "$LOG")" = "$fails" ]; then
		echo "[$who] FAIL $label: exited $rc without reporting a failure (crash?)" | tee -a "$LOG"
	fi
	echo "$((SECONDS - t0)) ${label#tests/}" >>"$TIMES"
}
# Where this pass spent its time, every group, slowest first (the CI budget).
slowest() {
	echo "[$who] slowest groups (s): $(sort -rn "$TIMES" | awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1}')"
	echo "[$who] slowest tests (s): $(sort -rn "$CLOISTER_TEST_TIMES" | head -15 | awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1}')"
	rm -f "$TIMES" "$CLOISTER_TEST_TIMES"
}

# The pass as the unprivileged user, on a world-readable copy of the build
# made before the root pass starts. It runs beside the root pass (most
# suites wait on timers, processes and sockets, not the CPU; every test
# works in its own mktemp dir, on free ports, in the user's own state and
# runtime dirs), its lines kept in $LOG.user and printed after the root
# pass's. CLOISTER_USER_PASS=after runs it after the root pass instead.
USER_PID=""; USER_COPY=""
# The gates but the guest's (vm-v2) are the gates lane's, and only its,
# when the root pass runs both passes; elsewhere every file runs.
in_lane() {  # FILE -> 0 if this run runs it
	local gate=0
	case $1 in tests/gates/vm-v2.sh) ;; tests/gates/*) gate=1 ;; esac
	if [ $GATES_LANE = 1 ]; then [ $gate = 1 ]; elif [ $BOTH = 1 ]; then [ $gate = 0 ]; fi
}
user_pass_start() {
	local copy
	# As root on a fresh machine, make the unprivileged user the suite
	# needs (nothing else about the system is changed).
	"$TOP/tests/test_user.sh" "$TEST_USER" >/dev/null 2>&1
	if ! id "$TEST_USER" >/dev/null 2>&1; then
		echo "FAIL run: test user '$TEST_USER' does not exist (useradd -m $TEST_USER; .ci/run creates it)" | tee -a "$LOG"
		setsid -w bash "$TOP/tests/run.sh" --gates-lane ${FILTER:+"$FILTER"} </dev/null >>"$LOG.user" 2>&1 &
		USER_PID=$!
		return
	fi
	copy=$(mktemp -d /tmp/cloister-user.XXXXXX)
	USER_COPY=$copy
	mkdir -p "$copy/build"
	cp -a build/cloister build/tests "$copy/build/" 2>/dev/null
	# The bench programs, for tests/integration/bench_harness.sh.
	[ -d build/bench ] && mkdir -p "$copy/build/bench" &&
		cp -a build/bench/floor build/bench/par build/bench/tstamp build/bench/getppid \
			build/bench/blast "$copy/build/bench/" 2>/dev/null
	[ -x build-asan/cloister ] && mkdir -p "$copy/build-asan" &&
		cp -a build-asan/cloister "$copy/build-asan/"
	if [ "$UB" != build ]; then
		mkdir -p "$copy/$UB/tests"
		cp -a "$UB/cloister" "$copy/$UB/" && cp -a "$UB"/tests/test_* "$copy/$UB/tests/" 2>/dev/null
	fi
	# bubblewrap's suite, fetched and built by tests/prepare.sh.
	[ -d build/upstream ] && cp -a build/upstream "$copy/build/" 2>/dev/null
	# npm installs made by tests/prepare.sh, as hard links: the Smithers
	# provider's packages (~800 MB with smithers-orchestrator) and the
	# real clients (~1 GB).
	[ -d build/smithers ] && { cp -al build/smithers "$copy/build/" 2>/dev/null ||
		cp -a build/smithers "$copy/build/"; }
	[ -d build/clients/npm ] && mkdir -p "$copy/build/clients" &&
		{ cp -al build/clients/npm "$copy/build/clients/" 2>/dev/null ||
		  cp -a build/clients/npm "$copy/build/clients/"; }
	cp -a tests bench bindings "$copy/" 2>/dev/null
	cp -a ../shared "$copy/../cloister-shared" 2>/dev/null || true
	chmod -R a+rX "$copy"; chmod 755 "$copy"
	# Its own session and process group (setsid): a cleanup that kills the
	# group stops everything the pass started. The gates lane follows the
	# user pass in that session, as root: after it, so the CPU-bound gates
	# (compiler matrix, clang-tidy, valgrind, fuzzing) take the CPU the
	# finished user pass leaves, beside the rest of the root pass, instead
	# of running alone after it.
	setsid -w bash -c 'runuser -u "$1" -- env CI="$2" PATH="/usr/sbin:/usr/bin:/sbin:/bin" \
		CLOISTER_BUILD="$3" ASAN_OPTIONS="$4" UBSAN_OPTIONS="$5" bash "$6/tests/run.sh" --as-user-pass "${@:8}"
		bash "$7/tests/run.sh" --gates-lane "${@:8}"' _ \
		"$TEST_USER" "${CI:-}" "$UB" "${ASAN_OPTIONS:-}" "${UBSAN_OPTIONS:-}" "$copy" "$TOP" ${FILTER:+"$FILTER"} \
		</dev/null >>"$LOG.user" 2>&1 &
	USER_PID=$!
}
user_pass_finish() {
	[ -n "$USER_PID" ] || return 0
	wait "$USER_PID"
	USER_PID=""
	cat "$LOG.user"; cat "$LOG.user" >>"$LOG"
	rm -rf "$USER_COPY" "$LOG.user"
}

# The QEMU guest boots first and runs beside everything else (one TCG
# process; the host suites mostly wait on timers and I/O); the vm-v2 group
# collects its lines in its turn. .ci/run may have started it already.
VM_GATE=tests/gates/vm-v2.sh
if [ "$(id -u)" = 0 ] && [ $USER_PASS = 0 ] && [ $UNIT_ONLY = 0 ] && [ "$UB" = build ] &&
	[ -z "${CLOISTER_VM_BG:-}" ] && { [ -z "$FILTER" ] || [[ $VM_GATE =~ $FILTER ]]; }; then
	export CLOISTER_VM_BG=$LOG.vm
	tests/vm/background.sh start "$CLOISTER_VM_BG"
	VM_OWN=1
fi
# On any exit: the guest this run started, and a user pass still running
# (its whole process group), are stopped.
cleanup() {
	[ -n "${VM_OWN:-}" ] && tests/vm/background.sh stop "$CLOISTER_VM_BG"
	[ -n "$USER_PID" ] && { kill -- -"$USER_PID" 2>/dev/null || kill "$USER_PID" 2>/dev/null; }
	return 0
}
trap cleanup EXIT

BOTH=0
[ $USER_PASS = 0 ] && [ $UNIT_ONLY = 0 ] && [ "$(id -u)" = 0 ] && BOTH=1
if [ $BOTH = 1 ]; then
	# Before either pass: what the suites fetch and install (the user
	# pass's copy is made now, not after the root pass).
	tests/prepare.sh "$FILTER"
	[ "${CLOISTER_USER_PASS:-beside}" = after ] || user_pass_start
fi

for t in "$UB"/tests/test_*; do
	[ $GATES_LANE = 0 ] || break
	[ -x "$t" ] || continue
	[ -n "$FILTER" ] && ! [[ $t =~ $FILTER ]] && continue
	run_group "$t" "$t"
done
if [ $UNIT_ONLY = 0 ]; then
	for f in tests/integration/*.sh tests/security/*.sh tests/bwrap/*.sh tests/gates/*.sh; do
		[ -f "$f" ] || continue
		[ -n "$FILTER" ] && ! [[ $f =~ $FILTER ]] && continue
		in_lane "$f" || continue
		run_group "$f" bash "$f"
	done
fi

slowest
if [ $BOTH = 1 ]; then
	[ -n "$USER_PID" ] || [ "${CLOISTER_USER_PASS:-beside}" != after ] || user_pass_start
	user_pass_finish
fi
if [ $USER_PASS = 1 ]; then rm -f "$LOG"; exit 0; fi
pass=$(grep -c '\] PASS \|^PASS ' "$LOG"); failn=$(grep -c '\] FAIL \|^FAIL ' "$LOG")
skipn=$(grep -c '\] SKIP \|^SKIP ' "$LOG")
if [ "${CI:-}" = true ] && [ "$skipn" -gt 0 ]; then
	echo "CI=true: $skipn skipped test(s) count as failures:"; grep 'SKIP ' "$LOG"
	failn=$((failn + skipn)); skipn=0
fi
if [ "$failn" -gt 0 ]; then echo "failures:"; grep 'FAIL ' "$LOG"; fi
rm -f "$LOG"
echo "$pass passed, $failn failed, $skipn skipped"
[ "$failn" = 0 ]
