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
	local f rc msg
	for f in $(declare -F | awk '{print $3}' | grep '^t_'); do
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
