# Shared helpers for integration tests. A test file defines functions named
# t_<name> and ends with `run_tests`; each test runs in its own subshell and
# prints one PASS/FAIL/SKIP line that tests/run.sh counts.
set -u
TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
CL=${CLOISTER:-$TOP/build/cloister}
HELPERS=${HELPERS:-$TOP/build/tests}
TFILE=${TFILE_PREFIX:-}$(basename "$0" .sh)   # prefix: e.g. "vm-" in the guest
T_TMP=""

fail() { echo "$*" >&2; exit 1; }
skip() { echo "SKIP:$*" >&2; exit 77; }
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
# Waits until PATH exists (deadline in seconds, default 60).
wait_for_path() {
	local deadline=$((SECONDS + ${2:-60}))
	while [ ! -e "$1" ]; do [ $SECONDS -lt $deadline ] || return 1; sleep 0.02; done
}
# SIGKILLs PID and waits (pidfds, 60 s deadline) until every process of the
# tree it had is gone; fails naming what is left. Scoped to that tree.
kill_tree_and_wait() {
	local left
	left=$(python3 "$TOP/tests/helpers/proctree.py" kill_and_wait "$1" 2>/dev/null) ||
		fail "processes left behind after SIGKILL of $1: $left"
	wait "$1" 2>/dev/null
	return 0
}
# No process of ours is left whose command line contains the marker.
assert_no_process() {
	local m=$1 p left=""
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = "$$" ] && continue
		if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$m"; then
			left="$left ${p#/proc/}"
		fi
	done
	[ -z "$left" ] || fail "processes left behind for '$m':$left"
}

run_tests() {
	local f rc msg
	for f in $(declare -F | awk '{print $3}' | grep '^t_'); do
		# T_ONLY=name runs one test (e.g. to loop a flaky one).
		[ -n "${T_ONLY:-}" ] && [ "$f" != "t_$T_ONLY" ] && continue
		T_TMP=$(mktemp -d /tmp/cltest.XXXXXX)
		msg=$( ( set +e; cd "$T_TMP" && "$f" ) 2>&1 >/dev/null ); rc=$?
		rm -rf "$T_TMP" 2>/dev/null
		case $rc in
		0) echo "PASS $TFILE: ${f#t_}" ;;
		77) echo "SKIP $TFILE: ${f#t_}: ${msg#*SKIP:}" ;;
		*) echo "FAIL $TFILE: ${f#t_}: $(printf '%s' "$msg" | tail -n 3 | tr '\n' ' ')" ;;
		esac
	done
}
