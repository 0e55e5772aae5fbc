#!/bin/bash
# Sessions, exec -t: the pty relay round trip, window size, the terminal
# restored after signals, only terminal fds relayed, and the caller's
# terminal out of the sandbox's reach.
. "$(dirname "$0")/session_lib.bash"

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

run_tests
