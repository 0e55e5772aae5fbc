# Shared helpers for integration tests. A test file defines functions named
# t_<name> and ends with `run_tests`; each test runs in its own subshell and
# prints one PASS/FAIL/SKIP line that tests/run.sh counts.
set -u
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
# CLOISTER_BUILD: the build tree cloister comes from (make check-asan:
# build-asan); the helpers are always build/tests' (static, uninstrumented).
CL=${CLOISTER:-$TOP/${CLOISTER_BUILD:-build}/cloister}
HELPERS=${HELPERS:-$TOP/build/tests}
TFILE=${TFILE_PREFIX:-}$(basename "$0" .sh)   # prefix: e.g. "vm-" in the guest
T_TMP=""

fail() { echo "$*" >&2; exit 1; }
skip() { echo "SKIP:$*" >&2; exit 77; }
# note TEXT: what a control found on this host (which case a test asserted);
# printed after the test's PASS line, so a run says what it proved where.
note() { echo "$*" >>"$T_TMP.note"; }
is_root() { [ "$(id -u)" = 0 ]; }

assert_eq() {  # expected actual what
	[ "$1" = "$2" ] || fail "${3:-value}: expected '$1', got '$2'"
}
assert_contains() {  # haystack needle what
	case "$1" in *"$2"*) ;; *) fail "${3:-output}: '$2' not found in: $1" ;; esac
}
assert_not_contains() {
	case "$1" in *"$2"*) fail "${3:-output}: unexpected '$2' in: $1" ;; esac
}
# Runs cloister, capturing stdout, stderr and status into OUT, ERR, RC.
clr() {
	local o e
	o=$(mktemp "$T_TMP/out.XXXXXX"); e=$(mktemp "$T_TMP/err.XXXXXX")
	"$CL" "$@" >"$o" 2>"$e"; RC=$?
	OUT=$(cat "$o"); ERR=$(cat "$e"); rm -f "$o" "$e"
}
# Waits until "$@" succeeds, polling, for at most $T_WAIT seconds (default
# 120: a loaded CI machine or a TCG guest is slow). Returns 1 on timeout.
# Use it for every "until X has happened" instead of a fixed sleep.
T_WAIT=${T_WAIT:-120}
wait_until() {
	local end=$((SECONDS + T_WAIT))
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.02
	done
}
# A marker unique to the running test: put it on the command line of
# anything the test starts, so a leftover check finds only its own.
marker() { echo "clmark-${T_TMP##*.}-$1"; }
# Waits (as wait_until) until FILE has a line matching the ERE; prints the
# first such line. For logs written as the test runs (strace -o, ...).
wait_line() {  # FILE ERE
	wait_until grep -qE -- "$2" "$1" 2>/dev/null || return 1
	grep -E -m1 -- "$2" "$1"
}
# SIGKILLs PID and waits (pidfds, 60 s deadline) until every process of the
# tree it had is gone; fails naming what is left (or what went wrong, with
# the tree as it was before the kill, and the tail of each LOG). Scoped to
# that tree.
kill_tree_and_wait() {  # PID [LOG...]
	local left pid=$1 f logs=""
	shift
	left=$(python3 "$TOP/tests/helpers/proctree.py" kill_and_wait "$pid" 2>"$T_TMP/proctree.err") && {
		wait "$pid" 2>/dev/null
		return 0
	}
	for f; do logs="$logs; ${f##*/}: $(tail -n 4 "$f" 2>/dev/null | tr '\n' ' ')"; done
	fail "SIGKILL of $pid and wait: $left; $(tr '\n' ' ' <"$T_TMP/proctree.err")$logs"
}
# Pids of processes whose command line contains the marker (not ours).
procs_with() {
	local p left=""
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = "$$" ] || [ "${p#/proc/}" = "$BASHPID" ] && continue
		if tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qF -- "$1"; then
			left="$left ${p#/proc/}"
		fi
	done
	echo "$left"
}
# No process is left whose command line contains the marker. Pass a marker
# made by `marker` (or a path unique to this test): the check is scoped to
# what the test started, never a guess over the host's processes.
assert_no_process() {
	local m=$1 left
	case $m in *clmark-*|*"$T_TMP"*) ;; *) fail "assert_no_process: '$m' is not unique to this test (use \$(marker NAME))" ;; esac
	left=$(procs_with "$m")
	[ -z "${left// /}" ] || fail "processes left behind for '$m':$left"
}
# Like assert_no_process, giving them up to $T_WAIT seconds to go first
# (a killed sandbox's processes are reaped asynchronously).
none_with() { local l; l=$(procs_with "$1"); [ -z "${l// /}" ]; }
assert_gone() {
	wait_until none_with "$1" || true
	assert_no_process "$1"
}

# Each test runs in its own process group with a deadline (T_LIMIT
# seconds, default 300): a test that hangs is killed and reported as FAILED
# by name instead of stalling the suite. Its stderr goes to a file, so a
# stray background process holding it cannot stall the runner either.
# The default is applied here, when the tests run, not when this file is
# sourced: a suite's own ${T_LIMIT:-N} then works before or after the
# source line (after it, lint.sh's 1200 s used to keep 300 s).
run_one() {  # function -> exit status (124 = timed out)
	local f=$1 tp wd rc
	T_LIMIT=${T_LIMIT:-300}
	( set +e; cd "$T_TMP" && "$f" ) </dev/null >/dev/null 2>"$T_TMP.err" &
	tp=$!
	( sleep "$T_LIMIT"; touch "$T_TMP.timeout"; kill -TERM -- -"$tp"; sleep 5; kill -KILL -- -"$tp" ) \
		</dev/null >/dev/null 2>&1 &
	wd=$!
	wait "$tp" 2>/dev/null; rc=$?
	kill -KILL -- -"$wd" 2>/dev/null; wait "$wd" 2>/dev/null
	# Whatever the test left in its own group goes now, not in the next test.
	kill -KILL -- -"$tp" 2>/dev/null
	[ -e "$T_TMP.timeout" ] && rc=124
	return $rc
}

# As root, `cloister run` idmaps --rw/--here binds (docs/security.md, "Root
# callers") and refuses them on a filesystem that cannot be idmapped
# (overlayfs, e.g. the CI guest's /tmp; tmpfs before Linux 6.3). Suites whose
# subject is not the sandbox's identity call rw_id_probe and pass
# "${RW_ID[@]}" with such binds: nothing where the default works, --host-root
# where it cannot (tests/security/root_identity.sh tests the identity).
RW_ID=()
rw_id_probe() {
	local d
	RW_ID=()
	is_root || return 0
	d=$(mktemp -d /tmp/cltest-idmap.XXXXXX)
	"$CL" run --rw "$d" -- true 2>/dev/null || RW_ID=(--host-root)
	rmdir "$d"
}

run_tests() {
	local f rc msg t0
	set -m   # job control: each test gets its own process group
	for f in $(declare -F | awk '{print $3}' | grep '^t_'); do
		# T_ONLY=REGEX runs a subset (debugging a test, make mutate).
		[ -z "${T_ONLY:-}" ] || [[ $f =~ $T_ONLY ]] || continue
		T_TMP=$(mktemp -d /tmp/cltest.XXXXXX)
		t0=$SECONDS
		run_one "$f"; rc=$?
		[ $((SECONDS - t0)) -lt 30 ] || echo "    slow: $TFILE ${f#t_} took $((SECONDS - t0)) s"
		# tests/run.sh lists the slowest tests of each pass from this.
		[ -z "${CLOISTER_TEST_TIMES:-}" ] || echo "$((SECONDS - t0)) $TFILE:${f#t_}" >>"$CLOISTER_TEST_TIMES" 2>/dev/null
		msg=$(cat "$T_TMP.err" 2>/dev/null)
		note=$(tr '\n' ';' 2>/dev/null <"$T_TMP.note"); note=${note%;}
		[ $rc = 124 ] && msg="$msg (timed out after ${T_LIMIT}s: killed)"
		# chmod first: an overlay's work/work (mode 000, made by the
		# kernel) in a test's own state dir cannot be emptied otherwise.
		chmod -R u+rwX "$T_TMP" 2>/dev/null
		rm -rf "$T_TMP" "$T_TMP.err" "$T_TMP.timeout" "$T_TMP.note" 2>/dev/null
		case $rc in
		0) echo "PASS $TFILE: ${f#t_}${note:+ [$note]}" ;;
		77) echo "SKIP $TFILE: ${f#t_}: ${msg#*SKIP:}" ;;
		*) echo "FAIL $TFILE: ${f#t_}: $(printf '%s' "$msg" | tail -n 3 | tr '\n' ' ')" ;;
		esac
	done
	set +m
}
