#!/bin/bash
# The caller's terminal (issue #14, hole 3): a sandboxed command started on a
# terminal attacks it with ioctls and signals; the terminal, as the caller
# sees it once cloister is gone, must be exactly as it was.
source "$(dirname "$0")/../lib.sh"
TTYRUN=(python3 "$TOP/tests/helpers/ttyrun.py")
PROBE=$HELPERS/ttyprobe

# On a fresh terminal (ttyrun.py): the terminal's state, then cloister runs
# `ttyprobe ATTACK` with the given options, then the state again. The shell
# around it is in the terminal's foreground group and reports each signal it
# gets. Leaves the transcript (CRs stripped) in OUT.
attack() {  # attack ATTACK [cloister run options...]
	local a=$1; shift
	[ -x "$PROBE" ] || fail "ttyprobe helper not built (make check builds it)"
	OUT=$("${TTYRUN[@]}" -- bash -c '
		p=$1; shift
		for s in WINCH INT QUIT TSTP HUP USR1 USR2 TTIN TTOU CONT; do trap "echo caught-$s" $s; done
		echo "before $("$p" state)"
		"$@"; echo "rc=$?"
		echo "after $("$p" state)"' _ "$PROBE" \
		"$CL" run "$@" --ro "$HELPERS:/h" -- /h/ttyprobe "$a" 2>&1 | tr -d '\r')
}

# The caller's terminal came through untouched and nothing signalled it.
assert_untouched() {
	local before after
	before=$(printf '%s\n' "$OUT" | sed -n 's/^before //p')
	after=$(printf '%s\n' "$OUT" | sed -n 's/^after //p')
	assert_contains "$before" "ldisc=0" "state before the attack ($OUT)"
	assert_contains "$OUT" "rc=0" "cloister's exit (the transcript ends early when the terminal died)"
	assert_eq "$before" "$after" "the caller's terminal after the attack"
	assert_not_contains "$OUT" "caught-" "signals to the caller's foreground group"
}

t_tiocsti_cannot_inject_into_caller() {
	local sc a
	for sc in default unconfined; do
		for a in sti sti-high; do
			attack "$a" --seccomp "$sc"
			assert_untouched
			assert_contains "$OUT" "pending=0" "no input injected ($a, seccomp $sc)"
		done
	done
}

t_line_discipline_stays() {
	attack setd --seccomp unconfined
	assert_untouched
}

t_window_size_stays_and_no_sigwinch() {
	attack winsz --seccomp unconfined
	assert_untouched
	assert_contains "$OUT" "size=24x80" "the caller's window size"
}

t_termios_stays() {
	attack termios --seccomp unconfined
	assert_untouched
}

t_cannot_steal_caller_as_ctty() {
	attack sctty --seccomp unconfined
	assert_untouched
}

t_no_signal_to_callers_group() {
	attack sig --seccomp unconfined
	assert_untouched
}

# Stdio not on a terminal (no pty is made) while the caller still has a
# controlling terminal: only the new session keeps the command from opening
# it as /dev/tty, whatever seccomp allows.
t_new_session_hides_callers_ctty() {
	[ -x "$PROBE" ] || fail "ttyprobe helper not built (make check builds it)"
	OUT=$("${TTYRUN[@]}" -- bash -c '
		p=$1 o=$2; shift 2
		echo "before $("$p" state)"
		"$@" </dev/null >"$o" 2>&1; echo "rc=$?"
		echo "after $("$p" state)"' _ "$PROBE" "$T_TMP/probe.out" \
		"$CL" run --seccomp unconfined --ro "$HELPERS:/h" -- /h/ttyprobe ctty 2>&1 | tr -d '\r')
	assert_contains "$OUT" "rc=0" "cloister's exit"
	assert_eq "ctty-open: ENXIO" "$(cat "$T_TMP/probe.out")" "the caller's terminal from inside"
	assert_contains "$OUT" "after ldisc=0 size=24x80" "the caller's terminal"
	assert_eq "$(printf '%s\n' "$OUT" | sed -n 's/^before //p')" "$(printf '%s\n' "$OUT" | sed -n 's/^after //p')" "state"
}

run_tests
