# Relay stress, shared by supervisor.sh (build/cloister) and asan.sh
# (build-asan/cloister); sourced after lib.sh, runs whatever $CL names.
# A server behind --publish takes 8 clients x 250 short connections; then
# supervision must still be alive: SIGTERM reaches the command, --timeout
# fires. (Regression: a flow freed while epoll still reported its fds made
# the supervisor read a zeroed event as "sandbox exited" and stop.)
RPEER="$TOP/tests/integration/relaypeer.py"
RS_SC=${CORE_SECCOMP:---seccomp=default}

# Values written with `echo $! >f` are waited for with test -s: the file
# exists before it has content.
# Starts the server sandbox with --timeout $1 in $RS/; sets RS_HP. The
# cloister pid lands in $RS/pid, its exit code in $RS/rc.
rs_start() {
	RS=$(mktemp -d "$T_TMP/rs.XXXXXX"); mkdir "$RS/r"
	RS_HP=$(python3 "$RPEER" free_port)
	( "$CL" run $RS_SC --ro "$RPEER:/peer.py" --rw "$RS/r:/r" --publish "$RS_HP:9000" \
		--timeout "$1" -- python3 /peer.py serve 9000 /r/ready 2>"$RS/err" &
	  echo $! >"$RS/pid"; wait $!; echo $? >"$RS/rc" ) 2>/dev/null &
	T_WAIT=60 wait_until test -s "$RS/pid" || fail "cloister did not start"
	wait_until test -e "$RS/r/ready" || { rs_kill; fail "server did not start: $(cat "$RS/err")"; }
}

# Only the cloister this test started; its sandbox dies with it.
rs_kill() {
	kill -KILL "$(cat "$RS/pid")" 2>/dev/null
	T_WAIT=60 wait_until test -s "$RS/rc"
}

# Waits up to $1 seconds for cloister to exit; prints its exit code.
rs_rc() {
	T_WAIT=$1 wait_until test -s "$RS/rc" || { rs_kill; echo hung; return; }
	cat "$RS/rc"
}

rs_no_sanitizer_report() {
	if grep -q 'Sanitizer' "$RS/err"; then
		fail "sanitizer report: $(grep -m3 -A3 'ERROR: \|runtime error' "$RS/err" | tr '\n' ' ')"
	fi
}

# 8 x 250 connections through the relay; sets RS_SECS (how long it took).
rs_hammer() {
	local out; out=$(python3 "$RPEER" stress "$RS_HP" 8 250)
	RS_SECS=${out#* }
	[ "${out%% *}" = 2000 ] || { rs_kill; rs_no_sanitizer_report;
		fail "answered ${out%% *} of 2000 connections: $(tail -n 3 "$RS/err")"; }
}

# The two checks, in two sandboxes: the first (long safety timeout) gets
# SIGTERM after the stress, the second a --timeout sized from the first
# run (startup + stress, x4) so it fires only after its stress is done.
relay_stress_then_sigterm_and_timeout() {
	local t0 t1 rc secs
	t0=$(date +%s)
	rs_start 600
	rs_hammer
	t1=$(date +%s)
	kill -TERM "$(cat "$RS/pid")"
	rc=$(rs_rc 60)
	rs_no_sanitizer_report
	assert_eq 143 "$rc" "exit after SIGTERM following the stress (hung = supervision stopped): $(tail -n 2 "$RS/err")"

	secs=$(( (t1 - t0 + 1) * 4 )); [ "$secs" -ge 10 ] || secs=10
	rs_start "$secs"
	rs_hammer
	rc=$(rs_rc $((secs + 60)))
	rs_no_sanitizer_report
	assert_eq 124 "$rc" "exit by --timeout $secs after the stress (hung = supervision stopped): $(tail -n 2 "$RS/err")"
}
