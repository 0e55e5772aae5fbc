#!/bin/bash
# CLOISTER_TRACE: launch-step stamps on stderr when set, nothing when unset,
# and the bench's floor program works for this user.
source "$(dirname "$0")/../lib.sh"

# Causally ordered steps. "parent clone" and "init fork" race with the
# other side of their fork, so they are only required to be present.
STEPS="parent start|parent prepare|child start|child die-with-parent|child uid/gid maps|child mounts|child network|child hostname|command pre-exec|init command reaped|parent supervise|parent reap|parent release"

t_stamps_every_step_in_order() {
	CLOISTER_TRACE=1 clr run --seccomp unconfined -- /bin/true
	assert_eq 0 "$RC" "exit code"
	local IFS='|' s prev=0 t
	for s in $STEPS; do
		t=$(printf '%s\n' "$ERR" | awk -v k="$s" '$1 == "cloister-trace:" && substr($0, index($0, $3)) == k {print $2; exit}')
		[ -n "$t" ] || fail "no stamp for '$s' in: $ERR"
		# Stamps of one process are ordered; across processes only the
		# causal ones are (each listed step happens after the one before).
		[ "$t" -ge "$prev" ] || fail "stamp '$s' ($t) is earlier than the step before ($prev)"
		prev=$t
	done
	assert_contains "$ERR" " parent clone" "clone stamp"
	assert_contains "$ERR" " init fork" "init fork stamp"
}

t_silent_when_unset_or_zero() {
	clr run --seccomp unconfined -- /bin/true
	assert_eq 0 "$RC" "exit code"
	assert_not_contains "$ERR" "cloister-trace" "stderr without CLOISTER_TRACE"
	CLOISTER_TRACE=0 clr run --seccomp unconfined -- /bin/true
	assert_not_contains "$ERR" "cloister-trace" "stderr with CLOISTER_TRACE=0"
}

t_command_output_and_status_unchanged() {
	CLOISTER_TRACE=1 clr run --seccomp unconfined -- /bin/sh -c 'echo hi; exit 7'
	assert_eq 7 "$RC" "exit code"
	assert_eq hi "$OUT" "stdout"
}

t_floor_runs_in_new_namespaces() {
	local out
	# Built here from source: the unprivileged pass runs on a copy without
	# build/bench/.
	cc -O2 -o "$T_TMP/floor" "$TOP/bench/floor.c" || fail "building bench/floor.c"
	out=$("$T_TMP/floor" /bin/sh -c 'echo $$; cat /proc/self/uid_map') || fail "floor failed"
	assert_eq 1 "$(printf '%s\n' "$out" | head -1)" "pid inside the floor"
	assert_eq "0 $(id -u) 1" "$(printf '%s\n' "$out" | sed -n 2p | awk '{print $1, $2, $3}')" "uid map"
	out=$("$T_TMP/floor" /bin/readlink /proc/self/ns/net) || fail "floor failed"
	[ "$out" != "$(readlink /proc/self/ns/net)" ] || fail "floor shares the host network namespace"
	out=$("$T_TMP/floor" -n /bin/readlink /proc/self/ns/net) || fail "floor -n failed"
	assert_eq "$(readlink /proc/self/ns/net)" "$out" "floor -n network namespace"
}

run_tests
