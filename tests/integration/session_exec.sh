#!/bin/bash
# Sessions, exec (`cloister create` then `exec`): the command runs with the
# first one's isolation, exit codes, env/cwd/timeout between execs, stdio
# passed as fds, concurrent execs, signals, a killed client, the session's
# cgroup and an exec's OOM and peak status.
. "$(dirname "$0")/session_lib.bash"

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
fi


if is_root; then
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
fi

run_tests
