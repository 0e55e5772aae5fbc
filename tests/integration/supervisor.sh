#!/bin/bash
# The supervisor and init under stress and failure: the relay survives many
# short connections (and keeps supervising), request ids past 4095, and a
# failed capability drop in init stops the launch.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/relay_stress.bash"

t_relay_stress_then_sigterm_and_timeout() {
	relay_stress_then_sigterm_and_timeout
}

# Ids once rode in the errno field, clamped at 4095: connection 4096 hung.
t_publish_more_than_4096_connections() {
	rs_start 600
	local n; n=$(python3 "$RPEER" sequential "$RS_HP" 4200)
	rs_kill
	assert_eq 4200 "$n" "sequential connections answered through one --publish"
}

# init's vfork child shares init's memory until exec: it may not touch
# the heap (the capability drop once went through libcap's malloc there).
t_vfork_child_does_not_allocate() {
	local probe=$HELPERS/vfork_alloc.so e args CL=$CL
	[ -f "$probe" ] || skip "no $probe: make $probe"
	# The probe replaces malloc, which an ASan build (make check-asan) owns:
	# this property of the code is checked on the plain build.
	CL=${CLOISTER:-$TOP/build/cloister}   # CLOISTER: a mutant (make mutate)
	e=$(mktemp "$T_TMP/err.XXXXXX")
	for args in "--" "--cap-add NET_BIND_SERVICE --uid 1000 --workdir /tmp --" \
	            "--seccomp unconfined --cap-add ALL --"; do
		VFORK_ALLOC_PROBE=1 LD_PRELOAD=$probe "$CL" run $args true 2>"$e"
		assert_eq 0 "$?" "run $args true: $(cat "$e")"
		assert_contains "$(cat "$e")" "vfork-alloc-probe: loaded" "the probe is in front of cloister"
		assert_not_contains "$(cat "$e")" "before exec by the command" "run $args"
	done
}

# strace fails capset for init (and anything else that calls it).
with_failing_capset() {  # WHEN cloister-args...
	command -v strace >/dev/null || skip "strace not installed (tests/deps.sh install)"
	local e; e=$(mktemp "$T_TMP/err.XXXXXX")
	OUT=$(strace -f -qq -o /dev/null -e trace=capset -e "inject=capset:error=EPERM:when=$1" \
		"$CL" "${@:2}" 2>"$e"); RC=$?
	ERR=$(cat "$e")
	grep -q 'ptrace\|PTRACE' "$e" && skip "strace cannot trace here: $ERR"
	return 0
}

# The drop before the command exists: failing it is a setup error, exit
# 125 with one line, and the command never starts.
t_init_capability_drop_failure_is_fatal() {
	mkdir "$T_TMP/r"
	with_failing_capset 1 run --rw "$T_TMP/r:/r" -- sh -c 'echo ran >/r/ran; echo COMMAND-RAN'
	assert_eq 125 "$RC" "exit code (stderr: $ERR)"
	assert_contains "$ERR" "init: dropping capabilities: Operation not permitted" "message"
	assert_eq 1 "$(printf '%s\n' "$ERR" | wc -l)" "one line: $ERR"
	assert_not_contains "$OUT" "COMMAND-RAN" "stdout"
	[ ! -e "$T_TMP/r/ran" ] || fail "the command ran"
}

# With --cap-add, init keeps the caps until the command has them, then
# drops its own (the second capset): that failure is fatal too.
t_init_late_capability_drop_failure_is_fatal() {
	with_failing_capset 2 run --cap-add NET_BIND_SERVICE -- true
	assert_eq 125 "$RC" "exit code (stderr: $ERR)"
	assert_contains "$ERR" "init, after starting the command: dropping capabilities: Operation not permitted" "message"
}

# The "go" the supervisor sends once setup is done (it waits for one when
# the cgroup is attached after the clone, and for bwrap's --info-fd): if
# that send fails (other than the child having gone: EPIPE), the child
# would wait for it forever and the supervisor for the child. It is a
# setup error: one line, cloister's failure exit code, nothing left.
# Which sendmsg is the "go" depends on the caller (root sends the id maps
# first), so the first three are failed in turn.
failed_go() {  # exit-code cloister-args...
	command -v strace >/dev/null || skip "strace not installed (tests/deps.sh install)"
	local code=$1 n m seen=0 e=$T_TMP/err; shift
	for n in 1 2 3; do
		m=$(marker "go$n")
		# (Files, not $(...): a hung run would hold the pipe open.)
		timeout -s KILL "${GO_TIMEOUT:-60}" strace -f -qq -o /dev/null -e trace=sendmsg \
			-e "inject=sendmsg:error=ENOBUFS:when=$n" \
			"$CL" "$@" sh -c ": $m; echo COMMAND-RAN" >"$T_TMP/out" 2>"$e" 3>"$T_TMP/info"; RC=$?
		OUT=$(cat "$T_TMP/out") ERR=$(cat "$e")
		# (timeout kills strace; what it traced is the test's process
		# group's, which the runner kills after the test.)
		[ "$RC" != 137 ] || [ "$(printf '%s' "$ERR" | grep -c .)" != 0 ] ||
			fail "sendmsg #$n failing: cloister hung (killed after ${GO_TIMEOUT:-60} s)"
		assert_gone "$m"
		case $ERR in *"starting the sandbox's command (sync socket)"*)
			seen=1
			assert_eq "$code" "$RC" "exit code (stderr: $ERR)"
			assert_eq 1 "$(printf '%s\n' "$ERR" | wc -l)" "one line: $ERR"
			assert_not_contains "$OUT" "COMMAND-RAN" "stdout" ;;
		esac
	done
	[ $seen = 1 ] || fail "no failed sendmsg was the go message (last: rc $RC, $ERR)"
}
t_failed_go_message_bwrap_info_fd() { failed_go 1 bwrap --ro-bind / / --info-fd 3 --; }
if is_root; then
	t_failed_go_message_run_with_limits() { failed_go 125 run --memory 64m --; }
fi

run_tests
