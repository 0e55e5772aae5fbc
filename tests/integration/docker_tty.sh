#!/bin/bash
# The docker executor with a terminal (root only): a pty in the container
# when all stdio are terminals, typed input and ^C, window size, the
# terminal restored after timeout and cancel, the output limit.
. "$(dirname "$0")/docker_lib.bash"

if is_root; then

TTYRUN=(python3 "$TOP/tests/helpers/ttyrun.py")
# ttyrun.py steps, "--", cloister's arguments after `run --runtime docker`;
# transcript (CRs stripped) in OUT, status in RC.
dk_tty() {
	local steps=()
	while [ "$1" != -- ]; do steps+=("$1"); shift; done
	shift
	docker_up
	"${TTYRUN[@]}" "${steps[@]}" -- "$CL" run --runtime docker "$@" >"$T_TMP/tty.out" 2>&1; RC=$?
	OUT=$(tr -d '\r' <"$T_TMP/tty.out")
}

t_docker_tty_command_has_a_terminal() {
	dk_tty -- -- sh -c 'tty; [ -t 0 ] && [ -t 2 ] && echo all-tty; exit 3'
	assert_eq 3 "$RC" "exit code through the tty ($OUT)"
	assert_eq "/dev/pts/0
all-tty" "$OUT" "the container's own pty"
}

t_docker_tty_typed_line_and_ctrl_c() {
	dk_tty --expect READY --send 'hello world\r' -- -- sh -c 'echo READY; read x; echo "got <$x>"'
	assert_eq 0 "$RC" "run: $OUT"
	assert_contains "$OUT" "got <hello world>" "the line typed in"
	dk_tty --expect READY --send '\x03' -- -- sh -c 'echo READY; exec sleep 1000'
	assert_eq 130 "$RC" "^C ends the command with SIGINT ($OUT)"
	# The caller's terminal is raw: bytes (^C too) reach a raw program as they are.
	dk_tty --expect READY --send 'ab\x03' -- -- sh -c 'stty raw -echo; echo READY; x=$(dd bs=1 count=3 2>/dev/null | od -An -c); stty sane; echo "raw <$x>"'
	assert_eq 0 "$RC" "raw run: $OUT"
	assert_contains "$OUT" "raw <   a   b 003>" "bytes, ^C included, read raw"
}

# The size is set once the container runs (daemons before API 1.42 cannot
# take it at create), so the command waits for it; then a resize reaches it.
t_docker_tty_window_size_follows_caller() {
	dk_tty --size 24x80 --expect READY --resize 40x100 -- -- sh -c \
		'until [ "$(stty size 2>/dev/null)" = "24 80" ]; do :; done
		 trap "echo now \$(stty size); exit 0" WINCH; echo start $(stty size) READY; sleep 1000 & wait'
	assert_eq 0 "$RC" "run: $OUT"
	assert_contains "$OUT" "start 24 80 READY" "initial size"
	assert_contains "$OUT" "now 40 100" "size after the caller's resize"
}

# Timeout and cancel give the same codes as without a terminal, and the
# caller's terminal is back as it was; the container is gone.
t_docker_tty_timeout_and_cancel_restore_the_terminal() {
	local out m=$(marker ttycancel)
	docker_up
	out=$("${TTYRUN[@]}" -- bash -c 'b=$(stty -g); "$1" run --runtime docker --timeout 2 --json-status "$2" -- sleep 100
		echo "rc=$?"; [ "$b" = "$(stty -g)" ] && echo restored' _ "$CL" "$T_TMP/st.json" 2>&1 | tr -d '\r')
	assert_contains "$out" "rc=124" "timeout with a tty"
	assert_contains "$out" restored "the terminal after the timeout"
	assert_eq True "$(py 'j["timed_out"]' <"$T_TMP/st.json")" timed_out
	out=$("${TTYRUN[@]}" --expect "READY-$m" --signal TERM -- bash -c 'trap "echo outer-TERM" TERM
		b=$(stty -g); "$1" run --runtime docker -- sh -c "echo READY-$2; exec sleep 1000"; echo "rc=$?"
		[ "$b" = "$(stty -g)" ] && echo restored' _ "$CL" "$m" 2>&1 | tr -d '\r')
	assert_contains "$out" "rc=143" "status after SIGTERM"
	assert_contains "$out" restored "the terminal after SIGTERM"
	assert_eq "" "$(docker ps -a --no-trunc --format '{{.Command}}' | grep -F "READY-$m")" "container left after the cancel"
}

# A redirected stream keeps the stream mode: stdout stays the file and
# separate from stderr (a docker Tty would merge them).
t_docker_tty_only_when_all_stdio_are_terminals() {
	docker_up
	"${TTYRUN[@]}" -- sh -c '"$1" run --runtime docker -- sh -c "tty; echo err >&2" >"$2"' _ "$CL" "$T_TMP/f" >"$T_TMP/tty.out" 2>&1
	assert_eq "not a tty" "$(cat "$T_TMP/f")" "stdout redirected: no tty, output in the file"
	assert_contains "$(cat "$T_TMP/tty.out")" err "stderr still on the terminal"
}

t_docker_tty_output_limit() {
	dk_tty -- --output-limit 10 --json-status "$T_TMP/st.json" -- seq 1000
	assert_eq 0 "$RC" "run: $OUT"
	assert_contains "$OUT" "output cut at 10 bytes"
	assert_not_contains "$OUT" 1000 "output past the limit"
	assert_eq True "$(py 'j["output_truncated"]' <"$T_TMP/st.json")" output_truncated
}

fi

run_tests
# A daemon the suite started goes with it (one already running stays).
if is_root; then bash "$TOP/tests/helpers/dockerd.sh" down; fi
