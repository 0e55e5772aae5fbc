# Shared by the session suites (session_*.sh): sourcing lib.sh, making and
# removing a test's sessions, and the conditions they poll. Each test has
# its own runtime dir (CLOISTER_RUNTIME_DIR), so it sees only its own
# sessions.
. "$(dirname "$0")/../lib.sh"
PEER=$TOP/tests/helpers/session_peer.py

py() { python3 -c "import json,sys; j=json.loads(sys.stdin.read()); print($1)"; }

# Removes every session of this test's runtime dir: a test that fails
# half-way must not leave its sessions running (its T_TMP goes next).
rm_all() {
	local id
	for id in $("$CL" ls --json 2>/dev/null | python3 -c 'import json,sys; [print(s["id"]) for s in json.load(sys.stdin)]' 2>/dev/null); do
		"$CL" rm "$id" >/dev/null 2>&1
	done
}
# Creates a session (extra args passed to create); sets SID and RUNDIR.
mk() {
	export CLOISTER_RUNTIME_DIR=$T_TMP/run
	RUNDIR=$CLOISTER_RUNTIME_DIR
	trap rm_all EXIT
	clr create "$@"
	assert_eq 0 "$RC" "create $* ($ERR)"
	SID=$OUT
	[[ $SID =~ ^[0-9a-f]{12}$ ]] || fail "create printed '$SID', not an id"
}
field() { "$CL" ls --json | python3 -c "import json,sys; print([s for s in json.load(sys.stdin) if s['id']=='$1'][0]['$2'])"; }
# Starts a process that left the exec's process group (setsid), returning
# once it runs; its command line carries MARK.
daemon() {  # SESSION MARK
	"$CL" exec "$1" -- sh -c "setsid sh -c 'touch /tmp/d-started; sleep 1000; : $2' </dev/null >/dev/null 2>&1 &
		while [ ! -e /tmp/d-started ]; do sleep 0.01; done" || fail "starting a daemon in $1"
}
# Gone: no such process, or only its zombie (exited, not yet reaped by
# whoever inherited it).
# Conditions for wait_until (re-evaluated on every poll).
has_proc() { [ -n "$(procs_with "$1")" ]; }
fd_count_is() { [ "$(ls "/proc/$1/fd" | wc -l)" = "$2" ]; }
lines_are() { [ "$(wc -l <"$1")" = "$2" ]; }
cg_empty() {
	local f
	for f in "/sys/fs/cgroup/memory$1/cgroup.procs" "/sys/fs/cgroup$1/cgroup.procs"; do
		[ -f "$f" ] && [ -n "$(cat "$f")" ] && return 1
	done
	return 0
}
gone_pid() { [ ! -e "/proc/$1" ] || [ "$(sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
not_listed() { ! "$CL" ls --json | grep -q "$1"; }

# The session's supervisor pid, read from its info file with builtins only
# (no process started: the idle clock is running).
info_pid() {  # SID
	local line
	while IFS= read -r line; do
		case $line in pid=*) echo "${line#pid=}"; return ;; esac
	done <"$RUNDIR/$1/info"
}
