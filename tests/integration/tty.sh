#!/bin/bash
# Commands started on a terminal get a pty of the sandbox's own, relayed by
# cloister: interactive programs, ^C, window size changes and exit codes work
# through it, and the caller's terminal is given back as it was.
source "$(dirname "$0")/../lib.sh"
TTYRUN=(python3 "$TOP/tests/helpers/ttyrun.py")

# Runs `cloister ARGS...` on a fresh terminal with the ttyrun.py steps given
# before "--"; transcript (CRs stripped) in OUT, status in RC.
on_tty() {
	local steps=()
	while [ "$1" != -- ]; do steps+=("$1"); shift; done
	shift
	"${TTYRUN[@]}" "${steps[@]}" -- "$CL" "$@" >"$T_TMP/tty.out" 2>&1; RC=$?
	OUT=$(tr -d '\r' <"$T_TMP/tty.out")
}

t_command_has_its_own_pty() {
	on_tty -- run -- sh -c 'tty; readlink /proc/self/fd/1; ls /dev/pts | tr "\n" " "'
	assert_eq 0 "$RC" "run: $OUT"
	assert_eq "/dev/pts/0
/dev/pts/0
0 ptmx " "$OUT" "stdio is pty 0 of the sandbox's devpts"
}

t_line_typed_in_reaches_command() {
	on_tty --expect READY --send 'hello world\r' -- run -- sh -c 'echo READY; read x; echo "got <$x>"'
	assert_eq 0 "$RC" "run: $OUT"
	assert_contains "$OUT" "got <hello world>" "the line typed in"
}

t_raw_mode_program_works() {
	on_tty --expect READY --send 'ab\x03' -- run -- sh -c 'stty raw -echo; echo READY; x=$(dd bs=1 count=3 2>/dev/null | od -An -c); stty sane; echo "raw <$x>"'
	assert_eq 0 "$RC" "run: $OUT"
	assert_contains "$OUT" "raw <   a   b 003>" "bytes, ^C included, read raw"
}

t_ctrl_c_interrupts_command() {
	on_tty --expect READY --send '\x03' -- run -- sh -c 'echo READY; exec sleep 1000'
	assert_eq 130 "$RC" "^C ends the command with SIGINT ($OUT)"
}

t_window_size_follows_caller() {
	on_tty --size 24x80 --expect READY --resize 40x100 -- run -- python3 -c 'import signal, os
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGWINCH])
print("start", os.get_terminal_size(), "READY", flush=True)
signal.sigwait([signal.SIGWINCH])
print("now", os.get_terminal_size())'
	assert_eq 0 "$RC" "run: $OUT"
	assert_contains "$OUT" "start os.terminal_size(columns=80, lines=24)" "initial size"
	assert_contains "$OUT" "now os.terminal_size(columns=100, lines=40)" "size after SIGWINCH"
}

t_exit_code_passes_and_terminal_restored() {
	local out
	out=$("${TTYRUN[@]}" -- bash -c 'b=$(stty -g); "$1" run -- sh -c "exit 7"; echo "rc=$?"; [ "$b" = "$(stty -g)" ] && echo restored' _ "$CL" 2>&1 | tr -d '\r')
	assert_contains "$out" "rc=7" "exit code"
	assert_contains "$out" "restored" "the caller's terminal settings"
}

# SIGTERM is forwarded (the command ends, cloister returns normally); SIGABRT
# kills cloister itself: its handler still gives the terminal back first.
t_terminal_restored_after_signals() {
	local sig want out
	for sig in TERM:143 ABRT:134; do
		want=${sig#*:}; sig=${sig%:*}
		out=$("${TTYRUN[@]}" --expect READY --signal "$sig" -- bash -c 'trap "echo outer-$2" '"$sig"'
			b=$(stty -g); "$1" run -- sh -c "echo READY; exec sleep 1000"; echo "rc=$?"
			[ "$b" = "$(stty -g)" ] && echo restored' _ "$CL" "$sig" 2>&1 | tr -d '\r')
		assert_contains "$out" "rc=$want" "status after SIG$sig"
		assert_contains "$out" "restored" "the caller's terminal after SIG$sig"
	done
}

t_only_terminal_fds_get_the_pty() {
	"${TTYRUN[@]}" -- sh -c '"$1" run -- sh -c "echo to-file; tty; echo err >&2" >"$2"' _ "$CL" "$T_TMP/f" >/dev/null 2>&1
	assert_eq "to-file
/dev/pts/0" "$(cat "$T_TMP/f")" "stdout redirected to a file stays that file; stdin is the pty"
}

# A terminal on stdout only: output goes through the pty, stdin stays. On
# stdin only: typed input reaches the command, its stdout stays the pipe.
t_terminal_on_one_side_only() {
	local out
	out=$("${TTYRUN[@]}" -- sh -c '"$1" run -- sh -c "readlink /proc/self/fd/0; tty <&1" </dev/null' _ "$CL" 2>&1 | tr -d '\r')
	assert_eq "/dev/null
/dev/pts/0" "$out" "stdout only"
	out=$("${TTYRUN[@]}" --expect READY --send 'abc\r' -- sh -c '"$1" run -- sh -c "echo READY >&2; read x; echo got-\$x; tty; readlink /proc/self/fd/1" | sed "s/^/piped: /"' _ "$CL" 2>&1 | tr -d '\r')
	assert_contains "$out" "piped: got-abc" "stdin only: typed line"
	assert_contains "$out" "piped: /dev/pts/0" "stdin only: stdin is the pty"
	assert_contains "$out" "piped: pipe:" "stdin only: stdout stays the pipe"
}

t_no_pty_without_a_terminal() {
	clr run -- sh -c 'tty; echo "tty=$?"; ls /dev/pts | tr "\n" " "' </dev/null
	assert_eq 0 "$RC" "run: $ERR"
	assert_eq "not a tty
tty=1
ptmx " "$OUT" "no pty allocated"
}

t_bwrap_mode_shares_the_terminal() {
	local out
	out=$("${TTYRUN[@]}" -- bash -c 'echo "outer $(tty)"; "$1" bwrap --dev-bind / / -- sh -c "echo inner \$(tty)"' _ "$CL" 2>&1 | tr -d '\r')
	local outer inner
	outer=$(printf '%s\n' "$out" | sed -n 's/^outer //p')
	inner=$(printf '%s\n' "$out" | sed -n 's/^inner //p')
	assert_contains "$outer" "/dev/pts/" "outer terminal ($out)"
	assert_eq "$outer" "$inner" "bwrap keeps bwrap's behaviour: the caller's terminal"
}

run_tests
