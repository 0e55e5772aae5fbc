#!/bin/bash
# Sessions (`cloister create/exec/cp/ls/rm`, idle timeout, gc): the command
# runs with the first one's isolation, exit codes, env/cwd/timeout, stdio
# passed as fds, concurrent execs, copies in and out without following
# links out of the sandbox, and rm/idle/gc leaving nothing of the session.
# The control path: a private directory and socket, peers checked, every
# malformed request answered with an error. Each test has its own runtime
# dir (CLOISTER_RUNTIME_DIR), so it sees only its own sessions.
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

t_exec_exit_codes_and_errors() {
	mk
	clr exec "$SID" -- sh -c 'echo out; echo err >&2; exit 3'
	assert_eq "3 out err" "$RC $OUT $ERR" "exit code and stdio"
	clr exec "$SID" -- true; assert_eq 0 "$RC" "true"
	clr exec "$SID" -- sh -c 'kill -9 $$'; assert_eq 137 "$RC" "killed by SIGKILL"
	clr exec "$SID" -- /nonexistent-cmd; assert_eq 127 "$RC" "not found"
	assert_contains "$ERR" "executing /nonexistent-cmd"
	clr exec "$SID" -- /etc/passwd; assert_eq 126 "$RC" "not executable"
	clr exec nosuchsession -- true; assert_eq 125 "$RC" "unknown session"
	assert_contains "$ERR" "no session 'nosuchsession'"
	clr exec "$SID"; assert_eq 125 "$RC" "no command"
	clr exec "$SID" -w relative -- true; assert_eq 125 "$RC" "relative -w"
	clr exec "$SID" -w /nonexistent -- true; assert_eq 125 "$RC" "missing -w"
	assert_contains "$ERR" "working directory /nonexistent"
	"$CL" rm "$SID"
}

t_state_env_and_cwd_between_execs() {
	mk --env BASE=1 -w /tmp
	clr exec "$SID" -- sh -c 'echo kept >/tmp/f; pwd'
	assert_eq "/tmp" "$OUT" "session workdir is the default"
	clr exec "$SID" -- cat /tmp/f; assert_eq kept "$OUT" "files persist between execs"
	clr exec "$SID" --env A=x --env BASE=2 -w / -- sh -c 'echo "$A $BASE $(pwd)"'
	assert_eq "x 2 /" "$OUT" "--env overrides, -w"
	clr exec "$SID" -- sh -c 'echo "${A:-unset} $BASE"'
	assert_eq "unset 1" "$OUT" "exec env does not stick"
	"$CL" rm "$SID"
}

# Same namespaces as each other, none of the host's; the same confinement
# as the first command of `cloister run`.
t_same_isolation_as_run() {
	local a b host run
	mk
	a=$("$CL" exec "$SID" -- sh -c 'for n in user mnt pid net ipc uts cgroup; do readlink /proc/self/ns/$n; done')
	b=$("$CL" exec "$SID" -- sh -c 'for n in user mnt pid net ipc uts cgroup; do readlink /proc/self/ns/$n; done')
	assert_eq "$a" "$b" "two execs share the session's namespaces"
	host=$(for n in user mnt pid net ipc uts cgroup; do readlink /proc/self/ns/$n; done)
	for n in $a; do assert_not_contains "$host" "$n" "namespace shared with the host"; done
	a=$("$CL" exec "$SID" -- grep -E '^(Cap|NoNewPrivs|Seccomp:)' /proc/self/status)
	run=$("$CL" run -- grep -E '^(Cap|NoNewPrivs|Seccomp:)' /proc/self/status)
	assert_eq "$run" "$a" "exec's caps/no_new_privs/seccomp vs cloister run"
	assert_contains "$a" "Seccomp:	2"
	assert_eq "$("$CL" run -- id)" "$("$CL" exec "$SID" -- id)" "identity inside"
	# no host process is visible: only init and the exec's own
	clr exec "$SID" -- sh -c 'ls /proc | grep -c "^[0-9]"'
	# init, sh, ls and grep
	[ "$OUT" -le 4 ] || fail "the exec sees $OUT processes"
	clr exec "$SID" -- cat /proc/1/cmdline; assert_eq 0 "$RC"
	"$CL" rm "$SID"
}

t_stdio_is_passed_not_copied() {
	mk
	assert_eq same "$(python3 "$PEER" pipeino "$RUNDIR/$SID/sock")" "the command's stdout is our pipe"
	assert_eq "abc" "$(echo abc | "$CL" exec "$SID" -- cat)" "stdin"
	"$CL" rm "$SID"
}

t_concurrent_execs() {
	local i pids=()
	mk
	for i in 1 2 3 4; do
		"$CL" exec "$SID" -- sh -c "touch /tmp/r$i; while [ ! -e /tmp/go ]; do sleep 0.01; done; echo done$i" \
			>"$T_TMP/c$i" &
		pids+=($!)
	done
	# all four are running at once before any may finish
	wait_until "$CL" exec "$SID" -- sh -c 'test -e /tmp/r1 -a -e /tmp/r2 -a -e /tmp/r3 -a -e /tmp/r4' ||
		fail "four concurrent execs never ran together"
	"$CL" exec "$SID" -- touch /tmp/go
	for i in 1 2 3 4; do
		wait "${pids[$((i - 1))]}"; assert_eq 0 "$?" "exec $i"
		assert_eq "done$i" "$(cat "$T_TMP/c$i")" "exec $i output"
	done
	"$CL" rm "$SID"
}

t_exec_timeout_kills_its_processes() {
	local m; m=$(marker to)
	mk
	# the marker is on a background child: the whole process group goes
	clr exec "$SID" --timeout 0.3 -- sh -c "sh -c 'sleep 1000; : $m' & sleep 1000"
	assert_eq 124 "$RC" "timed out"
	assert_contains "$ERR" "timed out"
	assert_gone "$m"
	clr exec "$SID" --json-status "$T_TMP/st.json" --timeout 0.3 -- sleep 100
	assert_eq "124 True" "$(py 'str(j["exit_code"])+" "+str(j["timed_out"])' <"$T_TMP/st.json")" "status JSON"
	clr exec "$SID" --json-status "$T_TMP/st.json" -- sh -c 'exit 7'
	assert_eq "7 False" "$(py 'str(j["exit_code"])+" "+str(j["timed_out"])' <"$T_TMP/st.json")" "status JSON"
	"$CL" rm "$SID"
}

# The client's death ends its command (Smithers aborts a tool call that way).
t_killed_client_kills_command() {
	local m c; m=$(marker kc)
	mk
	"$CL" exec "$SID" -- sh -c "sleep 1000; : $m" & c=$!
	wait_until has_proc "$m" || fail "the command never started"
	kill -9 "$c"; wait "$c" 2>/dev/null
	assert_gone "$m"
	"$CL" rm "$SID"
}

t_cp_in_and_out() {
	mk
	head -c 200000 /dev/urandom >"$T_TMP/bin"
	chmod 750 "$T_TMP/bin"
	clr cp "$T_TMP/bin" "$SID:/tmp/"; assert_eq 0 "$RC" "cp into a directory ($ERR)"
	assert_eq "$(sha256sum <"$T_TMP/bin" | cut -d' ' -f1)" "$("$CL" exec "$SID" -- sha256sum /tmp/bin | cut -d' ' -f1)" "content in"
	assert_eq 750 "$("$CL" exec "$SID" -- stat -c %a /tmp/bin)" "mode kept"
	clr cp "$SID:/tmp/bin" "$T_TMP/back"; assert_eq 0 "$RC" "cp out ($ERR)"
	cmp "$T_TMP/bin" "$T_TMP/back" || fail "content out differs"
	mkdir "$T_TMP/d"
	clr cp "$SID:/tmp/bin" "$T_TMP/d"; assert_eq 0 "$RC" "cp out into a directory ($ERR)"
	cmp "$T_TMP/bin" "$T_TMP/d/bin" || fail "content out (directory) differs"
	echo piped | "$CL" cp - "$SID:/tmp/p"; assert_eq 0 "$?" "cp from stdin"
	clr cp "$T_TMP/bin" "$SID:/tmp/a/b/c"; assert_eq 125 "$RC" "missing directories without --mkdir"
	clr cp --mkdir "$T_TMP/bin" "$SID:/tmp/a/b/c"; assert_eq 0 "$RC" "cp --mkdir ($ERR)"
	assert_eq 755 "$("$CL" exec "$SID" -- stat -c %a /tmp/a/b)" "directory made by --mkdir"
	assert_eq piped "$("$CL" cp "$SID:/tmp/p" -)" "cp to stdout"
	clr cp "$SID:/tmp/missing" "$T_TMP/m"; assert_eq 125 "$RC" "missing source"
	[ ! -e "$T_TMP/m" ] || fail "a failed copy left a file"
	assert_eq "" "$(ls -A "$T_TMP" | grep cloister-cp)" "temporary files left"
	clr cp "$SID:/tmp" "$T_TMP/x"; assert_eq 125 "$RC" "directory source"
	clr cp "$T_TMP/d" "$SID:/tmp/x"; assert_eq 125 "$RC" "directory source in"
	clr cp "$T_TMP/bin" "$T_TMP/bin2"; assert_eq 125 "$RC" "no session side"
	clr cp "$SID:/a" "$SID:/b"; assert_eq 125 "$RC" "two session sides"
	clr cp "$T_TMP/bin" "$SID:relative"; assert_eq 125 "$RC" "relative path inside"
	"$CL" rm "$SID"
}

# Links the sandbox planted lead nowhere outside it: host paths resolve in
# the sandbox's root, magic links are refused, a final link is never
# written through, and the host side replaces (not follows) a planted link.
t_cp_never_follows_links_out() {
	mkdir -p "$T_TMP/w" "$T_TMP/host"
	echo host-secret >"$T_TMP/host/secret"
	rw_id_probe
	mk --rw "$T_TMP/w:/w" "${RW_ID[@]}"
	"$CL" exec "$SID" -- sh -c "ln -s $T_TMP/host/secret /tmp/abs; ln -s ../../../../../..$T_TMP/host/secret /tmp/rel;
		ln -s /proc/self/fd/1 /tmp/magic; ln -s /proc/1/root$T_TMP/host/secret /tmp/root1;
		ln -s $T_TMP/host /tmp/dirlink; ln -s $T_TMP/host/new /tmp/dangling; mkfifo /tmp/fifo;
		ln -s $T_TMP/host/victim /w/out; echo inside >/tmp/data" || fail "planting links"
	for l in abs rel magic root1 fifo; do
		clr cp "$SID:/tmp/$l" -
		assert_eq 125 "$RC" "cp out of link $l"
		assert_not_contains "$OUT" host-secret "cp out of $l"
	done
	clr cp "$T_TMP/host/secret" "$SID:/tmp/dangling"; assert_eq 125 "$RC" "write through a final link"
	assert_contains "$ERR" "symbolic link"
	clr cp "$T_TMP/host/secret" "$SID:/tmp/dirlink/new"; assert_eq 125 "$RC" "write below a dir link"
	# the link's target does not exist in the sandbox's root: nothing to make it in
	clr cp --mkdir "$T_TMP/host/secret" "$SID:/tmp/dirlink/sub/new"; assert_eq 125 "$RC" "--mkdir through a dir link"
	[ ! -e "$T_TMP/host/sub" ] || fail "cp --mkdir made a host directory through a link"
	[ ! -e "$T_TMP/host/new" ] || fail "a copy into the sandbox wrote a host file"
	# host side: the planted /w/out (our $T_TMP/w/out) is replaced
	clr cp "$SID:/tmp/data" "$T_TMP/w/out"; assert_eq 0 "$RC" "cp out over a planted link ($ERR)"
	[ ! -e "$T_TMP/host/victim" ] || fail "cp out followed a planted link"
	[ -f "$T_TMP/w/out" ] && [ ! -L "$T_TMP/w/out" ] || fail "destination is not a plain file"
	assert_eq inside "$(cat "$T_TMP/w/out")"
	"$CL" rm "$SID"
}

# One line per entry below $1: links with their target, directories with
# their mode, files with mode and a hash of the contents.
TREE_LIST='cd "$1" && stat -c "top %a" . && find . -mindepth 1 | LC_ALL=C sort | while IFS= read -r p; do
	if [ -L "$p" ]; then echo "$p link $(readlink "$p")"
	elif [ -d "$p" ]; then echo "$p dir $(stat -c %a "$p")"
	else echo "$p file $(stat -c %a "$p") $(sha256sum <"$p" | cut -c1-16)"; fi; done'
host_tree() { sh -c "$TREE_LIST" _ "$1"; }
sess_tree() { "$CL" exec "$SID" -- sh -c "$TREE_LIST" _ "$1"; }
no_temp_left() {  # DIR...
	local d
	for d in "$@"; do assert_eq "" "$(ls -A "$d" | grep cloister-cp)" "temporary directories left in $d"; done
}

t_cp_r_in_and_out() {
	mk
	mkdir -p "$T_TMP/src/a/b" "$T_TMP/src/empty"
	echo one >"$T_TMP/src/f"; chmod 750 "$T_TMP/src/f"
	head -c 300000 /dev/urandom >"$T_TMP/src/a/b/big"
	ln -s ../f "$T_TMP/src/a/rel"; ln -s /nonexistent/abs "$T_TMP/src/abs"
	chmod 555 "$T_TMP/src/a"; chmod 710 "$T_TMP/src"
	clr cp -r "$T_TMP/src" "$SID:/tmp/"; assert_eq 0 "$RC" "cp -r in ($ERR)"
	assert_eq "$(host_tree "$T_TMP/src")" "$(sess_tree /tmp/src)" "the tree inside"
	clr cp -r "$SID:/tmp/src" "$T_TMP/back"; assert_eq 0 "$RC" "cp -r out ($ERR)"
	assert_eq "$(host_tree "$T_TMP/src")" "$(host_tree "$T_TMP/back")" "the tree copied back"
	# an existing directory of that name is replaced as a whole
	"$CL" exec "$SID" -- sh -c 'chmod 755 /tmp/src/a; rm /tmp/src/f; echo new >/tmp/src/a/g' || fail "changing the tree"
	clr cp -r "$SID:/tmp/src" "$T_TMP/"; assert_eq 0 "$RC" "cp -r out over a directory ($ERR)"
	assert_eq "$(sess_tree /tmp/src)" "$(host_tree "$T_TMP/src")" "the replaced tree"
	[ ! -e "$T_TMP/src/f" ] || fail "the old tree was merged, not replaced"
	echo again >"$T_TMP/src/h"
	clr cp -r "$T_TMP/src" "$SID:/tmp"; assert_eq 0 "$RC" "cp -r in over a directory ($ERR)"
	assert_eq "$(host_tree "$T_TMP/src")" "$(sess_tree /tmp/src)" "the replaced tree inside"
	clr cp -r --mkdir "$T_TMP/src" "$SID:/tmp/x/y/z"; assert_eq 0 "$RC" "cp -r --mkdir ($ERR)"
	assert_eq "$(host_tree "$T_TMP/src")" "$(sess_tree /tmp/x/y/z)" "a new name"
	no_temp_left "$T_TMP"
	assert_eq "" "$("$CL" exec "$SID" -- sh -c 'ls -A /tmp /tmp/x/y | grep cloister-cp')" "temporary directories left inside"
	clr cp "$T_TMP/src" "$SID:/tmp/n"; assert_eq 125 "$RC" "a directory without -r"
	assert_contains "$ERR" "cp -r"
	clr cp -r "$T_TMP/src/f" "$SID:/tmp/n" 2>/dev/null; assert_eq 125 "$RC" "-r of a file"
	clr cp -r "$SID:/tmp/src/h" "$T_TMP/n"; assert_eq 125 "$RC" "-r of a file out"
	clr cp -r - "$SID:/tmp/n"; assert_eq 125 "$RC" "-r from stdin"
	clr cp -r "$SID:/tmp/missing" "$T_TMP/n"; assert_eq 125 "$RC" "missing source"
	clr cp -r "$T_TMP/src" "$SID:/tmp/src/h"; assert_eq 125 "$RC" "over a file inside"
	assert_contains "$ERR" "not a directory"
	# the session fails before reading (more than a pipe's worth is
	# coming): its reason is shown, not our sender's broken pipe
	clr cp -r "$T_TMP/src" "$SID:/nonexistent/x"; assert_eq 125 "$RC" "into a missing directory"
	assert_contains "$ERR" "/nonexistent/x"
	assert_not_contains "$ERR" "Broken pipe"
	[ ! -e "$T_TMP/n" ] || fail "a failed copy left $T_TMP/n"
	no_temp_left "$T_TMP"
	"$CL" rm "$SID"
}

# The sandbox plants links, special files and a deep tree: links are
# copied as links (never followed, on either side), a link at a
# destination is not written through, devices and fifos refuse the copy,
# and no failed copy leaves anything.
t_cp_r_never_follows_links_out() {
	mkdir -p "$T_TMP/w" "$T_TMP/host/victim"
	echo host-secret >"$T_TMP/host/secret"
	rw_id_probe
	mk --rw "$T_TMP/w:/w" "${RW_ID[@]}"
	"$CL" exec "$SID" -- sh -c "mkdir -p /tmp/t/d; ln -s $T_TMP/host/secret /tmp/t/abs
		ln -s ../../../../../../..$T_TMP/host /tmp/t/rel; ln -s /proc/1/root$T_TMP/host /tmp/t/d/root1
		ln -s $T_TMP/host /tmp/dirlink; ln -s $T_TMP/host/victim /w/out
		mkdir /w/tree /w/special; ln -s $T_TMP/host /w/tree/hostdir; ln -s $T_TMP/host/secret /w/tree/secret
		mkfifo /w/special/fifo; mkdir /tmp/deep; cd /tmp/deep; for i in \$(seq 70); do mkdir d; cd d; done" ||
		fail "planting"
	clr cp -r "$SID:/tmp/t" "$T_TMP/o1"; assert_eq 0 "$RC" "cp -r out of a tree with links ($ERR)"
	assert_eq "$T_TMP/host/secret" "$(readlink "$T_TMP/o1/abs")" "an absolute link, as a link"
	assert_eq "/proc/1/root$T_TMP/host" "$(readlink "$T_TMP/o1/d/root1")" "a magic-ish link, as a link"
	assert_eq "" "$(grep -r host-secret "$T_TMP/o1")" "host data through a link"
	# the source itself a link to a host path: resolved in the sandbox's root
	clr cp -r "$SID:/tmp/dirlink" "$T_TMP/o2"; assert_eq 125 "$RC" "cp -r out of a link to a host dir"
	[ ! -e "$T_TMP/o2" ] || fail "copied through a link"
	clr cp -r "$T_TMP/o1" "$SID:/tmp/dirlink/x"; assert_eq 125 "$RC" "cp -r into a link to a host dir"
	clr cp -r "$T_TMP/o1" "$SID:/tmp/t/abs"; assert_eq 125 "$RC" "cp -r over a planted link inside"
	[ ! -e "$T_TMP/host/x" ] && [ -z "$(ls -A "$T_TMP/host/victim")" ] || fail "a copy in wrote a host directory"
	# host side: /w/out is the sandbox's link to a host directory
	clr cp -r "$SID:/tmp/t" "$T_TMP/w/out"; assert_eq 125 "$RC" "cp -r out over a planted link"
	assert_contains "$ERR" "not a directory"
	[ -z "$(ls -A "$T_TMP/host/victim")" ] || fail "cp -r out wrote through a planted link"
	# a host source the sandbox can write (--rw): its links stay links
	clr cp -r "$T_TMP/w/tree" "$SID:/tmp/"; assert_eq 0 "$RC" "cp -r in of a sandbox-written dir ($ERR)"
	clr cp -r "$SID:/tmp/tree" "$T_TMP/o5"; assert_eq 0 "$RC" "and out again ($ERR)"
	assert_eq "$T_TMP/host" "$(readlink "$T_TMP/o5/hostdir")" "a link to a host directory, as a link"
	assert_eq "" "$(grep -r host-secret "$T_TMP/o5")" "host data through a link"
	# special files and a tree deeper than the limit: refused, nothing left
	clr cp -r "$T_TMP/w/special" "$SID:/tmp/"; assert_eq 125 "$RC" "cp -r in of a fifo"
	assert_contains "$ERR" "not a regular file, directory or symbolic link"
	clr cp -r "$SID:/dev" "$T_TMP/o3"; assert_eq 125 "$RC" "cp -r out of device nodes"
	assert_contains "$ERR" "not a regular file, directory or symbolic link"
	clr cp -r "$SID:/tmp/deep" "$T_TMP/o4"; assert_eq 125 "$RC" "cp -r of a deep tree"
	assert_contains "$ERR" "deeper than"
	[ ! -e "$T_TMP/o3" ] && [ ! -e "$T_TMP/o4" ] && [ ! -e "$T_TMP/w/out/t" ] || fail "a failed copy left files"
	no_temp_left "$T_TMP" "$T_TMP/w"
	assert_eq "" "$("$CL" exec "$SID" -- sh -c 'ls -A /tmp | grep cloister-cp')" "temporary directories left inside"
	"$CL" rm "$SID"
}

t_ls_and_rm_leave_nothing() {
	local m sup init cg c
	m=$(marker rm)
	# a cgroup to check for (root: a user has no delegated cgroup here)
	if is_root; then mk --name "$m" --pids 64; else mk --name "$m"; fi
	assert_eq "$m running" "$(field "$SID" name) $(field "$SID" state)" "ls --json"
	assert_contains "$("$CL" ls)" "$SID"
	sup=$(field "$SID" supervisor_pid); init=$(field "$SID" init_pid)
	cg=$(sed -n 's/^[0-9]*:pids://p; s/^0:://p' "/proc/$init/cgroup" | head -1)
	# a command running through rm, a daemon escaping its process group
	"$CL" exec "$m" -- sh -c "sleep 1000; : $m" >/dev/null 2>&1 & c=$!
	daemon "$m" "$m-d"
	wait_until has_proc "$m-d" || fail "daemon never started"
	wait_until has_proc "$m" || fail "command never started"
	clr rm "$m"; assert_eq 0 "$RC" "rm by name ($ERR)"
	# rm returned: everything is gone already (no waiting)
	assert_no_process "$m"
	gone_pid "$sup" || fail "supervisor $sup still running"
	gone_pid "$init" || fail "init $init still running"
	[ ! -e "$RUNDIR/$SID" ] || fail "state left: $(ls -la "$RUNDIR/$SID")"
	for d in /sys/fs/cgroup/pids$cg /sys/fs/cgroup$cg; do
		case $cg in */cloister*) [ ! -d "$d" ] || fail "cgroup $d left" ;; esac
	done
	not_listed "$SID" || fail "rm'd session still listed"
	wait "$c"; [ "$?" -ne 0 ] || fail "exec through rm reported success"
	clr rm "$SID"; assert_eq 125 "$RC" "rm again"
}

# The session's supervisor pid, read from its info file with builtins only
# (no process started: the idle clock is running).
info_pid() {  # SID
	local line
	while IFS= read -r line; do
		case $line in pid=*) echo "${line#pid=}"; return ;; esac
	done <"$RUNDIR/$1/info"
}

# The exec starts with default signal dispositions, whatever `create`'s
# caller ignored (the supervisor itself ignores SIGPIPE).
t_exec_signals_not_inherited() {
	export CLOISTER_RUNTIME_DIR=$T_TMP/run
	RUNDIR=$CLOISTER_RUNTIME_DIR
	trap rm_all EXIT
	SID=$(bash -c 'trap "" INT QUIT HUP; exec "$@"' _ "$CL" create) || fail "create"
	clr exec "$SID" -- grep SigIgn /proc/self/status
	assert_eq "0 SigIgn:	0000000000000000" "$RC $OUT" "exec ($ERR)"
}

t_idle_timeout_reaps() {
	local sup idle t0 elapsed
	# The exec must reach the session before the idle timeout ends it. On a
	# machine too slow for that (a loaded TCG guest), the session is gone
	# only once the timeout has passed: then the test tries again with a
	# longer one. Gone any earlier is the bug this test looks for.
	for idle in 5 15 40; do
		t0=$EPOCHREALTIME   # before create: its idle clock starts inside create
		mk --idle-timeout "$idle"
		sup=$(info_pid "$SID")
		# busy longer than the idle timeout: not reaped while a command runs
		clr exec "$SID" -- sleep $((idle + 2))
		[ "$RC" = 125 ] || break   # only "session gone" can mean too slow
		elapsed=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", b - a }')
		[ "$elapsed" -ge "$idle" ] || fail "reaped after ${elapsed} s, before the ${idle} s idle timeout ($ERR)"
		echo "    # exec reached the session only after ${elapsed} s; again with a longer timeout"
		wait_until gone_pid "$sup" || fail "idle session not reaped"
	done
	assert_eq 0 "$RC" "exec across the idle timeout ($ERR)"
	wait_until gone_pid "$sup" || fail "idle session not reaped"
	wait_until not_listed "$SID" || fail "idle session still listed"
	[ ! -e "$RUNDIR/$SID" ] || fail "state left after the idle timeout"
}

# A peer that connects and sends nothing is not activity: the idle timeout
# still reaps the session (the request deadline is set far beyond the
# wait here, so only the idle logic can end it). As above, a machine too
# slow to connect before the timeout tries again with a longer one.
t_idle_timeout_ignores_silent_connections() {
	local sup idle t0 elapsed p
	for idle in 3 10 30; do
		t0=$EPOCHREALTIME
		CLOISTER_SESSION_REQUEST_TIMEOUT_MS=3600000 mk --idle-timeout "$idle"
		sup=$(info_pid "$SID")
		rm -f "$T_TMP/note"
		python3 "$PEER" hold "$RUNDIR/$SID/sock" "$T_TMP/note" >"$T_TMP/held" & p=$!
		wait_line "$T_TMP/note" '^(connected|error)' >/dev/null || fail "the peer never connected"
		grep -q '^connected' "$T_TMP/note" && break
		elapsed=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", b - a }')
		[ "$elapsed" -ge "$idle" ] || fail "reaped after ${elapsed} s, before the ${idle} s idle timeout"
		echo "    # the peer reached the session only after ${elapsed} s; again with a longer timeout"
		wait "$p"
	done
	grep -q '^connected' "$T_TMP/note" || fail "the peer never reached the session: $(cat "$T_TMP/note")"
	wait_until gone_pid "$sup" || fail "a silent connection kept the idle session up"
	wait "$p"
	assert_eq hup "$(cat "$T_TMP/held")" "the silent peer, once the session ended"
	wait_until not_listed "$SID" || fail "idle session still listed"
	[ ! -e "$RUNDIR/$SID" ] || fail "state left after the idle timeout"
}

# A connection that sends no request within the deadline is answered and
# dropped (it held one of the session's connection slots for ever); the
# session serves on. The deadline is shortened for the test (the hidden
# CLOISTER_SESSION_REQUEST_TIMEOUT_MS; 30 s otherwise).
t_silent_connection_is_dropped() {
	CLOISTER_SESSION_REQUEST_TIMEOUT_MS=5000 mk
	python3 "$PEER" hold "$RUNDIR/$SID/sock" "$T_TMP/note" >"$T_TMP/held"
	assert_eq connected "$(cat "$T_TMP/note")" "the peer connected"
	assert_contains "$(cat "$T_TMP/held")" "reply 125 cloister: no request within 5000 ms" "the server's answer"
	clr exec "$SID" -- echo alive; assert_eq "0 alive" "$RC $OUT" "the session after dropping it"
	CLOISTER_SESSION_REQUEST_TIMEOUT_MS=0 clr create; assert_eq 125 "$RC" "a bad request deadline"
	assert_contains "$ERR" "CLOISTER_SESSION_REQUEST_TIMEOUT_MS"
	"$CL" rm "$SID"
}

t_gc_after_supervisor_sigkill() {
	local sup init cg m; m=$(marker gc)
	if is_root; then mk --memory 64m --name "$m"; else mk --name "$m"; fi
	sup=$(field "$SID" supervisor_pid); init=$(field "$SID" init_pid)
	cg=$(sed -n 's/^[0-9]*:memory://p; s/^0:://p' "/proc/$init/cgroup" | head -1)
	daemon "$SID" "$m"
	kill -9 "$sup"
	wait_until gone_pid "$init" || fail "init outlived its supervisor"
	assert_gone "$m"
	# The zombies of init (in the cgroup) and of the supervisor (the
	# cgroup's owner pid) last until whoever inherited them reaps them; gc
	# rightly leaves a cgroup that is not empty or whose owner pid exists.
	if is_root; then
		wait_until cg_empty "$cg" || fail "cgroup $cg never emptied"
		wait_until test ! -e "/proc/$sup" || fail "supervisor $sup never reaped"
	fi
	assert_eq dead "$(field "$SID" state)" "ls after the supervisor died"
	clr exec "$SID" -- true; assert_eq 125 "$RC" "exec into a dead session"
	assert_contains "$ERR" "is gone"
	clr gc; assert_eq 0 "$RC" "gc ($ERR)"
	assert_contains "$OUT" "removed session $SID"
	[ ! -e "$RUNDIR/$SID" ] || fail "state left after gc"
	if is_root; then
		case $cg in */cloister*) [ ! -d "/sys/fs/cgroup/memory$cg" ] && [ ! -d "/sys/fs/cgroup$cg" ] ||
			fail "cgroup $cg left after gc" ;; *) fail "no cloister cgroup seen ($cg)" ;; esac
	fi
	not_listed "$SID" || fail "still listed after gc"
}

t_create_refuses_and_leaves_nothing() {
	export CLOISTER_RUNTIME_DIR=$T_TMP/run
	clr create -- sh; assert_eq 125 "$RC" "a command"; assert_contains "$ERR" "create takes no command"
	clr create --output-limit 10; assert_eq 125 "$RC" "--output-limit"
	clr create --json-status "$T_TMP/s"; assert_eq 125 "$RC" "--json-status"
	clr create --name 'a/b'; assert_eq 125 "$RC" "bad name"
	clr create --idle-timeout 0; assert_eq 125 "$RC" "idle 0"
	clr create --runtime docker; assert_eq 125 "$RC" "--runtime docker"
	assert_contains "$ERR" "native runtime only"
	clr create --ro /nonexistent-src; assert_eq 125 "$RC" "setup failure"
	assert_contains "$ERR" "creating the session"
	assert_eq "" "$(ls -A "$CLOISTER_RUNTIME_DIR" 2>/dev/null)" "state left by failed creates"
	mk --name dup
	clr create --name dup; assert_eq 125 "$RC" "duplicate name"; assert_contains "$ERR" "exists already"
	"$CL" rm dup
	assert_eq "" "$(ls -A "$CLOISTER_RUNTIME_DIR")" "state left"
}

# --workspace: the session's execs share one overlay of DIR (each sees the
# others' changes, the host DIR is never written), `cloister gc` leaves a
# live session's state alone, and rm writes the diff bundle before it
# returns (a capture failure is rm's error), leaving no state.
t_workspace_diff_at_rm() {
	local W=$T_TMP/ws WSR=()
	# as in workspace.sh: root keeps host root, so the overlay is tested
	is_root && WSR=(--host-root)
	export CLOISTER_STATE_DIR=$T_TMP/state
	mkdir -p "$W/sub"; echo base >"$W/a.txt"; echo keep >"$W/sub/k.txt"
	# relative --diff-out: the caller's directory, not the supervisor's
	mk "${WSR[@]}" --workspace "$W" --diff-out b.json
	"$CL" exec "$SID" --env W="$W" -- sh -c 'echo changed >"$W/a.txt"; echo new >"$W/n.txt"; rm "$W/sub/k.txt"' ||
		fail "changing the workspace"
	assert_eq "changed new" "$("$CL" exec "$SID" --env W="$W" -- sh -c 'echo $(cat "$W/a.txt" "$W/n.txt")')" 		"a later exec sees the changes"
	assert_eq "base keep" "$(echo $(cat "$W/a.txt" "$W/sub/k.txt"))" "the host DIR while the session runs"
	"$CL" gc >/dev/null 2>&1
	assert_eq 1 "$(ls "$T_TMP/state/workspaces" | wc -l)" "the live session's workspace state after gc"
	clr exec "$SID" -- true; assert_eq 0 "$RC" "exec after gc ($ERR)"
	clr rm "$SID"; assert_eq 0 "$RC" "rm ($ERR)"
	# rm returned: the bundle is there and the state is gone
	assert_eq "a.txt:modify n.txt:add sub/k.txt:delete" 		"$(py '" ".join(sorted(p["path"]+":"+p["operation"] for p in j["patches"]))' <"$T_TMP/b.json")" "the bundle"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "workspace state after rm"
	assert_eq "base keep" "$(echo $(cat "$W/a.txt" "$W/sub/k.txt"))" "the host DIR after rm"
	clr diff apply "$T_TMP/b.json" "$W"; assert_eq 0 "$RC" "applying the bundle ($ERR)"
	assert_eq "changed new" "$(echo $(cat "$W/a.txt" "$W/n.txt"))" "applied"
	# a capture that fails (a symlink made in the workspace) is rm's error
	mk "${WSR[@]}" --workspace "$W" --diff-out "$T_TMP/c.json"
	"$CL" exec "$SID" --env W="$W" -- ln -s a.txt "$W/link" || fail "making a link"
	clr rm "$SID"; assert_eq 125 "$RC" "rm after a failed capture"
	assert_contains "$ERR" "capturing the diff"
	[ ! -e "$T_TMP/c.json" ] || fail "a bundle written for a failed capture"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "workspace state after a failed capture"
	not_listed "$SID" || fail "the session is still listed"
	# without --diff-out: changes dropped; a failed create leaves nothing
	mk "${WSR[@]}" --workspace "$W"
	"$CL" exec "$SID" --env W="$W" -- sh -c 'echo x >"$W/x"' || fail "writing"
	clr rm "$SID"; assert_eq 0 "$RC" "rm without --diff-out ($ERR)"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "workspace state without --diff-out"
	clr create "${WSR[@]}" --workspace "$W" --ro /nonexistent-src; assert_eq 125 "$RC" "a create that fails"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "workspace state after a failed create"
	clr create --workspace "$W" --diff-out -; assert_eq 125 "$RC" "--diff-out - for a session"
	[ ! -e "$W/x" ] || fail "the host DIR was written"
}

# Where an overlay cannot be made (an overlay-backed /tmp, a kernel
# without unprivileged overlay), a session's workspace is a copy, as a
# run's is: the same bundle at rm, the host DIR untouched meanwhile.
t_workspace_copy_mode() {
	local W=$T_TMP/ws
	# root's copy is bound idmapped: --host-root where /tmp cannot be
	# (the CI guest's tmpfs on Linux 6.1)
	rw_id_probe
	export CLOISTER_STATE_DIR=$T_TMP/state CLOISTER_WORKSPACE_MODE=copy
	mkdir -p "$W/sub"; echo base >"$W/a.txt"; echo keep >"$W/sub/k.txt"
	mk "${RW_ID[@]}" --workspace "$W" --diff-out "$T_TMP/b.json"
	# the copy holds the whole tree (an overlay's upper only what changed)
	[ -f "$(echo "$T_TMP"/state/workspaces/*/upper/sub/k.txt)" ] || fail "no copy of DIR in the state dir"
	"$CL" exec "$SID" --env W="$W" -- sh -c 'echo changed >"$W/a.txt"; echo new >"$W/n.txt"; rm "$W/sub/k.txt"' ||
		fail "changing the workspace"
	assert_eq "base keep" "$(echo $(cat "$W/a.txt" "$W/sub/k.txt"))" "the host DIR while the session runs"
	clr rm "$SID"; assert_eq 0 "$RC" "rm ($ERR)"
	assert_eq "a.txt:modify n.txt:add sub/k.txt:delete" \
		"$(py '" ".join(sorted(p["path"]+":"+p["operation"] for p in j["patches"]))' <"$T_TMP/b.json")" "the bundle"
	assert_eq "" "$(ls -A "$T_TMP/state/workspaces")" "workspace state after rm"
}

# The session's freezer as the host sees it: "frozen", "thawed", or
# "none" when the session has no cgroup that can be frozen (v1: its own
# freezer dir; v2: its own cgroup).
freezer_of() {  # SID
	local init cg; init=$(field "$1" init_pid)
	cg=$(sed -n 's/^[0-9]*:freezer://p' "/proc/$init/cgroup")
	if [ -n "$cg" ] && [ "$cg" != / ] && [ -f "/sys/fs/cgroup/freezer$cg/freezer.state" ]; then
		case $(cat "/sys/fs/cgroup/freezer$cg/freezer.state") in
		FROZEN) echo frozen ;; THAWED) echo thawed ;; *) echo freezing ;;
		esac
		return
	fi
	cg=$(sed -n 's/^0:://p' "/proc/$init/cgroup")
	if [ -f /sys/fs/cgroup/cgroup.controllers ] && [ -n "$cg" ] && [ "$cg" != / ]; then
		grep -qx 'frozen 1' "/sys/fs/cgroup$cg/cgroup.events" && echo frozen || echo thawed
		return
	fi
	echo none
}
# Root gets a freezer (a limit makes a v2 cgroup too); the user on this
# kind of host (v1 hybrid, no delegation) gets none and is told so.
snap_limits() { is_root && echo --pids 1000; }
snaps_left() { ls -A "$T_TMP/state/snapshots" 2>/dev/null | tr '\n' ' '; }

# A session's workspace snapshot: the session's own view (changes, new
# files, deletions), DIR untouched, usable by run --snapshot; the session
# runs on; refusals leave nothing; links are kept as links, a fifo refuses
# the snapshot (and the session is thawed after that too).
snapshot_of_a_session() {
	local W=$T_TMP/ws WSR=() S=$T_TMP/state/snapshots
	is_root && WSR=(--host-root)
	export CLOISTER_STATE_DIR=$T_TMP/state
	mkdir -p "$W/sub"; echo base >"$W/a.txt"; echo keep >"$W/sub/k.txt"
	mk "${WSR[@]}" $(snap_limits) --workspace "$W"
	"$CL" exec "$SID" --env W="$W" -- sh -c 'echo changed >"$W/a.txt"; echo new >"$W/n.txt"; rm "$W/sub/k.txt";
		ln -s /etc/passwd "$W/link"; truncate -s 1G "$W/sparse"' || fail "changing the workspace"
	clr workspace snapshot --session "$SID" --id mid
	assert_eq "0 mid" "$RC $OUT" "snapshot of the session ($ERR)"
	is_root && assert_eq "" "$ERR" "stderr of a paused snapshot"
	is_root || assert_contains "$ERR" "was not paused"
	assert_eq "a.txt:changed link n.txt:new sparse sub" \
		"$(cd "$S/mid/tree" && for f in $(ls); do [ -f "$f" ] && [ ! -L "$f" ] && [ "$f" != sparse ] && f="$f:$(cat "$f")"; echo "$f"; done | tr '\n' ' ' | sed 's/ $//')" "the snapshot's tree"
	assert_eq "" "$(ls -A "$S/mid/tree/sub")" "the deletion is in the snapshot"
	assert_eq /etc/passwd "$(readlink "$S/mid/tree/link")" "a link kept as a link"
	assert_eq "1073741824" "$(stat -c %s "$S/mid/tree/sparse")" "the sparse file's size"
	[ "$(du -k "$S/mid/tree/sparse" | cut -f1)" -lt 1024 ] || fail "the sparse file was written out in full"
	assert_eq "session:$SID $W" "$("$CL" workspace snapshots --json | py '" ".join([s["workspace"]+" "+s["rootDir"] for s in j if s["id"]=="mid"])')" "listed"
	assert_eq "base keep" "$(echo $(cat "$W/a.txt" "$W/sub/k.txt"))" "the host DIR"
	[ ! -e "$W/n.txt" ] || fail "the snapshot wrote DIR"
	# the session runs on, thawed, and writes on; the snapshot stays as it was
	[ "$(freezer_of "$SID")" != frozen ] || fail "the session is still frozen after the snapshot"
	clr exec "$SID" --env W="$W" -- sh -c 'echo later >"$W/a.txt"; cat "$W/a.txt"'
	assert_eq "0 later" "$RC $OUT" "an exec after the snapshot ($ERR)"
	assert_eq changed "$(cat "$S/mid/tree/a.txt")" "the snapshot after the session wrote on"
	clr run "${WSR[@]}" --workspace "$W" --snapshot mid -- sh -c "cat $W/a.txt $W/n.txt; ls $W/sub"
	assert_eq "0 changed new" "$RC $(echo $OUT)" "a run started from the session's snapshot ($ERR)"
	# refusals: one line, exit 125, nothing made
	clr workspace snapshot --session "$SID" --id mid; assert_eq 125 "$RC" "an existing id"
	assert_contains "$ERR" "exists already"
	clr workspace snapshot --session "$SID" --id ../x; assert_eq 125 "$RC" "a bad id"
	assert_eq 1 "$(echo "$ERR" | wc -l)" "one line for a bad id"
	clr workspace snapshot --session nosuchsession; assert_eq 125 "$RC" "an unknown session"
	assert_contains "$ERR" "no session 'nosuchsession'"
	clr workspace snapshot --session "$SID" mid2; assert_eq 125 "$RC" "a NAME and --session"
	local with=$SID
	mk
	clr workspace snapshot --session "$SID" --id none; assert_eq 125 "$RC" "a session without --workspace"
	assert_contains "$ERR" "has no workspace"
	"$CL" rm "$SID"
	assert_eq "mid " "$(snaps_left)" "snapshots after the refusals"
	# a fifo in the tree refuses the snapshot: nothing left, session thawed
	"$CL" exec "$with" --env W="$W" -- mkfifo "$W/fifo" || fail "making a fifo"
	clr workspace snapshot --session "$with" --id withfifo; assert_eq 125 "$RC" "a fifo in the tree"
	assert_eq "mid " "$(snaps_left)" "snapshots after a refused tree"
	[ "$(freezer_of "$with")" != frozen ] || fail "the session is frozen after a failed snapshot"
	clr exec "$with" -- true; assert_eq 0 "$RC" "an exec after a failed snapshot ($ERR)"
	"$CL" rm "$with"
}
t_workspace_snapshot_of_a_session() { snapshot_of_a_session; }
t_workspace_snapshot_of_a_session_copy_mode() { CLOISTER_WORKSPACE_MODE=copy snapshot_of_a_session; }

# While the tree is copied the session is frozen: a writer appending a
# counter stops (what the copy has is what the file held at the freeze,
# every line whole), and runs on after the thaw. The test hook holds the
# worker once frozen and once thawed (SS_SNAP_HOLD_ENV: it tells its pid
# and waits for SIGUSR1), so each state is looked at while it holds, not
# guessed at by timing.
snapshot_pauses() {
	local W=$T_TMP/ws WSR=() S=$T_TMP/state/snapshots H=$T_TMP/hold pid at n up
	is_root && WSR=(--host-root)
	export CLOISTER_STATE_DIR=$T_TMP/state
	mkdir -p "$W"; mkfifo "$H"
	CLOISTER_TEST_SNAP_HOLD=$H mk "${WSR[@]}" $(snap_limits) --workspace "$W"
	"$CL" exec "$SID" --env W="$W" -- sh -c 'i=0; while :; do i=$((i+1)); echo $i >>"$W/count"; done' >/dev/null 2>&1 &
	up=$(echo "$T_TMP"/state/workspaces/run-*/upper)
	wait_until test -s "$up/count" || fail "the writer never wrote"
	"$CL" workspace snapshot --session "$SID" --id paused >"$T_TMP/snap.out" 2>"$T_TMP/snap.err" &
	local client=$!
	read -r pid <"$H"   # frozen, nothing copied yet: held until SIGUSR1
	if is_root; then
		assert_eq frozen "$(freezer_of "$SID")" "the session's cgroup while the snapshot holds"
	else
		assert_eq none "$(freezer_of "$SID")" "no freezer for the user here"
	fi
	at=$(wc -l <"$up/count")
	kill -USR1 "$pid"
	read -r pid <"$H"   # copied and thawed, not yet answered
	[ "$(freezer_of "$SID")" != frozen ] || fail "still frozen after the copy, before the reply"
	kill -USR1 "$pid"
	wait "$client"; assert_eq "0 paused" "$? $(cat "$T_TMP/snap.out")" "the snapshot ($(cat "$T_TMP/snap.err"))"
	n=$(wc -l <"$S/paused/tree/count")
	# every line whole and in sequence: no write was half copied
	assert_eq "$n" "$(awk 'NR==$1 {c++} END {print c+0}' "$S/paused/tree/count")" "lines of the copy in sequence"
	if is_root; then
		assert_eq "$at" "$n" "lines at the freeze and in the copy"
	else
		assert_contains "$(cat "$T_TMP/snap.err")" "was not paused"
	fi
	wait_until test "$(wc -l <"$up/count")" -gt "$n" || fail "the writer did not go on after the snapshot"
	"$CL" rm "$SID"
}
t_workspace_snapshot_pauses_the_session() { snapshot_pauses; }
t_workspace_snapshot_pauses_the_session_copy_mode() { CLOISTER_WORKSPACE_MODE=copy snapshot_pauses; }

# A snapshot worker SIGKILLed while the session is frozen: the supervisor
# thaws it and sweeps the half-built snapshot before the client hears the
# hang-up; the session serves on, the next snapshot works.
t_workspace_snapshot_worker_killed() {
	local W=$T_TMP/ws WSR=() H=$T_TMP/hold pid
	is_root && WSR=(--host-root)
	export CLOISTER_STATE_DIR=$T_TMP/state
	mkdir -p "$W"; echo x >"$W/f"; mkfifo "$H"
	CLOISTER_TEST_SNAP_HOLD=$H mk "${WSR[@]}" $(snap_limits) --workspace "$W"
	"$CL" workspace snapshot --session "$SID" --id killed >"$T_TMP/snap.out" 2>"$T_TMP/snap.err" &
	local client=$!
	read -r pid <"$H"
	is_root && assert_eq frozen "$(freezer_of "$SID")" "frozen while held"
	case $(snaps_left) in .tmp-*) ;; *) fail "no build in progress while held: '$(snaps_left)'" ;; esac
	kill -9 "$pid"
	wait "$client"; assert_eq 125 "$?" "the client of a killed snapshot"
	assert_contains "$(cat "$T_TMP/snap.err")" "ended before answering"
	[ "$(freezer_of "$SID")" != frozen ] || fail "the session is still frozen after its snapshot worker died"
	assert_eq "" "$(snaps_left)" "what a killed snapshot left"
	clr exec "$SID" -- echo alive; assert_eq "0 alive" "$RC $OUT" "the session after a killed snapshot"
	"$CL" workspace snapshot --session "$SID" --id after >"$T_TMP/snap.out" 2>&1 &
	client=$!
	read -r pid <"$H"; kill -USR1 "$pid"
	read -r pid <"$H"; kill -USR1 "$pid"
	wait "$client"; assert_eq 0 "$?" "the next snapshot ($(cat "$T_TMP/snap.out"))"
	assert_eq x "$(cat "$T_TMP/state/snapshots/after/tree/f")" "the next snapshot's tree"
	"$CL" rm "$SID"
}

# The runtime directory and the socket are the user's alone; a directory
# somebody else could get at is refused rather than used.
t_control_dir_is_private() {
	mk
	assert_eq 700 "$(stat -c %a "$RUNDIR")" "runtime dir mode"
	assert_eq 700 "$(stat -c %a "$RUNDIR/$SID")" "session dir mode"
	assert_eq 600 "$(stat -c %a "$RUNDIR/$SID/sock")" "socket mode"
	"$CL" rm "$SID"
	chmod 755 "$RUNDIR"
	clr create; assert_eq 125 "$RC" "a non-private runtime dir"
	assert_contains "$ERR" "is not private"
	rm -rf "$RUNDIR"; ln -s "$T_TMP" "$RUNDIR"
	clr create; assert_eq 125 "$RC" "a symlinked runtime dir"
	rm "$RUNDIR"
	# the default place, when nothing overrides it
	unset CLOISTER_RUNTIME_DIR
	local def; if is_root; then def=/run/cloister; else def=/tmp/cloister-$(id -u); fi
	SID=$(XDG_RUNTIME_DIR= "$CL" create) || fail "create in the default dir"
	assert_eq 700 "$(stat -c %a "$def")" "default runtime dir mode"
	[ -S "$def/$SID/sock" ] || fail "no socket in $def"
	XDG_RUNTIME_DIR= "$CL" rm "$SID"
}

# A process inside the session that can reach the socket (its directory
# bound in) is refused: it is not in our user namespace, whatever its uid.
t_socket_refuses_the_sandbox_itself() {
	rw_id_probe
	mk --rw "$T_TMP/run:/ctl" --ro "$TOP/tests/helpers:/helpers" "${RW_ID[@]}"
	clr exec "$SID" -- python3 /helpers/session_peer.py connect "/ctl/$SID/sock"
	assert_eq 0 "$RC" "probe ran ($ERR)"
	assert_eq refused "$OUT" "ping from inside the sandbox"
	assert_eq 0 "$(python3 "$PEER" connect "$RUNDIR/$SID/sock")" "ping from the owner"
	"$CL" rm "$SID"
}

t_malformed_requests_fuzz() {
	local sup before after
	mk
	sup=$(field "$SID" supervisor_pid)
	before=$(ls "/proc/$sup/fd" | wc -l)
	assert_eq ok "$(python3 "$PEER" fuzz "$RUNDIR/$SID/sock" 800)" "malformed requests"
	clr exec "$SID" -- echo alive; assert_eq "0 alive" "$RC $OUT" "session after the fuzz"
	wait_until fd_count_is "$sup" "$before" ||
		fail "supervisor fds: $before before, $(ls "/proc/$sup/fd" | wc -l) after"
	"$CL" rm "$SID"
}

# The session's --publish relay serves for the session's life: a server an
# exec left running answers through it.
t_publish_reaches_a_session_server() {
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	mk --publish "127.0.0.1:$port:8000"
	"$CL" exec "$SID" -- sh -c 'setsid python3 -m http.server 8000 --bind 127.0.0.1 </dev/null >/dev/null 2>&1 &
		until python3 -c "import socket; socket.create_connection((\"127.0.0.1\", 8000)).close()" 2>/dev/null; do sleep 0.02; done' ||
		fail "server in the session never listened"
	assert_contains "$(python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$port/', timeout=30).read().decode())")" \
		"Directory listing" "through --publish"
	"$CL" rm "$SID"
}

# A session nobody can reach any more (its directory or socket removed)
# ends instead of running on.
t_removed_socket_ends_the_session() {
	local sup init
	mk
	sup=$(field "$SID" supervisor_pid); init=$(field "$SID" init_pid)
	rm -f "$RUNDIR/$SID/sock"
	wait_until gone_pid "$sup" || fail "supervisor ran on without its socket"
	gone_pid "$init" || fail "init ran on"
	[ ! -e "$RUNDIR/$SID" ] || fail "state left"
	mk
	sup=$(field "$SID" supervisor_pid)
	rm -rf "$RUNDIR"
	wait_until gone_pid "$sup" || fail "supervisor ran on without its directory"
}

# ---- exec on a terminal: a pty of the session's own, relayed by the client ----
TTYRUN=(python3 "$TOP/tests/helpers/ttyrun.py")
PROBE=$HELPERS/ttyprobe
# The transcript of ttyrun.py STEPS... -- CMD..., CRs stripped, into OUT;
# the status into RC.
on_tty() {
	local steps=()
	while [ "$1" != -- ]; do steps+=("$1"); shift; done
	shift
	"${TTYRUN[@]}" "${steps[@]}" -- "$@" >"$T_TMP/tty.out" 2>&1; RC=$?
	OUT=$(tr -d '\r' <"$T_TMP/tty.out")
}
# On a fresh terminal: its state, `cloister exec SID -- sh -c SCRIPT` (the
# session has the probe at /h), the state again. The shell around it is
# the terminal's foreground group and reports each signal it gets.
tty_attack() {  # SID SCRIPT
	on_tty -- bash -c '
		p=$1; shift
		for s in WINCH INT QUIT TSTP HUP TTIN TTOU CONT; do trap "echo caught-$s" $s; done
		echo "before $("$p" state)"
		"$@"; echo "rc=$?"
		echo "after $("$p" state)"' _ "$PROBE" "$CL" exec "$1" -- sh -c "$2"
}
tty_untouched() {
	local before after
	before=$(printf '%s\n' "$OUT" | sed -n 's/^before //p')
	after=$(printf '%s\n' "$OUT" | sed -n 's/^after //p')
	assert_contains "$before" "ldisc=0 size=24x80" "state before ($OUT)"
	assert_contains "$OUT" "rc=0" "exec's status (the transcript ends early when the terminal died)"
	assert_eq "$before" "$after" "the caller's terminal after the exec ($1)"
	assert_not_contains "$OUT" "caught-" "signals to the caller's group ($1)"
}

# The command changes its terminal's line discipline, size and modes, and
# signals its group: only its own pty is affected (before the fix the
# caller's terminal itself was passed in, and `stty line 27` killed it).
t_exec_tty_cannot_change_callers_terminal() {
	local a
	[ -x "$PROBE" ] || fail "ttyprobe helper not built (make check builds it)"
	mk --seccomp unconfined --ro "$HELPERS:/h"
	for a in setd winsz termios sctty sig; do
		tty_attack "$SID" "/h/ttyprobe $a"
		tty_untouched "$a"
	done
	tty_attack "$SID" 'stty line 27 2>/dev/null; stty rows 11 cols 22 -echo -icanon'
	tty_untouched "stty"
	tty_attack "$SID" 'stty rows 11 cols 22; stty size'
	tty_untouched "stty size"
	assert_contains "$OUT" "11 22" "the command's own pty took the size"
	"$CL" rm "$SID"
}

# Typed input reaches the command, its output comes back, the exit code
# passes; the terminal is one of the session's devpts (nothing of the
# host's devpts is inside: the command could chmod a host pty node). The
# session is made with SIGINT ignored (as from a background job): that
# must not reach the command, or ^C would not interrupt it.
t_exec_tty_round_trip() {
	trap '' INT QUIT
	mk
	trap - INT QUIT
	on_tty --expect READY --send 'hello world\r' -- "$CL" exec "$SID" -- sh -c '
		echo READY; read x; echo "got <$x>"
		[ "$(stat -Lc %d /proc/self/fd/0)" = "$(stat -c %d /dev/pts/ptmx)" ] && echo own-devpts
		echo "fds <$(cd /proc/self/fd && echo *)>"
		tty; exit 5'
	assert_contains "$OUT" "fds <0 1 2 3>" "the command holds its stdio only (no master, no socket)"
	assert_eq 5 "$RC" "exit code through the pty ($OUT)"
	assert_contains "$OUT" "got <hello world>" "the line typed in"
	assert_contains "$OUT" "own-devpts" "the pty is the session's"
	assert_contains "$OUT" "/dev/pts/" "tty inside"
	on_tty --expect READY --send '\x03' -- "$CL" exec "$SID" -- sh -c 'echo READY; exec sleep 1000'
	assert_eq 130 "$RC" "^C is the pty's: SIGINT to the command ($OUT)"
	# a failure before the pty exists leaves the terminal as it was
	on_tty -- bash -c 'b=$(stty -g); "$1" exec "$2" -w /nonexistent -- true; echo "rc=$?"
		[ "$b" = "$(stty -g)" ] && echo restored' _ "$CL" "$SID"
	assert_contains "$OUT" "rc=125" "exec failing on a terminal"
	assert_contains "$OUT" "working directory /nonexistent"
	assert_contains "$OUT" "restored"
	"$CL" rm "$SID"
}

t_exec_tty_window_size_follows() {
	mk
	on_tty --size 24x80 --expect READY --resize 40x100 -- "$CL" exec "$SID" -- python3 -c 'import signal, os
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGWINCH])
print("start", os.get_terminal_size(), "READY", flush=True)
signal.sigwait([signal.SIGWINCH])
print("now", os.get_terminal_size())'
	assert_eq 0 "$RC" "exec: $OUT"
	assert_contains "$OUT" "start os.terminal_size(columns=80, lines=24)" "initial size"
	assert_contains "$OUT" "now os.terminal_size(columns=100, lines=40)" "size after SIGWINCH"
	"$CL" rm "$SID"
}

# SIGTERM, SIGINT or SIGHUP to the client: the terminal is given back, the
# client ends by that signal, and the command goes with it.
t_exec_tty_restored_after_signals() {
	local sig want m
	mk
	for sig in TERM:143 INT:130 HUP:129; do
		want=${sig#*:}; sig=${sig%:*}; m=$(marker "sig$sig")
		on_tty --expect READY --signal "$sig" -- bash -c 'trap "echo outer-$2" '"$sig"'
			b=$(stty -g); "$1" exec "$3" -- sh -c "echo READY; sleep 1000; : $4"; echo "rc=$?"
			[ "$b" = "$(stty -g)" ] && echo restored' _ "$CL" "$sig" "$SID" "$m"
		assert_contains "$OUT" "rc=$want" "status after SIG$sig"
		assert_contains "$OUT" "restored" "the caller's terminal after SIG$sig"
		assert_gone "$m"
	done
	"$CL" rm "$SID"
}

# Only the fds that are a terminal get the pty; the others are passed as
# they are.
t_exec_tty_only_terminal_fds() {
	mk
	on_tty -- sh -c '"$1" exec "$2" -- sh -c "echo to-file; tty; echo err >&2" >"$3"' _ "$CL" "$SID" "$T_TMP/f"
	assert_eq "to-file
/dev/pts/0" "$(cat "$T_TMP/f")" "stdout to a file stays that file; stdin is the pty"
	on_tty -- sh -c '"$1" exec "$2" -- sh -c "readlink /proc/self/fd/0; tty <&1" </dev/null' _ "$CL" "$SID"
	assert_eq "/dev/null
/dev/pts/0" "$OUT" "stdout only"
	on_tty --expect READY --send 'abc\r' -- sh -c '"$1" exec "$2" -- sh -c "echo READY >&2; read x; echo got-\$x; readlink /proc/self/fd/1" | sed "s/^/piped: /"' _ "$CL" "$SID"
	assert_contains "$OUT" "piped: got-abc" "stdin only: typed line"
	assert_contains "$OUT" "piped: pipe:" "stdin only: stdout stays the pipe"
	clr exec "$SID" -- sh -c 'tty; ls /dev/pts | tr "\n" " "' </dev/null
	assert_eq "not a tty
ptmx " "$OUT" "no pty without a terminal"
	"$CL" rm "$SID"
}

if is_root; then

# Every exec runs in the session's cgroup: the host sees the command there,
# and one limit counts the processes of all execs together.
t_execs_share_the_session_cgroup() {
	local m init pid cg procs; m=$(marker cg)
	mk --pids 10
	init=$(field "$SID" init_pid)
	cg=$(sed -n 's/^[0-9]*:pids://p; s/^0:://p' "/proc/$init/cgroup" | head -1)
	procs=/sys/fs/cgroup/pids$cg/cgroup.procs
	[ -f "$procs" ] || procs=/sys/fs/cgroup$cg/cgroup.procs
	[ -f "$procs" ] || fail "no pids cgroup for the session ($cg)"
	# exec A holds 8 of the 10 (its shell, 7 sleeps; with init, 9)
	"$CL" exec "$SID" -- sh -c "for i in 1 2 3 4 5 6; do sleep 1000 & done; sleep 1000; : $m" >/dev/null 2>&1 &
	wait_until lines_are "$procs" 9 || fail "exec A: $(wc -l <"$procs") processes in the session cgroup, expected 9; inside: $("$CL" exec "$SID" -- ps -eo pid,args | tr "\n" ";")"
	# the command itself, not the `cloister exec` client carrying the marker too
	for pid in $(procs_with "$m"); do
		[ "$(cut -d '' -f1 <"/proc/$pid/cmdline" | tr -d '\0')" = sh ] && break
	done
	grep -qx "$pid" "$procs" || fail "the command ($pid) is not in $procs"
	# exec B: its shell fits, its first fork does not
	clr exec "$SID" -- sh -c 'sleep 1 & sleep 1 & wait'
	assert_contains "$ERR" "fork" "a fork past --pids 10 across two execs"
	"$CL" rm "$SID"
	assert_gone "$m"
}
# exec --json-status reports OOM kills and peak memory from the session's
# cgroup: an OOM kill during this exec (not one before it), and a peak at
# least what the command touched and at most the limit.
t_exec_status_oom_and_peak() {
	local peak
	[ -x "$HELPERS/cg_hog" ] || fail "cg_hog helper not built (make check builds it)"
	mk --memory 128m --memory-swap 128m --ro "$HELPERS:/h"
	clr exec "$SID" --json-status "$T_TMP/st.json" -- /h/cg_hog mem 40
	assert_eq 0 "$RC" "touching 40 MiB ($ERR)"
	assert_eq False "$(py 'j["oom_killed"]' <"$T_TMP/st.json")" "oom_killed under the limit"
	peak=$(py 'j["memory_peak_bytes"]' <"$T_TMP/st.json")
	[ "$peak" -ge $((40 << 20)) ] && [ "$peak" -le $((128 << 20)) ] ||
		fail "memory_peak_bytes $peak not within 40 MiB..128 MiB"
	clr exec "$SID" --json-status "$T_TMP/st.json" -- /h/cg_hog mem 400
	assert_eq 137 "$RC" "past the limit"
	assert_eq "True 137 9" "$(py 'str(j["oom_killed"])+" "+str(j["exit_code"])+" "+str(j["signal"])' <"$T_TMP/st.json")" "status after the OOM kill"
	clr exec "$SID" --json-status "$T_TMP/st.json" -- true
	assert_eq False "$(py 'j["oom_killed"]' <"$T_TMP/st.json")" "oom_killed of the next exec (the earlier kill is not its)"
	"$CL" rm "$SID"
	mk
	clr exec "$SID" --json-status "$T_TMP/st.json" -- true
	assert_eq "False None" "$(py 'str(j["oom_killed"])+" "+str(j["memory_peak_bytes"])' <"$T_TMP/st.json")" "a session without a cgroup"
	"$CL" rm "$SID"
}
# Another user cannot connect (directory 0700), nor could it pass the
# peer check if it could.
t_other_user_is_refused() {
	mk
	chmod 755 "$T_TMP"
	assert_contains "$(runuser -u cloister-test -- python3 "$PEER" connect "$RUNDIR/$SID/sock")" \
		"error 13" "another user's connect"
	clr exec "$SID" -- true; assert_eq 0 "$RC"
	"$CL" rm "$SID"
}
fi

run_tests
