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

# ---- one stdio fd a terminal, the others not (issue #29, class 10) ----
# The usual case for a tool runner: output piped, stdin the terminal (or
# only stdout, or only stderr). one_tty FD CMD...: on a fresh terminal, only
# fd FD of CMD is that terminal (the rest /dev/null or a file); the caller's
# shell reports the terminal before and after and every signal it gets. OUT.
one_tty() {
	local fd=$1; shift
	[ -x "$PROBE" ] || fail "ttyprobe helper not built (make check builds it)"
	OUT=$("${TTYRUN[@]}" -- bash -c '
		p=$1 fd=$2 o=$3; shift 3
		for s in WINCH INT QUIT TSTP HUP USR1 USR2 TTIN TTOU CONT; do trap "echo caught-$s" $s; done
		echo "before $("$p" state)"
		case $fd in
		0) "$@" >"$o" 2>&1 ;;
		1) "$@" </dev/null 2>"$o" ;;
		2) "$@" </dev/null >"$o" ;;
		esac
		echo "rc=$?"
		echo "after $("$p" state)"' _ "$PROBE" "$fd" "$T_TMP/one.out" "$@" 2>&1 | tr -d '\r')
}
# What the terminal attacks did to the caller's terminal: "untouched", or
# what changed (a dead terminal loses the transcript's "after" line).
verdict() {
	local before after
	before=$(printf '%s\n' "$OUT" | sed -n 's/^before //p')
	after=$(printf '%s\n' "$OUT" | sed -n 's/^after //p')
	if [ -z "$after" ]; then echo "terminal dead"
	elif [ "$before" != "$after" ]; then echo "changed: $before -> $after"
	elif printf '%s\n' "$OUT" | grep -q caught-; then echo "signalled: $(printf '%s\n' "$OUT" | grep -o 'caught-[A-Z]*' | sort -u | tr '\n' ' ')"
	else echo untouched; fi
}
# Control: on the bare host each attack through the one terminal fd
# reaches the caller's terminal (TIOCSTI only where this host allows it).
t_one_tty_control_on_host() {
	local fd a v
	for fd in 0 1 2; do
		for a in setd winsz sti; do
			one_tty $fd "$PROBE" $a
			v=$(verdict)
			if [ $a = sti ] && [ "$v" = untouched ]; then
				assert_contains "$(cat "$T_TMP/one.out" 2>/dev/null)$OUT" "sti($fd): E" "control: sti on fd $fd neither worked nor was refused ($OUT)"
				note "fd $fd: this host refuses TIOCSTI itself"
				continue
			fi
			[ "$v" != untouched ] || fail "control: $a through fd $fd left the caller's terminal untouched on the bare host ($OUT)"
		done
	done
}
# Every front-end that must never hold the caller's terminal, each fd alone.
untouched_each_fd() {  # WHAT CMD... (the command is given "setd winsz sti")
	local what=$1 fd v; shift
	for fd in 0 1 2; do
		one_tty $fd "$@" setd winsz sti
		v=$(verdict)
		assert_contains "$OUT" "rc=0" "$what, terminal on fd $fd only: exit ($(cat "$T_TMP/one.out" 2>/dev/null))"
		assert_eq untouched "$v" "$what, terminal on fd $fd only: the caller's terminal ($OUT)"
	done
}
t_one_tty_run() {
	untouched_each_fd "cloister run" "$CL" run --seccomp unconfined --ro "$HELPERS:/h" -- /h/ttyprobe
}
t_one_tty_exec() {
	local id
	export CLOISTER_RUNTIME_DIR=$T_TMP/rt
	id=$("$CL" create --seccomp unconfined --ro "$HELPERS:/h" --idle-timeout 120) || fail "create failed"
	untouched_each_fd "cloister exec" "$CL" exec "$id" -- /h/ttyprobe
	"$CL" rm "$id" || fail "rm failed"
}
# Spec mode: the command's stdio are /dev/null and pipes, whatever the
# caller's are; its result JSON (and a failure) go to cloister's stdout.
t_one_tty_spec() {
	mkdir -p "$T_TMP/req"; cp "$PROBE" "$T_TMP/req/ttyprobe"; chmod -R a+rX "$T_TMP"
	python3 - "$T_TMP" >"$T_TMP/spec.json" <<'PY'
import json, sys
t = sys.argv[1]
print(json.dumps({"runId": "RUNID", "sandboxId": "s1", "rootDir": t, "requestBundlePath": t + "/req",
                  "command": "./ttyprobe setd winsz sti ctty >&2; echo '{\"status\":\"finished\"}'"}))
PY
	# (the spec's command is fixed: the probe's arguments are in it)
	# (a sandboxId is used once per run: each launch is its own run, r<pid>)
	untouched_each_fd "sandbox run --spec" sh -c 'sed "s/RUNID/r$$/" "$2" >"$2.$$" &&
		exec "$1" sandbox run --spec "$2.$$" >/dev/null' _ "$CL" "$T_TMP/spec.json"
}
# bwrap mode keeps bwrap's behaviour (the control: the attacks reach the
# caller through the fd bwrap passes on); the hardening policy's own_tty
# gives the command a pty of the sandbox's own instead.
t_one_tty_bwrap_own_tty() {
	local fd v bw=("$CL" bwrap --ro-bind / / --dev /dev --unshare-pid --new-session "$PROBE")
	for fd in 0 1 2; do
		one_tty $fd env -u CLOISTER_BWRAP_POLICY "${bw[@]}" setd
		v=$(verdict)
		[ "$v" != untouched ] || fail "control: bwrap mode without own_tty, fd $fd: the attack did not reach the caller's terminal ($OUT)"
	done
	printf '{"own_tty":true,"new_session":true}\n' >"$T_TMP/policy.json"; chmod 644 "$T_TMP/policy.json"
	chmod 755 "$T_TMP"
	untouched_each_fd "cloister bwrap + own_tty" env CLOISTER_BWRAP_POLICY="$T_TMP/policy.json" "${bw[@]}"
}

run_tests
